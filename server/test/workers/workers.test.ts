/**
 * Background workers end to end in the companion (SPEC VIBE-1…3, EVAL-6, MODE-2, HARN-10;
 * issue #16 item 5 and its acceptance): a real companion (`startServer` on a Unix socket, a
 * JSON-RPC client as the pane), real ipykernel kernels, the scripted provider for the parent
 * chat and for each worker tier.
 */
import type { ChatEvent, QuestionItem, ToolCallItem, TranscriptItem, WorkerSummary } from '@cellmate/protocol';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/config/logger.js';
import { profileOf } from '../../src/modes/profiles.js';
import { startServer, type ServerHandle } from '../../src/server.js';
import { connectClient, type TestClient } from '../helpers/rpc-client.js';
import { tempDir } from '../helpers/temp.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const PYTHON = path.join(REPO, '.venv', 'bin', 'python');

/** Whether a process runs (a zombie does not count: it has exited). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Setup {
  ws: string;
  server: ServerHandle;
  client: TestClient;
  request<T>(method: string, params: unknown): Promise<T>;
}

const opened: Setup[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) {
    s.client.close();
    await s.server.dispose();
  }
});

/** A companion on a fresh workspace with worker tiers configured to scripts, and an interactive client. */
async function setup(
  scripts: Record<string, unknown>,
  tiers: Record<string, string>,
  extra: { evalIdleTimeoutMs?: number; workersConfig?: Record<string, unknown>; ws?: string } = {}
): Promise<Setup> {
  const ws = extra.ws ?? (await tempDir());
  for (const [name, script] of Object.entries(scripts)) await writeFile(path.join(ws, name), JSON.stringify(script));
  const config = path.join(ws, 'config.json');
  await writeFile(
    config,
    JSON.stringify({
      workers: {
        tiers: Object.fromEntries(
          Object.entries(tiers).map(([tier, script]) => [
            tier,
            { provider: 'scripted', model: `${tier}-model`, scriptPath: script }
          ])
        ),
        ...extra.workersConfig
      }
    })
  );
  // The person's own policy file allows eval (a workspace's own allow rules apply only in a trusted workspace).
  await writeFile(
    path.join(ws, 'home-policy.json'),
    JSON.stringify({ rules: [{ tool: 'eval', pattern: '*', action: 'allow' }] })
  );
  const env = {
    PATH: process.env.PATH,
    HOME: ws,
    CELLMATE_CONFIG: config,
    CELLMATE_POLICY: path.join(ws, 'home-policy.json'),
    CELLMATE_PYTHON: PYTHON
  };
  const server = await startServer({
    workspace: ws,
    socketPath: path.join(ws, 's.sock'),
    env,
    logger: silentLogger,
    maxRetries: 0,
    ...(extra.evalIdleTimeoutMs ? { evalIdleTimeoutMs: extra.evalIdleTimeoutMs } : {})
  });
  const client = await connectClient(server.socketPath!);
  const request = <T>(method: string, params: unknown) => client.connection.sendRequest(method, params) as Promise<T>;
  await request('cellmate/hello', { protocolVersion: 1, interactive: true });
  const s = { ws, server, client, request };
  opened.push(s);
  return s;
}

const parentModel = (script: string) => ({ provider: 'scripted', model: 'parent', scriptPath: script });

/** The worker-updated events for one worker. */
const updates = (client: TestClient, workerId: string): WorkerSummary[] =>
  client.events
    .map((e) => e.event)
    .filter(
      (e): e is Extract<ChatEvent, { type: 'worker-updated' }> =>
        e.type === 'worker-updated' && e.worker.id === workerId
    )
    .map((e) => e.worker);

const toolItems = (items: TranscriptItem[]): ToolCallItem[] =>
  items.filter((i): i is ToolCallItem => i.kind === 'tool');

describe.skipIf(!existsSync(PYTHON))('background workers (VIBE-1…3) with real kernels', () => {
  it("two workers spawned from a cell run concurrently in kernels of their own; vibe_wait pauses the cell's idle budget; kill and chat deletion leave no kernel", async () => {
    // Each worker: one eval that works 2.5 s (printing, so its own 1 s idle budget holds) and prints its kernel's pid.
    const worker = {
      steps: [
        {
          toolCalls: [
            {
              toolName: 'eval',
              input: {
                code: 'import os, time\nfor i in range(10):\n    time.sleep(0.25)\n    print(i, flush=True)\nprint("pid", os.getpid())',
                description: 'work a while and report the kernel pid'
              }
            }
          ],
          chunkDelayMs: 0
        },
        { text: 'finished sleeping', chunkDelayMs: 0 }
      ]
    };
    const cell = [
      'import os',
      'a = tool("vibe_spawn", {"brief": "Sleep, then report.", "label": "alpha"}).split()[1]',
      'b = tool("vibe_spawn", {"brief": "Sleep, then report.", "label": "beta"}).split()[1]',
      // The idle budget is 1 s; each wait lasts longer (a kernel start plus 2.5 s of sleep).
      'ra = tool("vibe_wait", {"worker_id": a, "timeout_seconds": 120})',
      'rb = tool("vibe_wait", {"worker_id": b, "timeout_seconds": 120})',
      'print("parent", os.getpid(), a, b)',
      'print(ra)',
      'print(rb)'
    ].join('\n');
    const parent = {
      turns: [
        [
          {
            toolCalls: [{ toolName: 'eval', input: { code: cell, description: 'fan out to two workers and wait' } }],
            chunkDelayMs: 0
          },
          // The control: the same 1 s budget interrupts a cell that is silent for 2.5 s without a bridge call.
          {
            toolCalls: [
              {
                toolName: 'eval',
                input: { code: 'import time\ntime.sleep(2.5)', description: 'a silent cell past its idle budget' }
              }
            ],
            chunkDelayMs: 0
          },
          { text: 'both done', chunkDelayMs: 0 }
        ]
      ]
    };
    const s = await setup(
      { 'parent.json': parent, 'worker.json': worker },
      { fast: 'worker.json' },
      { evalIdleTimeoutMs: 1_000 }
    );
    const chat = await s.request<{ id: string }>('chat/create', {});
    await s.request('chat/send', { chatId: chat.id, text: 'fan out', model: parentModel('parent.json') });
    await s.client.turnEnded(chat.id);

    const transcript = await s.request<{ items: TranscriptItem[] }>('chat/get', { chatId: chat.id });
    const [fanOut, control] = toolItems(transcript.items);
    expect(fanOut!.status).toBe('ok');
    expect(fanOut!.output).not.toMatch(/idle|Interrupted/i);
    const [, parentPid, idA, idB] = /parent (\d+) (w-\w+) (w-\w+)/.exec(fanOut!.output!)!;
    expect(fanOut!.output).toMatch(
      new RegExp(
        `${idA} "alpha" — fast tier \\(scripted/fast-model\\), done, [\\d.]+ s, 1 tool call\\.\\nResult:\\nfinished sleeping`
      )
    );
    expect(fanOut!.output).toContain(`${idB} "beta" — fast tier`);
    // The control cell was interrupted by the same budget, so the budget was live (EVAL-6).
    expect(control!.output).toMatch(/idle/i);

    const workers = await s.request<WorkerSummary[]>('worker/list', { chatId: chat.id });
    expect(workers.map((w) => [w.label, w.tier, w.state, w.sharesKernel])).toEqual([
      ['alpha', 'fast', 'done', false],
      ['beta', 'fast', 'done', false]
    ]);
    const spans = await Promise.all(
      [idA!, idB!].map(async (id) => {
        const { items } = await s.request<{ items: TranscriptItem[] }>('worker/get', { chatId: chat.id, workerId: id });
        const call = toolItems(items)[0]!;
        expect(call.status).toBe('ok');
        expect(call.output).toContain(`[python · python3 kernel private to worker ${id}]`);
        const pid = Number(/pid (\d+)/.exec(call.output!)![1]);
        return { id, start: Date.parse(call.time), end: Date.parse(call.time) + call.durationMs!, pid };
      })
    );
    const [a, b] = spans as [(typeof spans)[0], (typeof spans)[0]];
    // Concurrent: each worker's eval started before the other's ended (each took ≥ 2.5 s).
    expect(a.end - a.start).toBeGreaterThanOrEqual(2_500);
    expect(a.start).toBeLessThan(b.end);
    expect(b.start).toBeLessThan(a.end);
    // Three kernels: the chat's and one private kernel per worker.
    expect(new Set([a.pid, b.pid, Number(parentPid)]).size).toBe(3);
    expect(alive(a.pid) && alive(b.pid) && alive(Number(parentPid))).toBe(true);

    // The person kills alpha from the workers list: its kernel is gone, beta's still runs.
    const killed = await s.request<{ killed: boolean; message: string }>('worker/kill', {
      chatId: chat.id,
      workerId: a.id
    });
    expect(killed.killed).toBe(true);
    expect(killed.message).toContain(`pid ${a.pid}`);
    expect(alive(a.pid)).toBe(false);
    expect(alive(b.pid)).toBe(true);
    expect(updates(s.client, a.id).at(-1)?.state).toBe('killed');
    // The kill is an audited call of vibe_kill by the person.
    await s.server.audit.flush();

    // Deleting the chat leaves no process behind: beta's kernel and the chat's own are gone.
    await s.request('chat/delete', { chatId: chat.id });
    await until('kernels to exit', () => !alive(b.pid) && !alive(Number(parentPid)));
    expect(s.server.workers!.list(chat.id)).toEqual([]);
    const index = JSON.parse(readFileSync(path.join(s.ws, '.cellmate', 'workers', 'workers.json'), 'utf8')) as {
      workers: unknown[];
    };
    expect(index.workers).toEqual([]);
    expect(existsSync(path.join(s.ws, '.cellmate', 'workers', 'transcripts', `${b.id}.jsonl`))).toBe(false);
  }, 120_000);

  it('vibe_kill of a running worker aborts its run and frees its kernel (pid gone)', async () => {
    const worker = {
      steps: [
        {
          toolCalls: [
            {
              toolName: 'eval',
              input: {
                code: 'import os, time\nprint("pid", os.getpid(), flush=True)\ntime.sleep(60)',
                description: 'report the pid, then sleep long'
              }
            }
          ],
          chunkDelayMs: 0
        }
      ]
    };
    const parent = {
      turns: [
        [
          {
            toolCalls: [{ toolName: 'vibe_spawn', input: { brief: 'Sleep long.', label: 'sleeper' } }],
            chunkDelayMs: 0
          },
          { text: 'spawned', chunkDelayMs: 0 }
        ]
      ]
    };
    const s = await setup({ 'parent.json': parent, 'worker.json': worker }, { fast: 'worker.json' });
    const chat = await s.request<{ id: string }>('chat/create', {});
    await s.request('chat/send', { chatId: chat.id, text: 'go', model: parentModel('parent.json') });
    await s.client.turnEnded(chat.id);
    const [w] = await s.request<WorkerSummary[]>('worker/list', { chatId: chat.id });
    expect(w!.state).toBe('running');
    // The pid is printed while the cell runs: the kernel manager knows it as the worker's private kernel.
    const pid = await until(
      'the worker kernel',
      () => s.server.kernels?.privateKernels().find((k) => k.chatId === w!.id)?.pid
    );
    expect(alive(pid)).toBe(true);
    const result = await s.server.registry.call(
      'vibe_kill',
      { worker_id: w!.id },
      { workspace: s.ws, signal: new AbortController().signal, actor: 'model', chatId: chat.id }
    );
    expect(result.ok).toBe(true);
    expect(result.output).toContain(`Killed ${w!.id} "sleeper"`);
    expect(result.output).toContain(`Its kernel (pid ${pid}) was shut down.`);
    expect(alive(pid)).toBe(false);
    const after = s.server.workers!.list(chat.id)[0]!;
    expect(after.state).toBe('killed');
    const again = await s.server.registry.call(
      'vibe_wait',
      { worker_id: w!.id, timeout_seconds: 0 },
      { workspace: s.ws, signal: new AbortController().signal, actor: 'model', chatId: chat.id }
    );
    expect(again.output).toContain('killed');
  }, 90_000);
});

describe("workers and the chat's mode (MODE-2), approvals (HARN-6) and restarts", () => {
  it("a worker of a Plan chat that forces write is refused with the registry's message; in an Agent chat its approval card names it", async () => {
    const writer = {
      steps: [
        { toolCalls: [{ toolName: 'write', input: { path: 'x.txt', content: 'x' } }], chunkDelayMs: 0 },
        { text: 'tried to write', chunkDelayMs: 0 }
      ]
    };
    const parent = {
      steps: [
        {
          toolCalls: [
            { toolName: 'vibe_spawn', input: { brief: 'Write x.txt.', label: 'writer', tier: 'good', access: 'exec' } }
          ],
          chunkDelayMs: 0
        },
        { text: 'spawned', chunkDelayMs: 0 }
      ]
    };
    const s = await setup({ 'parent.json': parent, 'writer.json': writer }, { good: 'writer.json' });

    const plan = await s.request<{ id: string }>('chat/create', {});
    await s.request('chat/set-mode', { chatId: plan.id, mode: 'plan' });
    await s.request('chat/send', { chatId: plan.id, text: 'plan it', model: parentModel('parent.json') });
    await s.client.turnEnded(plan.id);
    const spawnCard = toolItems(
      (await s.request<{ items: TranscriptItem[] }>('chat/get', { chatId: plan.id })).items
    )[0]!;
    expect(spawnCard.status).toBe('ok'); // vibe_spawn is read tier (VIBE-1): on Plan's surface
    const planWorker = (await s.request<WorkerSummary[]>('worker/list', { chatId: plan.id }))[0]!;
    await until('the plan worker to finish', () => s.server.workers!.list(plan.id)[0]?.state === 'done');
    const { items } = await s.request<{ items: TranscriptItem[] }>('worker/get', {
      chatId: plan.id,
      workerId: planWorker.id
    });
    const write = toolItems(items)[0]!;
    expect(write.status).toBe('error');
    expect(write.output).toBe(
      'Refused: write is a write-tier tool and the "plan/worker" surface allows only read tools. It is not available here; do not retry it.'
    );
    expect(existsSync(path.join(s.ws, 'x.txt'))).toBe(false);

    // An Agent chat's worker may write, after approval: the card in the chat names the worker.
    const agent = await s.request<{ id: string }>('chat/create', {});
    const cards: QuestionItem[] = [];
    s.client.onEvent(({ chatId, event }) => {
      if (chatId !== agent.id || event.type !== 'item-added' || event.item.kind !== 'question') return;
      cards.push(event.item);
      void s.request('chat/answer', {
        chatId,
        questionId: event.item.questionId,
        answer: { action: 'answer', selected: [2], text: 'not now' }
      });
    });
    await s.request('chat/send', { chatId: agent.id, text: 'do it', model: parentModel('parent.json') });
    await s.client.turnEnded(agent.id);
    const agentWorker = (await s.request<WorkerSummary[]>('worker/list', { chatId: agent.id }))[0]!;
    await until('the agent worker to finish', () => s.server.workers!.list(agent.id)[0]?.state === 'done');
    expect(cards).toHaveLength(1);
    expect(cards[0]!.question).toBe(`Worker "writer" (${agentWorker.id}): it wants to run write. Allow it?`);
    expect(cards[0]!.approval?.worker).toEqual({ id: agentWorker.id, label: 'writer' });
    const denied = toolItems(
      (await s.request<{ items: TranscriptItem[] }>('worker/get', { chatId: agent.id, workerId: agentWorker.id })).items
    )[0]!;
    expect(denied.output).toContain('Denied by the user: write was not run. Their reason: not now');
    expect(existsSync(path.join(s.ws, 'x.txt'))).toBe(false);
    // The audit trail names the worker (HARN-7).
    await s.server.audit.flush();
    const audit = readFileSync(path.join(s.ws, '.cellmate', 'audit', `${agent.id}.jsonl`), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { tool: string; worker?: string });
    expect(audit.find((e) => e.tool === 'write')?.worker).toBe(agentWorker.id);
  }, 60_000);

  it("SIDE-1: with Auto on in the chat (chat/set-auto), a worker's call is reviewed like the chat's own: cleared, no card, its card says so", async () => {
    const writer = {
      steps: [
        { toolCalls: [{ toolName: 'write', input: { path: 'notes/w.md', content: 'w' } }], chunkDelayMs: 0 },
        { text: 'wrote it', chunkDelayMs: 0 }
      ],
      sidecar: [{ tool: 'write', subject: 'notes/', verdict: 'allow', reason: 'a note inside the project' }]
    };
    const parent = {
      steps: [
        {
          toolCalls: [
            {
              toolName: 'vibe_spawn',
              input: { brief: 'Write notes/w.md.', label: 'writer', tier: 'good', access: 'exec' }
            }
          ],
          chunkDelayMs: 0
        },
        { text: 'spawned', chunkDelayMs: 0 }
      ]
    };
    const s = await setup({ 'parent.json': parent, 'writer.json': writer }, { good: 'writer.json' });
    const chat = await s.request<{ id: string }>('chat/create', {});
    expect(await s.request('chat/set-auto', { chatId: chat.id, auto: true })).toMatchObject({
      id: chat.id,
      auto: true
    });
    const cards: QuestionItem[] = [];
    s.client.onEvent(({ chatId, event }) => {
      if (chatId === chat.id && event.type === 'item-added' && event.item.kind === 'question') cards.push(event.item);
    });
    await s.request('chat/send', { chatId: chat.id, text: 'do it', model: parentModel('parent.json') });
    await s.client.turnEnded(chat.id);
    const worker = (await s.request<WorkerSummary[]>('worker/list', { chatId: chat.id }))[0]!;
    await until('the worker to finish', () => s.server.workers!.list(chat.id)[0]?.state === 'done');
    expect(cards).toHaveLength(0);
    expect(readFileSync(path.join(s.ws, 'notes/w.md'), 'utf8')).toBe('w');
    const write = toolItems(
      (await s.request<{ items: TranscriptItem[] }>('worker/get', { chatId: chat.id, workerId: worker.id })).items
    )[0]!;
    expect(write).toMatchObject({
      status: 'ok',
      review: { state: 'auto-approved', reason: 'a note inside the project' }
    });
  }, 60_000);

  it('a worker never has more than its chat has now: spawned in Agent mode, it writes; once the chat is in Plan mode, vibe_send cannot make it write', async () => {
    const write = (content: string) => [
      { toolCalls: [{ toolName: 'write', input: { path: 'x.txt', content } }], chunkDelayMs: 0 },
      { text: `wrote ${content}`, chunkDelayMs: 0 }
    ];
    const worker = { turns: [[{ text: 'ready', chunkDelayMs: 0 }], write('agent'), write('plan')] };
    const parent = {
      steps: [
        {
          toolCalls: [
            { toolName: 'vibe_spawn', input: { brief: 'Wait for instructions.', label: 'writer', access: 'exec' } }
          ],
          chunkDelayMs: 0
        },
        { text: 'spawned', chunkDelayMs: 0 }
      ]
    };
    const s = await setup({ 'parent.json': parent, 'worker.json': worker }, { fast: 'worker.json' });
    // The person allows writes outright: what stops the worker below is the surface, not a card.
    await writeFile(
      path.join(s.ws, 'home-policy.json'),
      JSON.stringify({ rules: [{ tool: 'write', pattern: '*', action: 'allow' }] })
    );
    const chat = await s.request<{ id: string }>('chat/create', {});
    await s.request('chat/send', { chatId: chat.id, text: 'go', model: parentModel('parent.json') });
    await s.client.turnEnded(chat.id);
    const [w] = s.server.workers!.list(chat.id);
    const base = { workspace: s.ws, signal: new AbortController().signal, chatId: chat.id, actor: 'model' as const };
    await s.server.registry.call('vibe_wait', { worker_id: w!.id, timeout_seconds: 30 }, base);
    // Agent mode: the follow-up writes.
    expect((await s.server.registry.call('vibe_send', { worker_id: w!.id, message: 'Write it.' }, base)).ok).toBe(true);
    await s.server.registry.call('vibe_wait', { worker_id: w!.id, timeout_seconds: 30 }, base);
    expect(readFileSync(path.join(s.ws, 'x.txt'), 'utf8')).toBe('agent');
    // Plan mode: the same worker, sent the same kind of work from the Plan chat, is refused.
    await s.request('chat/set-mode', { chatId: chat.id, mode: 'plan' });
    expect(
      (
        await s.server.registry.call(
          'vibe_send',
          { worker_id: w!.id, message: 'Write it again.' },
          { ...base, profile: profileOf('plan') }
        )
      ).ok
    ).toBe(true);
    await s.server.registry.call('vibe_wait', { worker_id: w!.id, timeout_seconds: 30 }, base);
    expect(readFileSync(path.join(s.ws, 'x.txt'), 'utf8')).toBe('agent');
    const { items } = await s.request<{ items: TranscriptItem[] }>('worker/get', { chatId: chat.id, workerId: w!.id });
    const last = toolItems(items).at(-1)!;
    expect(last.status).toBe('error');
    expect(last.output).toMatch(
      /^Refused: write is a write-tier tool and the "agent\/worker, within plan\/worker" surface allows only read tools/
    );
  }, 60_000);

  it('vibe_send obeys workers.maxRunning and does not reset the budget', async () => {
    const reader = {
      turns: [
        [
          { toolCalls: [{ toolName: 'read', input: { path: 'parent.json' } }], chunkDelayMs: 0 },
          { text: 'read once', chunkDelayMs: 0 }
        ],
        [
          { toolCalls: [{ toolName: 'read', input: { path: 'parent.json' } }], chunkDelayMs: 0 },
          { text: 'read again', chunkDelayMs: 0 }
        ]
      ]
    };
    const slow = {
      steps: [{ text: 'thinking very slowly about this task, word by word, until someone stops me', chunkDelayMs: 400 }]
    };
    const s = await setup(
      { 'parent.json': {}, 'reader.json': reader, 'slow.json': slow },
      { fast: 'reader.json', good: 'slow.json' },
      { workersConfig: { maxRunning: 1, maxToolCalls: 1 } }
    );
    const chat = await s.request<{ id: string }>('chat/create', {});
    const base = { workspace: s.ws, signal: new AbortController().signal, chatId: chat.id, actor: 'model' as const };
    const a = await s.server.registry.call('vibe_spawn', { brief: 'Read once.', label: 'reader', tier: 'fast' }, base);
    const aId = /(w-[0-9a-f]{8})/.exec(a.output)![1]!;
    await s.server.registry.call('vibe_wait', { worker_id: aId, timeout_seconds: 30 }, base);
    expect(s.server.workers!.list(chat.id)[0]).toMatchObject({ state: 'done', toolCalls: 1 });
    // Its one tool call is its whole budget: a follow-up does not start a fresh one.
    const over = await s.server.registry.call('vibe_send', { worker_id: aId, message: 'Read again.' }, base);
    expect(over.ok).toBe(false);
    expect(over.output).toContain('has used up its budget (1 of 1 tool calls, workers.maxToolCalls)');
    // Another worker runs: the limit of one running worker holds for a follow-up too.
    expect(
      (await s.server.registry.call('vibe_spawn', { brief: 'Think.', label: 'thinker', tier: 'good' }, base)).ok
    ).toBe(true);
    const busy = await s.server.registry.call('vibe_send', { worker_id: aId, message: 'Read again.' }, base);
    expect(busy.ok).toBe(false);
    expect(busy.output).toMatch(/^1 workers are running already, the limit \(workers\.maxRunning = 1\)/);
    expect(s.server.workers!.list(chat.id).find((w) => w.id === aId)).toMatchObject({ state: 'done', toolCalls: 1 });
  }, 60_000);

  it("a worker's ask_user card lands in the parent chat and says which worker asks", async () => {
    const asker = {
      steps: [
        {
          toolCalls: [
            {
              toolName: 'ask_user',
              input: {
                question: 'Which file?',
                options: [{ label: 'a.py' }, { label: 'b.py' }],
                allow_free_text: false
              }
            }
          ],
          chunkDelayMs: 0
        },
        { text: 'thanks', chunkDelayMs: 0 }
      ]
    };
    const parent = {
      steps: [
        {
          toolCalls: [{ toolName: 'vibe_spawn', input: { brief: 'Ask which file.', label: 'asker' } }],
          chunkDelayMs: 0
        },
        { text: 'spawned', chunkDelayMs: 0 }
      ]
    };
    const s = await setup({ 'parent.json': parent, 'asker.json': asker }, { fast: 'asker.json' });
    const chat = await s.request<{ id: string }>('chat/create', {});
    const cards: QuestionItem[] = [];
    s.client.onEvent(({ chatId, event }) => {
      if (chatId !== chat.id || event.type !== 'item-added' || event.item.kind !== 'question') return;
      cards.push(event.item);
      void s.request('chat/answer', {
        chatId,
        questionId: event.item.questionId,
        answer: { action: 'answer', selected: [1] }
      });
    });
    await s.request('chat/send', { chatId: chat.id, text: 'go', model: parentModel('parent.json') });
    await s.client.turnEnded(chat.id);
    const done = await until('the worker to finish', () =>
      s.server.workers!.list(chat.id).find((w) => w.state === 'done')
    );
    expect(cards.map((c) => [c.question, c.context])).toEqual([
      ['Which file?', `Asked by worker "asker" (${done.id}).`]
    ]);
    const { items } = await s.request<{ items: TranscriptItem[] }>('worker/get', {
      chatId: chat.id,
      workerId: done.id
    });
    expect(toolItems(items)[0]!.output).toContain('b.py');
  }, 30_000);

  it('vibe_send reruns a finished worker with the message appended; sent while it runs, it is taken up right after', async () => {
    // Turn index = user messages − 1: the brief is turn 0, each follow-up run one more.
    const worker = {
      turns: [
        [{ text: 'first answer, given slowly', chunkDelayMs: 300 }],
        [{ text: 'second answer', chunkDelayMs: 0 }],
        [{ text: 'third answer', chunkDelayMs: 0 }]
      ]
    };
    const parent = {
      steps: [
        { toolCalls: [{ toolName: 'vibe_spawn', input: { brief: 'Answer.', label: 'answerer' } }], chunkDelayMs: 0 },
        { text: 'spawned', chunkDelayMs: 0 }
      ]
    };
    const s = await setup({ 'parent.json': parent, 'worker.json': worker }, { fast: 'worker.json' });
    const chat = await s.request<{ id: string }>('chat/create', {});
    await s.request('chat/send', { chatId: chat.id, text: 'go', model: parentModel('parent.json') });
    await s.client.turnEnded(chat.id);
    const [w] = s.server.workers!.list(chat.id);
    const base = { workspace: s.ws, signal: new AbortController().signal, chatId: chat.id, actor: 'model' as const };
    // Sent while the first run still streams: queued, then run.
    expect(w!.state).toBe('running');
    const queued = await s.server.registry.call('vibe_send', { worker_id: w!.id, message: 'And again.' }, base);
    expect(queued.output).toContain('running');
    const second = await s.server.registry.call('vibe_wait', { worker_id: w!.id, timeout_seconds: 30 }, base);
    expect(second.output).toMatch(/done, [\d.]+ s, 0 tool calls\.\nResult:\nsecond answer$/);
    // Sent after it finished: a new run at once.
    const sent = await s.server.registry.call('vibe_send', { worker_id: w!.id, message: 'Once more.' }, base);
    expect(sent.ok).toBe(true);
    const third = await s.server.registry.call('vibe_wait', { worker_id: w!.id, timeout_seconds: 30 }, base);
    expect(third.output).toMatch(/Result:\nthird answer$/);
    const { items } = await s.request<{ items: TranscriptItem[] }>('worker/get', { chatId: chat.id, workerId: w!.id });
    expect(
      items
        .filter((i) => i.kind === 'user')
        .map((i) => (i as { text: string }).text.split('\n').slice(0, 2).join(' | '))
    ).toEqual([
      '## Task (from the main agent) | Answer.',
      '## Follow-up (from the main agent) | And again.',
      '## Follow-up (from the main agent) | Once more.'
    ]);
    expect(items.filter((i) => i.kind === 'assistant').map((i) => (i as { text: string }).text)).toEqual([
      'first answer, given slowly',
      'second answer',
      'third answer'
    ]);
  }, 30_000);

  it('a cell cannot wait for a worker that shares its kernel (it would wait forever); the model can', async () => {
    const slow = { steps: [{ text: 'slowly, slowly, slowly', chunkDelayMs: 500 }] };
    const parent = {
      steps: [
        {
          toolCalls: [{ toolName: 'vibe_spawn', input: { brief: 'Think.', label: 'sharer', share_kernel: true } }],
          chunkDelayMs: 0
        },
        { text: 'spawned', chunkDelayMs: 0 }
      ]
    };
    const s = await setup({ 'parent.json': parent, 'slow.json': slow }, { fast: 'slow.json' });
    const chat = await s.request<{ id: string }>('chat/create', {});
    await s.request('chat/send', { chatId: chat.id, text: 'go', model: parentModel('parent.json') });
    await s.client.turnEnded(chat.id);
    const [w] = s.server.workers!.list(chat.id);
    expect(w).toMatchObject({ state: 'running', sharesKernel: true });
    const base = { workspace: s.ws, signal: new AbortController().signal, chatId: chat.id };
    const fromCell = await s.server.registry.call(
      'vibe_wait',
      { worker_id: w!.id, timeout_seconds: 5 },
      { ...base, actor: 'kernel' }
    );
    expect(fromCell.ok).toBe(false);
    expect(fromCell.output).toContain("shares this chat's kernel, where this cell runs");
    const fromModel = await s.server.registry.call(
      'vibe_wait',
      { worker_id: w!.id, timeout_seconds: 0 },
      { ...base, actor: 'model' }
    );
    expect(fromModel.output).toMatch(/^Still running: /);
    // Another chat cannot reach it.
    const other = await s.request<{ id: string }>('chat/create', {});
    const foreign = await s.server.registry.call(
      'vibe_kill',
      { worker_id: w!.id },
      { ...base, chatId: other.id, actor: 'model' }
    );
    expect(foreign.output).toBe(
      `Unknown worker "${w!.id}" in this chat. This chat has no workers; start one with vibe_spawn.`
    );
  }, 30_000);

  it("VIBE-3: a fast worker without a configured tier runs on the settings' fast tier (issue #27)", async () => {
    const parent = {
      steps: [
        {
          toolCalls: [{ toolName: 'vibe_spawn', input: { brief: 'Say done.', label: 'quick', tier: 'fast' } }],
          chunkDelayMs: 0
        },
        { text: 'spawned', chunkDelayMs: 0 }
      ]
    };
    const s = await setup(
      { 'parent.json': parent, 'good.json': { steps: [{ text: 'unused', chunkDelayMs: 0 }] } },
      { good: 'good.json' }
    );
    const chat = await s.request<{ id: string }>('chat/create', {});
    const model = { ...parentModel('parent.json'), fast: { provider: 'scripted', model: 'fast-from-settings' } };
    await s.request('chat/send', { chatId: chat.id, text: 'go', model });
    await s.client.turnEnded(chat.id);
    expect(s.server.workers!.list(chat.id).map((w) => [w.label, w.tier, w.model])).toEqual([
      ['quick', 'fast', 'scripted/fast-from-settings']
    ]);
  }, 60_000);

  it('a run past its tool-call budget stops as failed, saying which budget', async () => {
    const busy = {
      steps: [
        {
          toolCalls: [
            { toolName: 'read', input: { path: 'parent.json' } },
            { toolName: 'read', input: { path: 'parent.json' } }
          ],
          chunkDelayMs: 0
        },
        { text: 'read twice', chunkDelayMs: 0 }
      ]
    };
    const parent = {
      steps: [
        { toolCalls: [{ toolName: 'vibe_spawn', input: { brief: 'Read twice.', label: 'reader' } }], chunkDelayMs: 0 },
        { text: 'spawned', chunkDelayMs: 0 }
      ]
    };
    const s = await setup(
      { 'parent.json': parent, 'busy.json': busy },
      { fast: 'busy.json' },
      { workersConfig: { maxToolCalls: 1 } }
    );
    const chat = await s.request<{ id: string }>('chat/create', {});
    await s.request('chat/send', { chatId: chat.id, text: 'go', model: parentModel('parent.json') });
    await s.client.turnEnded(chat.id);
    const done = await until('the worker to stop', () =>
      s.server.workers!.list(chat.id).find((w) => w.state !== 'running')
    );
    expect(done.state).toBe('failed');
    expect(done.lastResult).toBe('Stopped: the worker used up its budget of 1 tool calls (workers.maxToolCalls).');
    expect(done.toolCalls).toBe(2);
  }, 30_000);

  it('a worker running when the companion stops is interrupted after the restart, its transcript kept', async () => {
    const slow = {
      steps: [{ text: 'thinking very slowly about this task, word by word, until someone stops me', chunkDelayMs: 400 }]
    };
    const parent = {
      steps: [
        { toolCalls: [{ toolName: 'vibe_spawn', input: { brief: 'Think.', label: 'thinker' } }], chunkDelayMs: 0 },
        { text: 'spawned', chunkDelayMs: 0 }
      ]
    };
    const first = await setup({ 'parent.json': parent, 'slow.json': slow }, { fast: 'slow.json' });
    const chat = await first.request<{ id: string }>('chat/create', {});
    await first.request('chat/send', { chatId: chat.id, text: 'go', model: parentModel('parent.json') });
    await first.client.turnEnded(chat.id);
    const [w] = first.server.workers!.list(chat.id);
    expect(w!.state).toBe('running');
    first.client.close();
    await first.server.dispose();
    opened.splice(opened.indexOf(first), 1);

    const second = await setup({}, { fast: 'slow.json' }, { ws: first.ws });
    const [after] = await second.request<WorkerSummary[]>('worker/list', { chatId: chat.id });
    expect(after!.state).toBe('interrupted');
    expect(after!.lastResult).toMatch(/^Interrupted: the companion stopped while this worker ran/);
    const { items } = await second.request<{ items: TranscriptItem[] }>('worker/get', {
      chatId: chat.id,
      workerId: w!.id
    });
    expect(items[0]).toMatchObject({ kind: 'user' });
    expect((items[0] as { text: string }).text).toContain('## Task (from the main agent)\nThink.');
  }, 60_000);
});
