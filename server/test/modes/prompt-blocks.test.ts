/**
 * Plan's and Review's prompt blocks, snapshot-tested (issue #16 acceptance): each lists
 * exactly the tools on its surface — the companion's built-in tools plus the mode tools —
 * and only the guidance whose tools are there. Plan and Orchestrate are built as the
 * companion composes them (plan tools and propose_orchestration, pinned on every surface,
 * MODE-6); Review's case belongs to the review work (its tools, its snapshot).
 */
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { OrchestrationStore } from '../../src/modes/orchestration-store.js';
import { profileOf } from '../../src/modes/profiles.js';
import { modePromptBlock } from '../../src/modes/prompt-block.js';
import { PlanStore } from '../../src/modes/plan-store.js';
import { Presence } from '../../src/questions/presence.js';
import { QuestionBroker } from '../../src/questions/question-broker.js';
import type { ToolDefinition } from '../../src/tools/define-tool.js';
import { createExitPlanModeTool } from '../../src/tools/exit_plan_mode/exit_plan_mode.js';
import { builtinTools } from '../../src/tools/index.js';
import { createProposeOrchestrationTool } from '../../src/tools/propose_orchestration/propose_orchestration.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { createSubmitPlanTool } from '../../src/tools/submit_plan/submit_plan.js';
import { tempDir } from '../helpers/temp.js';

async function modeRegistry(options: { orchestrate: boolean }): Promise<ToolRegistry> {
  const ws = await tempDir();
  const plans = new PlanStore(path.join(ws, 'plans'));
  const broker = new QuestionBroker({ sink: { publish: () => undefined }, presence: new Presence() });
  return new ToolRegistry([
    ...builtinTools({ questions: broker }),
    createSubmitPlanTool(plans) as unknown as ToolDefinition,
    createExitPlanModeTool(plans) as unknown as ToolDefinition,
    ...(options.orchestrate ? [createProposeOrchestrationTool(new OrchestrationStore(path.join(ws, 'orchestrations'))) as unknown as ToolDefinition] : [])
  ]);
}

async function checkBlock(registry: ToolRegistry, mode: 'plan' | 'review' | 'orchestrate'): Promise<void> {
  const profile = profileOf(mode);
  const surface = registry.list(profile);
  const block = modePromptBlock(profile, surface);
  const listed = [...block.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
  expect(listed).toEqual(surface.map((t) => t.name).sort());
  await expect(`${block}\n`).toMatchFileSnapshot(`__snapshots__/${mode}-prompt-block.md`);
}

describe('mode prompt blocks (MODE-2)', () => {
  it.each([['plan'], ['orchestrate']] as const)('%s block: exactly its surface', async (mode) => {
    await checkBlock(await modeRegistry({ orchestrate: true }), mode);
  });

  it('review block: exactly its surface', async () => {
    await checkBlock(await modeRegistry({ orchestrate: false }), 'review');
  });
});
