import { z } from 'zod';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool, type ToolContext, type ToolDefinition } from '../../gate/define-tool.js';
import type { AxisResult } from '../../modes/review/review.js';
import { nodeLine, reviewDisplay, verdictOf } from '../add_review_node/review-display.js';
import type { ReviewPort } from '../../modes/review/review-port.js';

export const finalizeReviewParameters = z.strictObject({
  summary: z
    .string({ error: 'must be a string: the review in two or three sentences' })
    .trim()
    .max(4_000, { error: 'must be at most 4000 characters' })
    .optional()
    .describe('The review in two or three sentences (optional).')
});

/**
 * The checks a verdict rests on (lint, type-check, tests), run by the companion itself —
 * never by the model through a shell: Review's surface stays below `exec` (MODE-4).
 * `server/src/flows/review-axes.ts` implements it.
 */
export interface ReviewAxesPort {
  /** Runs every axis over the changed files (workspace-relative); an axis that cannot run says `not-run` and why. */
  run(files: readonly string[], ctx: ToolContext): Promise<AxisResult[]>;
}

/**
 * `finalize_review` (SPEC MODE-4): runs the axes server-side and publishes Ship / Hold /
 * Block from the findings and the axes (`review.ts` `computeVerdict`: axes only make it
 * stricter — failed → Block, could not run → at least Hold). The verdict is durable and
 * follows later consensus: a finding the person approves afterwards updates it.
 */
export function createFinalizeReviewTool(
  reviews: ReviewPort,
  axes: ReviewAxesPort
): ToolDefinition<typeof finalizeReviewParameters> {
  return defineTool({
    name: 'finalize_review',
    tier: 'read',
    description: TOOL_DESCRIPTIONS.finalize_review,
    parameters: finalizeReviewParameters,
    examples: [
      {
        args: { summary: 'Two correctness bugs in the loader; the rest is clean.' },
        comment: 'after recording every finding'
      }
    ],
    actionClasses: ['read'],
    parallelSafe: false,
    // The tests axis may run a whole test suite (its own budget is CELLMATE_REVIEW_TEST_TIMEOUT_MS).
    timeoutMs: 30 * 60_000,
    async execute(args, ctx) {
      const before = reviews.current(ctx.chatId);
      const results = await axes.run(before.files, ctx);
      const review = reviews.finalize(ctx.chatId, results, args.summary);
      const verdict = verdictOf(review)!;
      const confirmed = review.nodes.filter((n) => n.state === 'consensusReady').length;
      const lines = [
        `Verdict: ${verdict.verdict} (review of ${review.label}).`,
        `Findings: ${review.nodes.length}${review.nodes.length ? ` (${confirmed} consensusReady, ${review.nodes.length - confirmed} open)` : ''}`,
        ...review.nodes.map((n) => `- ${nodeLine(n)}`),
        'Axes:',
        ...results.map((a) => `- ${a.axis}: ${a.status}${a.detail ? ` — ${a.detail}` : ''}`),
        verdict.reasons.length
          ? `Why ${verdict.verdict}: ${verdict.reasons.join('; ')}.`
          : 'Why Ship: no P0/P1 finding and every axis passed.',
        'The user sees the findings and the verdict in the pane; the verdict follows later approvals. End your turn with a short summary.'
      ];
      return {
        title: `review: ${verdict.verdict}`,
        output: lines.join('\n'),
        metadata: { reviewId: review.id, verdict: verdict.verdict },
        display: reviewDisplay(review)
      };
    }
  });
}
