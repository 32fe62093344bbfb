/**
 * Plan's and Review's prompt blocks, snapshot-tested (issue #16 acceptance): each lists
 * exactly the tools on its surface — the companion's built-in tools plus the plan tools —
 * and only the guidance whose tools are there.
 */
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { profileOf } from '../../src/modes/profiles.js';
import { modePromptBlock } from '../../src/modes/prompt-block.js';
import { PlanStore } from '../../src/modes/plan-store.js';
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
    const plans = new PlanStore(path.join(await tempDir(), 'plans'));
    const broker = new QuestionBroker({ sink: { publish: () => undefined }, presence: new Presence() });
    const registry = new ToolRegistry([
      ...builtinTools({ questions: broker }),
      createSubmitPlanTool(plans) as unknown as ToolDefinition,
      createExitPlanModeTool(plans) as unknown as ToolDefinition
    ]);
    const profile = profileOf(mode);
    const surface = registry.list(profile);
    const block = modePromptBlock(profile, surface);
    const listed = [...block.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    expect(listed).toEqual(surface.map((t) => t.name).sort());
    await expect(`${block}\n`).toMatchFileSnapshot(`__snapshots__/${mode}-prompt-block.md`);
  });
});
