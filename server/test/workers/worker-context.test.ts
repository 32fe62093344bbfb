/**
 * A background worker's run gets what its chat's turn gets (SPEC VIBE-2, CTX-1, CTX-3,
 * SKILL-1, SKILL-2, HARN-10): a real companion (`startServer`), the parent chat and its worker
 * on a stand-in HTTP server speaking the OpenAI-compatible wire, which records what each
 * request carried and refuses a prompt longer than its window with the provider's own error.
 */
import type {
  CompactionItem,
  ModelSettings,
  ToolCallItem,
  TranscriptItem,
  UsageItem,
  WorkerSummary
} from '@cellmate/protocol';
import { existsSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { profileOf } from '../../src/modes/profiles.js';
import type { CapabilityProfile } from '../../src/ports/vocabulary.js';
import type { ServerHandle } from '../../src/server.js';
import {
  declaredTools,
  systemPrompt,
  type StandInRequest,
  type StandInStep,
  type WireProvider
} from '../helpers/provider-stand-in.js';
import { closeStandInCompanions, startStandInCompanion, type StandInCompanion } from '../helpers/stand-in-companion.js';
import { tempDir } from '../helpers/temp.js';

afterEach(closeStandInCompanions);

type WireMessage = { role: string; content: unknown };
const messagesOf = (r: StandInRequest): WireMessage[] => r.body.messages as WireMessage[];
const isWorker = (r: StandInRequest): boolean =>
  systemPrompt('openai-compatible', r.body).includes('Background worker');
/** A summary request declares no tools (the compaction's own request). */
const isSummary = (r: StandInRequest): boolean => !Array.isArray(r.body.tools) || r.body.tools.length === 0;

/** Whether a request offers `skill`: declared in full, or in `tool_search`'s index of the tools it loads. */
function offersSkill(r: StandInRequest): boolean {
  const tools = declaredTools('openai-compatible', r.body);
  return tools.some((t) => t.name === 'skill' || t.description.includes('\n- skill: '));
}

/**
 * The parent chat's model: spawns one worker with `brief`, waits for it, then answers.
 * Its steps are told apart by how many answers of its own the request already holds.
 */
function parentStep(request: StandInRequest, brief: string): StandInStep {
  const messages = messagesOf(request);
  const answered = messages.filter((m) => m.role === 'assistant').length;
  if (answered === 0) return { toolCalls: [{ name: 'vibe_spawn', input: { brief, label: 'reader' } }] };
  if (answered === 1) {
    const spawned = JSON.stringify(messages.at(-1)!.content);
    const id = /worker_id: (w-\w+)/.exec(spawned)![1]!;
    return { toolCalls: [{ name: 'vibe_wait', input: { worker_id: id, timeout_seconds: 300 } }] };
  }
  return { text: 'The worker reported back.' };
}

/** A companion on `ws` whose model is a stand-in for `provider`; the person's home is `<ws>/home`. */
function companion(
  ws: string,
  respond: (r: StandInRequest) => StandInStep,
  { window, provider = 'openai-compatible' }: { window?: number; provider?: WireProvider } = {}
): Promise<StandInCompanion> {
  return startStandInCompanion(ws, provider, respond, {
    standIn: window ? { window } : {},
    env: { HOME: ws, CELLMATE_HOME: path.join(ws, 'home') }
  });
}

/** Spawns a worker as a turn on `profile` would (`vibe_spawn`'s port) and waits for it to end. */
async function spawnAndWait(
  s: ServerHandle,
  chatId: string,
  settings: ModelSettings,
  profile: CapabilityProfile = profileOf('agent')
): Promise<WorkerSummary> {
  const ctx = {
    workspace: s.workspace,
    signal: new AbortController().signal,
    actor: 'model' as const,
    chatId,
    profile,
    modelSettings: settings
  };
  const brief = { brief: 'Summarise the raw data.', label: 'summariser', tier: 'good' as const, shareKernel: false };
  const spawned = await s.workers!.spawn(ctx, { ...brief, context: [] });
  return (await s.workers!.wait(ctx, spawned.id, 60_000)).worker;
}

/** Runs one chat turn that spawns a worker and waits for it; returns the worker's transcript. */
async function runWorker(
  s: ServerHandle,
  settings: ModelSettings,
  sendContext?: { notebookPath: string }
): Promise<{ chatId: string; workerId: string; state: string; items: TranscriptItem[] }> {
  const chat = s.service.create();
  await s.service.send({
    chatId: chat.id,
    text: 'Have a worker go through the data.',
    settings,
    ...(sendContext ? { context: sendContext } : {})
  });
  await s.service.waitForTurn(chat.id);
  const [worker] = s.workers!.list(chat.id);
  expect(worker).toBeDefined();
  const { items } = s.workers!.transcript(chat.id, worker!.id, 10_000);
  return { chatId: chat.id, workerId: worker!.id, state: worker!.state, items };
}

describe('a worker keeps its requests inside the model window as its chat does (CTX-1, CTX-3, VIBE-2)', () => {
  it('CTX-3: a worker reading more than a 12k window holds finishes: every request fits, old outputs are pruned, the summary is read, and its transcript shows the compaction and the usage', async () => {
    const window = 12_000;
    const parts = 8;
    const ws = await tempDir();
    await mkdir(path.join(ws, 'data', 'raw'), { recursive: true });
    // About 8,000 characters (2,000 tokens) each: the eight outputs alone pass the window.
    for (let p = 0; p < parts; p++)
      await writeFile(
        path.join(ws, 'data', 'raw', `part-${p}.txt`),
        Array.from(
          { length: 140 },
          (_, i) => `part ${p} row ${i}\tHaifa\tsales ${(i * 7 + p) % 1000}\treturns ${i % 13}\tregular shipment`
        ).join('\n')
      );
    let reads = 0;
    const respond = (request: StandInRequest): StandInStep => {
      if (isSummary(request)) return { text: 'Summary: the worker is reading data/raw part by part.' };
      if (!isWorker(request)) return parentStep(request, `Read data/raw/part-0.txt to part-${parts - 1}.txt.`);
      // A note on each part as it goes (text no pruning removes), then the next part.
      if (reads < parts)
        return {
          text: `Notes on the part before: ${'the rows look regular; '.repeat(40)}`,
          toolCalls: [{ name: 'read', input: { path: `data/raw/part-${reads++}.txt` } }]
        };
      return { text: `Read all ${parts} parts.` };
    };
    const { server: s, standIn: wire } = await companion(ws, respond, { window });
    const worker = await runWorker(s, { ...wire.settings, contextWindow: window });

    expect(worker.state).toBe('done');
    const reads_ = worker.items.filter((i): i is ToolCallItem => i.kind === 'tool');
    expect(reads_.map((t) => t.status)).toEqual(Array(parts).fill('ok'));
    // Without a windowed view the run could not fit: its outputs alone are more than the window.
    const outputTokens = reads_.reduce((n, t) => n + (t.output ?? '').length, 0) / 4;
    expect(outputTokens).toBeGreaterThan(window);

    // What the worker's model was actually sent: nothing refused, every request inside the window.
    const sent = wire.requests.filter((r) => isWorker(r) || isSummary(r));
    expect(sent.filter((r) => r.overflow)).toEqual([]);
    for (const r of sent) expect(r.usage.promptTokens).toBeLessThanOrEqual(window);
    const workerSteps = wire.requests.filter(isWorker);
    expect(workerSteps).toHaveLength(parts + 1);
    const last = JSON.stringify(messagesOf(workerSteps.at(-1)!));
    // The summary leads the view, and an early output is a placeholder naming where the worker's full text was saved.
    expect(last).toContain('Context compacted by Cellmate');
    expect(last).toContain('Summary: the worker is reading data/raw part by part.');
    expect(last).toContain(`.cellmate/outputs/${worker.workerId}--pruned-`);
    expect(last).not.toContain('part 0 row 5\\tHaifa');
    expect(wire.requests.some(isSummary)).toBe(true);

    // The worker's own transcript (the pane's worker view) keeps the compaction card and the run's usage.
    const cards = worker.items.filter((i): i is CompactionItem => i.kind === 'compaction');
    expect(cards.length).toBeGreaterThan(0);
    expect(cards.some((c) => c.summarizedMessages > 0 && c.summary?.includes('reading data/raw'))).toBe(true);
    const usage = worker.items.filter((i): i is UsageItem => i.kind === 'usage');
    expect(usage).toHaveLength(1);
    expect(usage[0]!.requests).toBeGreaterThanOrEqual(parts + 1);
    // The parent chat's transcript has none of it: the worker's history is its own.
    expect(s.service.get(worker.chatId).items.some((i) => i.kind === 'compaction')).toBe(false);

    // The full outputs saved for the placeholders go with the chat.
    const outputs = path.join(ws, '.cellmate', 'outputs');
    const saved = async (): Promise<string[]> =>
      (await readdir(outputs).catch(() => [] as string[])).filter((n) => n.startsWith(`${worker.workerId}--`));
    expect((await saved()).length).toBeGreaterThan(0);
    await s.service.delete(worker.chatId);
    expect(await saved()).toEqual([]);
  }, 120_000);
});

const PYTHON = path.resolve(import.meta.dirname, '../../../.venv/bin/python');

describe.skipIf(!existsSync(PYTHON))("a worker's summary carries its own kernel's state (CTX-3)", () => {
  it("CTX-3: after a worker's analysis outgrows an 8k window, the summary it reads names the DataFrame in its private kernel", async () => {
    const window = 8_000;
    const ws = await tempDir();
    // The person's own policy file allows eval (a workspace's own allow rules apply only in a trusted workspace).
    await writeFile(
      path.join(ws, 'policy.json'),
      JSON.stringify({ rules: [{ tool: 'eval', pattern: '*', action: 'allow' }] })
    );
    const cells = [
      'import pandas as pd\ndf = pd.DataFrame({"city": ["Haifa", "Eilat", "Acre", "Safed"] * 50, "month": list(range(200)), "sales": [i * 7 % 1000 for i in range(200)], "returns": [i % 13 for i in range(200)]})\nprint(df.shape)',
      ...Array.from({ length: 5 }, () => 'print(df.head(120).to_string())')
    ];
    let ran = 0;
    const respond = (request: StandInRequest): StandInStep => {
      if (isSummary(request)) return { text: 'Summary: the worker is looking at the sales table.' };
      if (!isWorker(request)) return parentStep(request, 'Look at the sales table.');
      if (ran < cells.length)
        return {
          text: `Looking: ${'the months look regular; '.repeat(20)}`,
          toolCalls: [{ name: 'eval', input: { code: cells[ran++], description: 'Look at the sales table' } }]
        };
      return { text: 'Looked at it.' };
    };
    const { server: s, standIn: wire } = await startStandInCompanion(ws, 'openai-compatible', respond, {
      standIn: { window },
      env: { HOME: ws, CELLMATE_PYTHON: PYTHON, CELLMATE_POLICY: path.join(ws, 'policy.json') },
      kernels: true
    });
    const worker = await runWorker(s, { ...wire.settings, contextWindow: window });
    expect(worker.state).toBe('done');
    const evals = worker.items.filter((i): i is ToolCallItem => i.kind === 'tool');
    expect(evals.map((t) => t.status)).toEqual(Array(cells.length).fill('ok'));
    expect(wire.requests.filter((r) => r.overflow)).toEqual([]);
    const summarised = wire.requests.filter(
      (r) => isWorker(r) && JSON.stringify(messagesOf(r)).includes('Context compacted by Cellmate')
    );
    expect(summarised.length).toBeGreaterThan(0);
    expect(JSON.stringify(messagesOf(summarised.at(-1)!))).toMatch(
      /df: pandas\.DataFrame 200×4; columns \(4\): city, month, sales, returns/
    );
  }, 180_000);
});

describe('a worker caches its own prefix (CTX-2)', () => {
  it("CTX-2: on the OpenAI wire a worker's requests carry its own prompt_cache_key, not its chat's", async () => {
    const ws = await tempDir();
    await writeFile(path.join(ws, 'notes.txt'), 'rows: 200\n');
    const respond = (request: StandInRequest): StandInStep => {
      const input = request.body.input as Array<{ type?: string }>;
      if (!systemPrompt('openai', request.body).includes('Background worker')) return { text: 'Hello.' };
      return input.at(-1)!.type === 'function_call_output'
        ? { text: 'Done.' }
        : { toolCalls: [{ name: 'read', input: { path: 'notes.txt' } }] };
    };
    const { server: s, standIn: wire } = await companion(ws, respond, { provider: 'openai' });
    const chat = s.service.create();
    await s.service.send({ chatId: chat.id, text: 'Hello', settings: wire.settings });
    await s.service.waitForTurn(chat.id);
    const worker = await spawnAndWait(s, chat.id, wire.settings);
    expect(worker.state).toBe('done');
    const keys = (worker: boolean) =>
      wire.requests
        .filter((r) => systemPrompt('openai', r.body).includes('Background worker') === worker)
        .map((r) => r.body.prompt_cache_key);
    expect(keys(false)).toEqual([chat.id]);
    expect(keys(true)).toEqual([worker.id, worker.id]);
  }, 60_000);
});

describe("a worker's prompt carries its chat's instructions and skills (SKILL-1, SKILL-2, HARN-10)", () => {
  /** A workspace with instructions at the root and in the focused notebook's folder, and one installed skill. */
  async function workspace(): Promise<string> {
    const ws = await tempDir();
    await writeFile(path.join(ws, 'AGENTS.md'), 'Data lives in data/raw. Use polars.\n');
    await mkdir(path.join(ws, 'analysis'));
    await writeFile(path.join(ws, 'analysis', 'AGENTS.md'), 'Figures go to analysis/figures as SVG.\n');
    await writeFile(
      path.join(ws, 'analysis', 'report.ipynb'),
      JSON.stringify({ cells: [], metadata: {}, nbformat: 4, nbformat_minor: 5 })
    );
    const skill = path.join(ws, 'home', 'skills', 'polars-cleaning');
    await mkdir(skill, { recursive: true });
    await writeFile(
      path.join(skill, 'SKILL.md'),
      '---\nname: polars-cleaning\ndescription: Clean raw CSVs with polars.\n---\nBODY-POLARS: read with pl.read_csv.\n'
    );
    return ws;
  }

  it("SKILL-1, SKILL-2: the worker's first request has the instructions of its chat's focus and the installed skill's catalog entry", async () => {
    const ws = await workspace();
    const respond = (request: StandInRequest): StandInStep =>
      isWorker(request) ? { text: 'Done.' } : parentStep(request, 'Summarise the raw data.');
    const { server: s, standIn: wire } = await companion(ws, respond);
    const worker = await runWorker(s, wire.settings, { notebookPath: 'analysis/report.ipynb' });
    expect(worker.state).toBe('done');

    const first = wire.requests.find(isWorker)!;
    const system = systemPrompt('openai-compatible', first.body);
    expect(system).toContain('Data lives in data/raw. Use polars.');
    expect(system).toContain('Figures go to analysis/figures as SVG.'); // the focused notebook's folder
    // The very block the chat's own turns get for that focus.
    expect(system).toContain(s.service.instructions(worker.chatId).block!);
    expect(system).toContain('- polars-cleaning: Clean raw CSVs with polars.');
    expect(system).not.toContain('BODY-POLARS'); // only the catalog; the body is read on demand
    expect(offersSkill(first)).toBe(true);
    const parent = systemPrompt('openai-compatible', wire.requests.find((r) => !isWorker(r))!.body);
    expect(parent).toContain('- polars-cleaning: Clean raw CSVs with polars.');
  }, 60_000);

  it('SKILL-2: a worker whose surface has no `skill` gets the instructions but no skill catalog', async () => {
    const ws = await workspace();
    const respond = (): StandInStep => ({ text: 'Done.' });
    const { server: s, standIn: wire } = await companion(ws, respond);
    const chat = s.service.create();
    const agent = profileOf('agent');
    // The spawning turn's surface leaves `skill` out; the worker's is never wider.
    const worker = await spawnAndWait(s, chat.id, wire.settings, { ...agent, deny: [...(agent.deny ?? []), 'skill'] });
    expect(worker.state).toBe('done');

    const [request] = wire.requests;
    const system = systemPrompt('openai-compatible', request!.body);
    expect(system).toContain('Data lives in data/raw. Use polars.');
    expect(system).not.toContain('# Skills');
    expect(system).not.toContain('polars-cleaning');
    expect(offersSkill(request!)).toBe(false);
  }, 60_000);
});
