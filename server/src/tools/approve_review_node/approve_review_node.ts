import { z } from 'zod';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool, type ToolDefinition } from '../../gate/define-tool.js';
import { ToolInputError } from '../../base/tool-errors.js';
import { ReviewConsensusError } from '../../modes/review/review.js';
import { nodeLine, reviewDisplay, reviewerOf } from '../add_review_node/review-display.js';
import type { ReviewPort } from '../../modes/review/review-port.js';

export const approveReviewNodeParameters = z.strictObject({
  node_id: z
    .string({ error: 'must be a finding id such as "n2" (add_review_node returned it)' })
    .regex(/^n\d{1,6}$/, { error: 'must be a finding id such as "n2" (add_review_node returned it)' })
    .describe('The finding to approve, e.g. "n2".')
});

/**
 * `approve_review_node` (SPEC MODE-4): a peer confirms a finding, `open → consensusReady`.
 * The approver is the caller — a worker's id, `agent` for the chat's own agent, `user` for
 * the person's Approve button (`review/approve` calls this tool as actor `user`) — and the
 * finding's author approving it is refused with a message saying a peer must.
 */
export function createApproveReviewNodeTool(reviews: ReviewPort): ToolDefinition<typeof approveReviewNodeParameters> {
  return defineTool({
    name: 'approve_review_node',
    tier: 'read',
    description: TOOL_DESCRIPTIONS.approve_review_node,
    parameters: approveReviewNodeParameters,
    examples: [{ args: { node_id: 'n2' }, comment: "you checked another reviewer's finding n2 and agree with it" }],
    actionClasses: ['read'],
    parallelSafe: false,
    async execute(args, ctx) {
      const approver = reviewerOf(ctx);
      let approved;
      try {
        approved = reviews.approve(ctx.chatId, args.node_id, approver);
      } catch (error) {
        if (error instanceof ReviewConsensusError) {
          throw new ToolInputError(
            error.reason === 'self-approval'
              ? `${error.message} A peer must approve it: another reviewer (a worker) or the user in the Cellmate pane. Do not retry.`
              : error.message
          );
        }
        throw error;
      }
      const { review, node } = approved;
      return {
        title: `finding ${node.id}: consensus ready`,
        output: `Approved: finding ${nodeLine(node)} is consensusReady.`,
        metadata: { reviewId: review.id, nodeId: node.id, state: node.state },
        display: reviewDisplay(review, node.id)
      };
    }
  });
}
