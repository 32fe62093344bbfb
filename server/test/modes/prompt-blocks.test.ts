/**
 * Plan's, Review's and Orchestrate's prompt blocks, snapshot-tested (issue #16 acceptance):
 * each lists exactly the tools on its surface — the companion's built-in tools plus every
 * mode's tools, as the companion composes them (each mode's own tools only on its own
 * surface; `submit_plan`, `propose_orchestration` and `ask_user` pinned on every one, MODE-6)
 * — and only the guidance whose tools are there.
 */
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { OrchestrationStore } from '../../src/modes/orchestrate/orchestration-store.js';
import { profileOf } from '../../src/modes/profiles.js';
import { modePromptBlock } from '../../src/modes/prompt-block.js';
import { PlanStore } from '../../src/modes/plan/plan-store.js';
import { createReviewAxes } from '../../src/flows/review-axes.js';
import { ReviewStore } from '../../src/modes/review/review-store.js';
import { Presence } from '../../src/questions/presence.js';
import { QuestionBroker } from '../../src/questions/question-broker.js';
import { createAddReviewNodeTool } from '../../src/tools/add_review_node/add_review_node.js';
import { createApproveReviewNodeTool } from '../../src/tools/approve_review_node/approve_review_node.js';
import { createExitPlanModeTool } from '../../src/tools/exit_plan_mode/exit_plan_mode.js';
import { createFinalizeReviewTool } from '../../src/tools/finalize_review/finalize_review.js';
import { builtinTools } from '../../src/tools/index.js';
import { createProposeOrchestrationTool } from '../../src/tools/propose_orchestration/propose_orchestration.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { createSubmitPlanTool } from '../../src/tools/submit_plan/submit_plan.js';
import { tempDir } from '../helpers/temp.js';

/** Each mode's own tools: on its surface, off every other mode's. */
const OWN = {
  plan: ['exit_plan_mode'],
  review: ['add_review_node', 'approve_review_node', 'finalize_review'],
  orchestrate: [] as string[]
};

describe('mode prompt blocks (MODE-2)', () => {
  it.each([['plan'], ['review'], ['orchestrate']] as const)('%s block: exactly its surface', async (mode) => {
    const ws = await tempDir();
    const plans = new PlanStore(path.join(ws, 'plans'));
    const reviews = new ReviewStore(path.join(ws, 'reviews'));
    const broker = new QuestionBroker({ sink: { publish: () => undefined }, presence: new Presence() });
    const registry: ToolRegistry = new ToolRegistry([
      ...builtinTools({ questions: broker }),
      createSubmitPlanTool(plans),
      createExitPlanModeTool(plans),
      createAddReviewNodeTool(reviews),
      createApproveReviewNodeTool(reviews),
      createFinalizeReviewTool(reviews, createReviewAxes({ registry: (): ToolRegistry => registry, env: {} })),
      createProposeOrchestrationTool(new OrchestrationStore(path.join(ws, 'orchestrations')))
    ]);
    const profile = profileOf(mode);
    const surface = registry.list(profile);
    const block = modePromptBlock(profile, surface);
    const listed = [...block.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    expect(listed).toEqual(surface.map((t) => t.name).sort());
    expect(listed).toEqual(expect.arrayContaining(['submit_plan', 'propose_orchestration', 'ask_user', ...OWN[mode]]));
    for (const [other, tools] of Object.entries(OWN))
      if (other !== mode) for (const t of tools) expect(listed).not.toContain(t);
    await expect(`${block}\n`).toMatchFileSnapshot(`__snapshots__/${mode}-prompt-block.md`);
  });
});
