/**
 * One profile per mode, three projections (SPEC MODE-2/2a/6/7, issue #16 item 1): the
 * surface the registry lists and declares, the gate that judges a forced call, and the
 * prompt block must name exactly the same tools, for every mode.
 */
import { CHAT_MODES, MODE_LABELS, SELECTABLE_MODES, type ChatMode } from '@cellmate/protocol';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { MODE_PROFILES, profileOf } from '../../src/modes/profiles.js';
import { modePromptBlock } from '../../src/modes/prompt-block.js';
import { turnSurface } from '../../src/modes/turn-surface.js';
import { WORLD_CHANGING_CLASSES } from '../../src/policy/action-classes.js';
import { PINNED_TOOLS } from '../../src/policy/profile.js';
import { Presence } from '../../src/questions/presence.js';
import { QuestionBroker } from '../../src/questions/question-broker.js';
import { declarations } from '../../src/gate/catalog.js';
import { defineTool, type ToolDefinition } from '../../src/gate/define-tool.js';
import { builtinTools } from '../../src/tools/index.js';
import { actionClassesOf, ToolRegistry } from '../../src/gate/registry.js';
import { OrchestrationStore } from '../../src/modes/orchestrate/orchestration-store.js';
import { createProposeOrchestrationTool } from '../../src/tools/propose_orchestration/propose_orchestration.js';
import { createToolSearchTool } from '../../src/tools/tool_search/tool_search.js';
import { CALL_TOOL } from '../../src/gate/call-tool.js';
import os from 'node:os';
import path from 'node:path';
import { tempDir } from '../helpers/temp.js';
import { createReviewAxes } from '../../src/flows/review-axes.js';
import { ReviewStore } from '../../src/modes/review/review-store.js';
import { createAddReviewNodeTool } from '../../src/tools/add_review_node/add_review_node.js';
import { createApproveReviewNodeTool } from '../../src/tools/approve_review_node/approve_review_node.js';
import { createFinalizeReviewTool } from '../../src/tools/finalize_review/finalize_review.js';

const broker = new QuestionBroker({ sink: { publish: () => undefined }, presence: new Presence() });

/** Stand-ins for mode tools that other modes' profiles name (their own tests cover them). */
const standIn = (
  name: string,
  tier: ToolDefinition['tier'],
  actionClasses?: ToolDefinition['actionClasses']
): ToolDefinition =>
  defineTool({
    name,
    tier,
    ...(actionClasses ? { actionClasses } : {}),
    description: `stand-in ${name}.`,
    parameters: z.object({ x: z.string() }),
    examples: [],
    execute: async () => ({ title: name, output: name })
  });

/** Review's real tools (nothing is written: the forced calls below fail validation first). */
function reviewTools(registry: () => ToolRegistry): ToolDefinition[] {
  const store = new ReviewStore(path.join(os.tmpdir(), `cellmate-profiles-test-${process.pid}`));
  return [
    createAddReviewNodeTool(store),
    createApproveReviewNodeTool(store),
    createFinalizeReviewTool(store, createReviewAxes({ registry, env: {} }))
  ];
}

/** Never written to: the real propose_orchestration only needs a store to exist. */
const orchestrations = new OrchestrationStore(path.join(os.tmpdir(), `cellmate-profiles-orch-${process.pid}`));

function fullRegistry(extra: ToolDefinition[] = [], options: { catalog?: boolean } = {}): ToolRegistry {
  let registry: ToolRegistry | undefined;
  const tools = [
    ...builtinTools({ questions: broker }),
    ...reviewTools(() => registry!),
    createProposeOrchestrationTool(orchestrations),
    ...extra
  ];
  const names = new Set(tools.map((t) => t.name));
  for (const t of [standIn('exit_plan_mode', 'read', ['ask-user']), standIn('submit_plan', 'read')])
    if (!names.has(t.name)) tools.push(t);
  registry = new ToolRegistry(tools);
  // As the companion composes it (tools/harness.ts): tools off a surface's fixed row are indexed by tool_search.
  if (options.catalog) registry.register(createToolSearchTool(registry));
  return registry;
}

/** The names the block's generated line lists. */
function blockNames(block: string): string[] {
  const line = block.split('\n').find((l) => l.startsWith("Tools on this mode's surface: "))!;
  return [...line.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
}

let chatSeq = 0;
const ctx = (workspace: string, mode: ChatMode) => ({
  // A fresh chat per call: the circuit breaker counts refusals per chat and turn.
  workspace,
  signal: new AbortController().signal,
  actor: 'model' as const,
  chatId: `c${chatSeq++}`,
  turnId: 't',
  profile: profileOf(mode)
});

/** Each mode's fixed row (declared in full; the rest of the surface is indexed by tool_search and called through call_tool). */
const FIXED: ReadonlyArray<[ChatMode, string[]]> = [
  ['agent', ['ask_user', 'read']],
  ['plan', ['ask_user', 'exit_plan_mode', 'submit_plan']],
  ['review', ['add_review_node', 'ask_user', 'finalize_review']],
  ['orchestrate', ['ask_user', 'propose_orchestration']]
];

describe('modes: one profile, three projections (MODE-2)', () => {
  it('the table covers every mode', () => {
    expect(FIXED.map(([m]) => m).sort()).toEqual([...CHAT_MODES].sort());
  });

  it.each(FIXED)(
    "%s: declared tools == what the gate lets the model call == the prompt block's tool line",
    async (mode, fixed) => {
      const ws = await tempDir();
      const registry = fullRegistry([], { catalog: true });
      const { profile, catalog, promptBlock } = turnSurface(registry, mode);
      expect(profile).toBe(MODE_PROFILES[mode]);
      const surface = registry
        .list(profile)
        .map((t) => t.name)
        .sort();
      // Prompt: exactly the surface.
      expect(blockNames(promptBlock)).toEqual(surface);
      // Declaration: the fixed row in full, every other surface tool in tool_search's index; nothing else.
      const declared = catalog.declared.map((d) => d.name).filter((n) => n !== CALL_TOOL);
      expect([...declared, ...catalog.deferred.map((t) => t.name)].sort()).toEqual(surface);
      const index = catalog.declared.find((d) => d.name === 'tool_search')!.description;
      for (const t of catalog.deferred) expect(index).toContain(`- ${t.name}: `);
      expect(declared.filter((n) => n !== 'tool_search').sort()).toEqual(fixed);
      expect(declarations(registry, profile)).toEqual(catalog.declared);
      // Guard: every registered tool, forced by the model with arguments no schema accepts, is refused iff it is off the surface.
      const letThrough: string[] = [];
      for (const tool of registry.list({ name: 'all', maxTier: 'exec' })) {
        const result = await registry.call(tool.name, null, ctx(ws, mode));
        expect(result.ok).toBe(false);
        if (result.output.startsWith('Refused:')) continue;
        expect(result.title).toBe(`${tool.name}: invalid arguments`);
        letThrough.push(tool.name);
      }
      expect(letThrough.sort()).toEqual(surface);
      // Pinned tools survive every filter (MODE-6).
      for (const pinned of PINNED_TOOLS) if (registry.get(pinned)) expect(surface).toContain(pinned);
      // Posture: a read-only mode has nothing world-changing on its surface (MODE-7).
      if (profile.worktree === 'read-only') {
        for (const t of registry.list(profile).filter((t) => !PINNED_TOOLS.has(t.name))) {
          expect({
            tool: t.name,
            classes: actionClassesOf(t).filter((c) => WORLD_CHANGING_CLASSES.includes(c))
          }).toEqual({ tool: t.name, classes: [] });
        }
      }
    }
  );

  it('the mode enum carries no policy: each profile is distinct data with the posture it declares', () => {
    expect(Object.keys(MODE_PROFILES).sort()).toEqual([...CHAT_MODES].sort());
    expect(MODE_PROFILES.agent).toMatchObject({
      name: 'agent',
      label: 'Agent',
      maxTier: 'exec',
      worktree: 'writable',
      selectable: true
    });
    expect(MODE_PROFILES.plan).toMatchObject({
      maxTier: 'read',
      worktree: 'read-only',
      artifact: 'submit_plan',
      selectable: true
    });
    expect(MODE_PROFILES.review).toMatchObject({
      maxTier: 'write',
      worktree: 'read-only',
      artifact: 'finalize_review',
      selectable: false
    });
    expect(MODE_PROFILES.orchestrate).toMatchObject({
      maxTier: 'read',
      worktree: 'read-only',
      artifact: 'propose_orchestration',
      selectable: true
    });
    // MODE-8: the composer offers exactly the selectable profiles, in the protocol's Shift+Tab order.
    expect(SELECTABLE_MODES).toEqual(CHAT_MODES.filter((m) => MODE_PROFILES[m].selectable));
    expect(SELECTABLE_MODES.map((m) => MODE_LABELS[m])).toEqual(['Agent', 'Plan', 'Orchestrate']);
    for (const p of Object.values(MODE_PROFILES)) {
      if (p.worktree === 'read-only')
        expect([...(p.refusedActionClasses ?? [])].sort()).toEqual([...WORLD_CHANGING_CLASSES].sort());
      else expect(p.refusedActionClasses ?? []).toEqual([]);
    }
    expect(() => profileOf('party' as ChatMode)).toThrow(
      /Unknown mode "party"; the modes are agent, plan, review, orchestrate/
    );
  });

  it("a mode's own tools are off every other mode's surface; Review's allowlist keeps read tools (MODE-2a)", () => {
    const registry = fullRegistry();
    const names = (mode: ChatMode) => registry.list(profileOf(mode)).map((t) => t.name);
    expect(names('agent')).not.toContain('exit_plan_mode');
    expect(names('agent')).not.toContain('add_review_node');
    expect(names('plan')).toContain('exit_plan_mode');
    expect(names('review')).toEqual(
      expect.arrayContaining(['add_review_node', 'approve_review_node', 'finalize_review', 'read', 'grep'])
    );
    for (const mode of ['agent', 'plan', 'orchestrate'] as const)
      expect(names(mode)).not.toContain('approve_review_node');
    expect(names('review')).not.toContain('edit');
    expect(names('agent')).toEqual(expect.arrayContaining(['write', 'edit', 'shell', 'submit_plan', 'ask_user']));
  });

  it("Plan refuses write, edit and shell with the registry's message, whoever forces them", async () => {
    const ws = await tempDir();
    const registry = fullRegistry();
    for (const actor of ['model', 'kernel', 'user'] as const) {
      const write = await registry.call('write', { path: 'x.txt', content: 'x' }, { ...ctx(ws, 'plan'), actor });
      expect(write.output).toBe(
        'Refused: write is a write-tier tool and the "plan" surface allows only read tools. It is not available here; do not retry it.'
      );
      const shell = await registry.call('shell', { command: 'touch pwned' }, { ...ctx(ws, 'plan'), actor });
      expect(shell.output).toBe(
        'Refused: shell is an exec-tier tool and the "plan" surface allows only read tools. It is not available here; do not retry it.'
      );
    }
  });

  it('the prompt block lists only what is on the surface: guidance naming an absent tool is left out', () => {
    const without = new ToolRegistry(builtinTools({ questions: broker }));
    const block = modePromptBlock(profileOf('plan'), without.list(profileOf('plan')));
    expect(block).not.toContain('submit_plan');
    expect(block).not.toContain('exit_plan_mode');
    expect(block).toContain('say so instead');
    const withPlan = fullRegistry();
    const full = modePromptBlock(profileOf('plan'), withPlan.list(profileOf('plan')));
    expect(full).toContain('with submit_plan');
    expect(full).toContain('call exit_plan_mode');
  });
});
