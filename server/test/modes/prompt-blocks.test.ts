/**
 * Plan's and Review's prompt blocks, snapshot-tested (issue #16 acceptance): each lists
 * exactly the tools on its surface — the companion's built-in tools plus the plan and
 * review tools (each mode's own tools only on its own surface) — and only the guidance
 * whose tools are there.
 */
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { profileOf } from '../../src/modes/profiles.js';
import { modePromptBlock } from '../../src/modes/prompt-block.js';
import { PlanStore } from '../../src/modes/plan-store.js';
import { createReviewAxes } from '../../src/modes/review-axes.js';
import { ReviewStore } from '../../src/modes/review-store.js';
import { createAddReviewNodeTool } from '../../src/tools/add_review_node/add_review_node.js';
import { createApproveReviewNodeTool } from '../../src/tools/approve_review_node/approve_review_node.js';
import { createFinalizeReviewTool } from '../../src/tools/finalize_review/finalize_review.js';
import { Presence } from '../../src/questions/presence.js';
import { QuestionBroker } from '../../src/questions/question-broker.js';
import type { ToolDefinition } from '../../src/tools/define-tool.js';
import { createExitPlanModeTool } from '../../src/tools/exit_plan_mode/exit_plan_mode.js';
import { builtinTools } from '../../src/tools/index.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { createSubmitPlanTool } from '../../src/tools/submit_plan/submit_plan.js';
import { tempDir } from '../helpers/temp.js';

describe('mode prompt blocks (MODE-2)', () => {
  it.each([['plan'], ['review']] as const)('%s block: exactly its surface', async (mode) => {
    const ws = await tempDir();
    const plans = new PlanStore(path.join(ws, 'plans'));
    const reviews = new ReviewStore(path.join(ws, 'reviews'));
    const broker = new QuestionBroker({ sink: { publish: () => undefined }, presence: new Presence() });
    const registry: ToolRegistry = new ToolRegistry([
      ...builtinTools({ questions: broker }),
      createSubmitPlanTool(plans) as unknown as ToolDefinition,
      createExitPlanModeTool(plans) as unknown as ToolDefinition,
      createAddReviewNodeTool(reviews) as unknown as ToolDefinition,
      createApproveReviewNodeTool(reviews) as unknown as ToolDefinition,
      createFinalizeReviewTool(reviews, createReviewAxes({ registry: (): ToolRegistry => registry, env: {} })) as unknown as ToolDefinition
    ]);
    const profile = profileOf(mode);
    const surface = registry.list(profile);
    const block = modePromptBlock(profile, surface);
    const listed = [...block.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    expect(listed).toEqual(surface.map((t) => t.name).sort());
    // Each mode's own tools are on its surface and off the other's.
    const own = { plan: ['exit_plan_mode'], review: ['add_review_node', 'approve_review_node', 'finalize_review'] };
    const other = mode === 'plan' ? 'review' : 'plan';
    expect(listed).toEqual(expect.arrayContaining(own[mode]));
    for (const t of own[other]) expect(listed).not.toContain(t);
    await expect(`${block}\n`).toMatchFileSnapshot(`__snapshots__/${mode}-prompt-block.md`);
  });
});
