/**
 * The workers' pure parts and their tools' contract (SPEC VIBE-1…3, TIER-2, MODE-2/5,
 * HARN-1/5/11; issue #16 item 5): schemas as the model sees them, validation at the call
 * boundary, the worker surface (never wider than its parent's), the worker settings, the
 * catalog index, and a crash's running worker found `interrupted` by the next companion.
 */
import type { ModelSettings, WorkerSummary } from '@cellmate/protocol';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/config/logger.js';
import { profileOf } from '../../src/modes/profiles.js';
import { surfaceRefusal } from '../../src/policy/profile.js';
import type { CapabilityProfile } from '../../src/ports/vocabulary.js';
import { createToolSearchTool } from '../../src/tools/tool_search/tool_search.js';
import { surfaceCatalog } from '../../src/gate/catalog.js';
import type { ToolContext } from '../../src/gate/define-tool.js';
import { builtinTools, workerTools } from '../../src/tools/index.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import type { SpawnRequest, WorkerPort } from '../../src/tools/vibe_spawn/worker-port.js';
import { DEFAULT_WORKER_BUDGET, parseWorkerConfig } from '../../src/workers/worker-config.js';
import { INTERRUPTED_RESULT, WorkerStore, type WorkerRecord } from '../../src/workers/worker-store.js';
import { WORKER_DENIED_TOOLS, workerProfile } from '../../src/workers/worker-surface.js';
import { tempDir } from '../helpers/temp.js';

const VIBE = ['vibe_kill', 'vibe_list', 'vibe_send', 'vibe_spawn', 'vibe_wait'];

/** A port that records what the tools asked for (the tools' own behaviour is the service's, tested in workers.test.ts). */
function recordingPort(): WorkerPort & { spawned: SpawnRequest[] } {
  const summary = (id: string): WorkerSummary => ({
    id,
    chatId: 'c',
    label: 'l',
    tier: 'fast',
    state: 'running',
    createdAt: '',
    startedAt: '',
    elapsedMs: 1500,
    model: 'scripted/x',
    sharesKernel: false,
    toolCalls: 0
  });
  const spawned: SpawnRequest[] = [];
  return {
    spawned,
    spawn: async (_ctx, request) => {
      spawned.push(request);
      return summary('w-00000001');
    },
    send: async (_ctx, id) => summary(id),
    wait: async (_ctx, id) => ({ worker: summary(id), finished: false }),
    kill: async (_ctx, id) => ({ worker: { ...summary(id), state: 'killed' }, killed: true, kernelPids: [123] }),
    list: () => [summary('w-00000001')]
  };
}

const ctx = (profile: CapabilityProfile = profileOf('agent')): ToolContext => ({
  workspace: '/tmp',
  signal: new AbortController().signal,
  actor: 'model',
  chatId: 'c',
  profile
});

describe('the vibe_* tools as the model sees them (HARN-1, VIBE-1)', () => {
  const port = recordingPort();
  const registry = new ToolRegistry([...builtinTools(), ...workerTools(port)]);
  registry.register(createToolSearchTool(registry));
  for (const tool of workerTools(port)) {
    it(tool.name, async () => {
      const declared = {
        name: tool.name,
        tier: tool.tier,
        parameters: registry.inputJsonSchema(tool.name),
        description: registry.modelDescription(tool.name)
      };
      await expect(`${JSON.stringify(declared, null, 2)}\n`).toMatchFileSnapshot(
        `../tools/__schemas__/${tool.name}.json`
      );
      expect(tool.tier).toBe('read'); // VIBE-1: the gate is the worker's own tools'
      expect(tool.examples.length).toBeGreaterThanOrEqual(1);
      for (const example of tool.examples) expect(tool.parameters.safeParse(example.args).success).toBe(true);
      for (const part of [/When to use/, /cannot/, /Returns/, /Cost/]) expect(tool.description).toMatch(part);
    });
  }

  it('bad arguments are refused at the call boundary with what to fix (HARN-5)', async () => {
    const empty = await registry.call('vibe_spawn', { brief: '  ', label: 'x' }, ctx());
    expect(empty.ok).toBe(false);
    expect(empty.output).toMatch(/^Invalid arguments for vibe_spawn: .*brief.*must not be empty/s);
    const tier = await registry.call('vibe_spawn', { brief: 'b', label: 'x', tier: 'medium' }, ctx());
    expect(tier.output).toContain(
      'must be "fast" (mechanical work with a clear spec) or "good" (design, judgement, reviewing)'
    );
    const extra = await registry.call('vibe_wait', { worker_id: 'w-1', timeout_seconds: 601 }, ctx());
    expect(extra.output).toContain('must be at most 600; call vibe_wait again to wait longer');
    const unknownKey = await registry.call('vibe_kill', { worker_id: 'w-1', force: true }, ctx());
    expect(unknownKey.output).toMatch(/force/);
    expect(port.spawned).toEqual([]);
  });

  it('spawn passes the labelled context and defaults on; the first line of its result is the worker_id (cells split it)', async () => {
    const r = await registry.call(
      'vibe_spawn',
      { brief: 'Do it.', label: 'doer', context: [{ from: 'tool-result', text: 'data', origin: 'read x' }] },
      ctx()
    );
    expect(r.ok).toBe(true);
    expect(r.output.split('\n')[0]).toBe('worker_id: w-00000001');
    expect(r.output.split(/\s+/)[1]).toBe('w-00000001'); // what a cell's .split()[1] takes
    expect(port.spawned.at(-1)).toEqual({
      brief: 'Do it.',
      label: 'doer',
      tier: 'fast',
      shareKernel: false,
      context: [{ from: 'tool-result', text: 'data', origin: 'read x' }]
    });
    const wait = await registry.call('vibe_wait', { worker_id: 'w-00000001', timeout_seconds: 0 }, ctx());
    expect(wait.output).toMatch(
      /^Still running: w-00000001 "l" — fast tier \(scripted\/x\), running, 1\.5 s, 0 tool calls\./
    );
    const kill = await registry.call('vibe_kill', { worker_id: 'w-00000001' }, ctx());
    expect(kill.output).toContain('Its kernel (pid 123) was shut down.');
  });

  it("every vibe_* tool is in the catalog index (HARN-11): on Agent and Plan surfaces, but not Orchestrate's spawn/send (MODE-5)", () => {
    for (const mode of ['agent', 'plan'] as const) {
      const catalog = surfaceCatalog(registry, profileOf(mode));
      expect(
        catalog.deferred
          .map((t) => t.name)
          .filter((n) => n.startsWith('vibe_'))
          .sort()
      ).toEqual(VIBE);
      const index = catalog.declared.find((d) => d.name === 'tool_search')!.description;
      expect(index).toContain('- vibe_spawn: Start a background worker (sub-agent) on one task\n');
      expect(index).toContain("- vibe_wait: Wait (bounded) for a background worker's result");
    }
    const orchestrate = registry
      .list(profileOf('orchestrate'))
      .map((t) => t.name)
      .filter((n) => n.startsWith('vibe_'))
      .sort();
    expect(orchestrate).toEqual(['vibe_kill', 'vibe_list', 'vibe_wait']);
  });

  it('tool_search finds them by what they do', async () => {
    const r = await registry.call('tool_search', { query: 'background worker' }, ctx());
    expect(r.output.split('\n')[0]).toMatch(/vibe_/);
  });
});

describe("a worker's surface: its parent's, narrowed (TIER-2, MODE-2)", () => {
  const registry = new ToolRegistry([...builtinTools(), ...workerTools(recordingPort())]);
  const names = (profile: ReturnType<typeof workerProfile>) => registry.list(profile).map((t) => t.name);

  it.each([
    ['agent', undefined, 'exec'],
    ['agent', 'write', 'write'],
    ['agent', 'read', 'read'],
    ['plan', undefined, 'read'],
    ['plan', 'exec', 'read'], // never widened: a Plan chat's worker is read-only whatever it asks
    ['review', 'exec', 'write']
  ] as const)('%s chat, access %s → max tier %s', (mode, access, tier) => {
    const profile = workerProfile(profileOf(mode), access);
    expect(profile.maxTier).toBe(tier);
    expect(profile.name).toBe(`${profileOf(mode).name}/worker`);
    for (const denied of WORKER_DENIED_TOOLS) expect(names(profile)).not.toContain(denied);
  });

  it("a Plan chat's worker sees no write or exec tool, and the registry refuses a forced write with its message", async () => {
    const profile = workerProfile(profileOf('plan'), 'exec');
    const tiers = registry.list(profile).map((t) => t.tier);
    expect(new Set(tiers)).toEqual(new Set(['read']));
    const r = await registry.call(
      'write',
      { path: 'x.txt', content: 'x' },
      { ...ctx(profile), worker: { id: 'w-1', label: 'l' } }
    );
    expect(r.output).toBe(surfaceRefusal({ name: 'write', tier: 'write', actionClasses: ['write-file'] }, profile));
    expect(r.output).toBe(
      'Refused: write is a write-tier tool and the "plan/worker" surface allows only read tools. It is not available here; do not retry it.'
    );
  });

  it("keeps the parent's allowlist and refused action classes", () => {
    const review = workerProfile(profileOf('review'));
    expect(review.allow).toEqual(profileOf('review').allow);
    expect(review.refusedActionClasses).toEqual(profileOf('review').refusedActionClasses);
  });
});

describe('worker settings (VIBE-3)', () => {
  const fast: ModelSettings = { provider: 'openai', model: 'gpt-4.1-mini' };
  it('defaults without a section; tiers, budget and the running cap from it', () => {
    expect(parseWorkerConfig({ apiKeys: {} })).toEqual({ tiers: {}, budget: DEFAULT_WORKER_BUDGET, maxRunning: 4 });
    const c = parseWorkerConfig({
      workers: { tiers: { fast }, maxSteps: 5, maxToolCalls: 9, maxMinutes: 0.5, maxRunning: 2 }
    });
    expect(c).toEqual({ tiers: { fast }, budget: { maxSteps: 5, maxToolCalls: 9, maxMs: 30_000 }, maxRunning: 2 });
  });
  it('a bad section is ignored with a message naming the field', () => {
    const c = parseWorkerConfig(
      { workers: { tiers: { fast: { provider: 'nope', model: 'x' } } } },
      '/home/u/.cellmate/config.json'
    );
    expect(c.tiers).toEqual({});
    expect(c.problem).toMatch(
      /^the "workers" section of \/home\/u\/\.cellmate\/config\.json is ignored: tiers\.fast\.provider: /
    );
    expect(parseWorkerConfig({ workers: { maxSteps: 0 } }).problem).toMatch(/maxSteps/);
  });
});

describe('WorkerStore: a crash never loses a worker', () => {
  it('a worker left running by a killed companion is interrupted on the next open, with its transcript and a notice', async () => {
    const dir = path.join(await tempDir(), 'workers');
    const first = await WorkerStore.open(dir, silentLogger);
    const now = new Date().toISOString();
    const record: WorkerRecord = {
      id: 'w-abcdef01',
      chatId: 'chat-1',
      label: 'crashy',
      tier: 'good',
      state: 'running',
      createdAt: now,
      startedAt: now,
      settings: { provider: 'scripted', model: 'x' },
      sharesKernel: false,
      toolCalls: 2,
      surface: workerProfile(profileOf('agent')),
      parentMode: 'agent'
    };
    first.transcripts.create({
      chat: {
        id: record.id,
        title: 'crashy',
        mode: 'agent',
        createdAt: now,
        updatedAt: now,
        items: [],
        running: false
      },
      titleSource: 'user',
      messages: []
    });
    first.transcripts.applyEvent(record.id, { type: 'turn-started', turnId: 't1' });
    first.transcripts.applyEvent(record.id, {
      type: 'item-added',
      item: { kind: 'user', id: 'u1', time: now, turnId: 't1', text: 'the brief' }
    });
    first.put(record);
    // No dispose: the process died here. A second companion opens the same files.
    const second = await WorkerStore.open(dir, silentLogger);
    const after = second.get(record.id)!;
    expect(after.state).toBe('interrupted');
    expect(after.lastResult).toBe(INTERRUPTED_RESULT);
    expect(after.endedAt).toBeDefined();
    const items = second.transcripts.get(record.id)!.chat.items;
    expect(items.map((i) => i.kind)).toEqual(['user', 'notice']);
    expect(second.transcripts.get(record.id)!.chat.running).toBe(false);
    await second.dispose();
    await first.dispose();
  });
});
