/**
 * Orchestrate mode (SPEC MODE-5, issue #16 items 4/6): propose_orchestration validated at the
 * call boundary, the 2-minute re-proposal cooldown on an injected clock, the durable pending
 * approval (a store reload keeps it), no tool approves (only the operator's pane connection
 * reaches `orchestration/resolve`), and approval running the tasks as Agent turns in
 * dependency order, then the synthesis, within the budget. Real chat service, store files
 * and registry; scripted model.
 */
import type {
  OrchestrationDisplay,
  OrchestrationRole,
  OrchestrationTask,
  ToolCallItem,
  UserItem
} from '@cellmate/protocol';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/config/logger.js';
import { OrchestrationFlow } from '../../src/flows/orchestration-flow.js';
import {
  OrchestrationNotPendingError,
  OrchestrationStore,
  RESTART_NOTE
} from '../../src/modes/orchestrate/orchestration-store.js';
import type { OrchestrationExecutor } from '../../src/flows/orchestration-executor.js';
import type { StepOutcome } from '../../src/flows/step-runner.js';
import { PlanStore } from '../../src/modes/plan/plan-store.js';
import { Presence } from '../../src/questions/presence.js';
import { QuestionBroker } from '../../src/questions/question-broker.js';
import { createExitPlanModeTool } from '../../src/tools/exit_plan_mode/exit_plan_mode.js';
import { builtinTools } from '../../src/tools/index.js';
import {
  createProposeOrchestrationTool,
  PROPOSAL_COOLDOWN_MS
} from '../../src/tools/propose_orchestration/propose_orchestration.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { createSubmitPlanTool } from '../../src/tools/submit_plan/submit_plan.js';
import { CancellationToken } from 'vscode-jsonrpc/node.js';
import { PROTOCOL_VERSION } from '@cellmate/protocol';
import { createRequestHandlers } from '../../src/transport/rpc-handlers.js';
import { createHarness, scriptSettings, type Harness } from '../helpers/chat-harness.js';
import { tempDir } from '../helpers/temp.js';

const task = (key: string, depends_on: string[] = [], role = 'analyst'): OrchestrationTask => ({
  key,
  title: `do ${key}`,
  description: `${key}: done when checked`,
  role,
  depends_on
});
const ROLES: OrchestrationRole[] = [
  { name: 'analyst', tier: 'good', brief: 'Looks at the data; reports bullet points.' },
  { name: 'plotter', tier: 'fast', brief: 'Draws the charts.' }
];
const PROPOSAL = {
  roles: ROLES,
  // Given out of order on purpose: chart needs clean, clean needs load.
  tasks: [task('chart', ['clean'], 'plotter'), task('clean', ['load']), task('load')],
  synthesis: 'Summarise the chart in two sentences.',
  budget: { max_workers: 2, max_minutes: 10 }
};

function registryWith(store: OrchestrationStore, now?: () => number): ToolRegistry {
  return new ToolRegistry([...builtinTools(), createProposeOrchestrationTool(store, now ? { now } : {})]);
}
const ctx = (ws: string, chatId = 'chat-1', actor: 'model' | 'kernel' = 'model') => ({
  workspace: ws,
  signal: new AbortController().signal,
  actor,
  chatId
});

describe('propose_orchestration: validated at the call boundary (MODE-5)', () => {
  it.each([
    [
      'duplicate task keys',
      { tasks: [task('a'), task('a')] },
      'propose_orchestration: Two tasks have the key "a". Keys must be unique: rename one and submit again.'
    ],
    [
      'unknown dependency',
      { tasks: [task('a'), task('b', ['z'])] },
      'propose_orchestration: Task "b" depends on "z", which is not a task of this orchestration (keys: a, b). Use one of those keys or add the task.'
    ],
    [
      'cycle',
      { tasks: [task('a', ['c']), task('b', ['a']), task('c', ['b'])] },
      'propose_orchestration: The dependencies form a cycle: a → c → b → a. An orchestration must be acyclic: drop one of these dependencies.'
    ],
    [
      'self dependency',
      { tasks: [task('a', ['a'])] },
      'propose_orchestration: Task "a" depends on itself. Remove "a" from its depends_on.'
    ],
    [
      'unknown role',
      { tasks: [task('a', [], 'wizard')] },
      'propose_orchestration: task "a" has the role "wizard", which is not one of the roles (analyst). Use one of those or add the role.'
    ],
    [
      'duplicate role',
      { roles: [ROLES[0], ROLES[0]], tasks: [task('a')] },
      'propose_orchestration: two roles are named "analyst". Role names must be unique: rename one.'
    ],
    [
      'a role without a task',
      { roles: ROLES, tasks: [task('a')] },
      'propose_orchestration: role "plotter" has no task. Give it a task or remove it.'
    ]
  ])('%s is refused with what to fix; nothing is stored', async (_label, change, message) => {
    const ws = await tempDir();
    const store = new OrchestrationStore(path.join(ws, 'o'));
    const result = await registryWith(store).call(
      'propose_orchestration',
      { roles: [ROLES[0]], synthesis: 's', budget: { max_workers: 1, max_minutes: 5 }, ...change },
      ctx(ws)
    );
    expect(result).toMatchObject({ ok: false, output: message });
    expect(store.latest('chat-1')).toBeUndefined();
  });

  it('schema errors name the field: a bad tier, a budget out of range, no tasks, an unknown key', async () => {
    const ws = await tempDir();
    const store = new OrchestrationStore(path.join(ws, 'o'));
    const call = (args: Record<string, unknown>) =>
      registryWith(store).call('propose_orchestration', { ...PROPOSAL, ...args }, ctx(ws));
    expect((await call({ roles: [{ ...ROLES[0], tier: 'best' }, ROLES[1]] })).output).toBe(
      'Invalid arguments for propose_orchestration: "roles.0.tier" must be "fast" (mechanical work with a clear spec) or "good" (design, judgement) (got "best"). Rewrite the arguments and call propose_orchestration again.'
    );
    expect((await call({ budget: { max_workers: 0, max_minutes: 10 } })).output).toContain(
      '"budget.max_workers" must be at least 1'
    );
    expect((await call({ budget: { max_workers: 2, max_minutes: 1.5 } })).output).toContain(
      '"budget.max_minutes" must be a whole number'
    );
    expect((await call({ budget: { max_workers: 2, max_minutes: 10, max_tool_calls: 9_999 } })).output).toContain(
      '"budget.max_tool_calls" must be at most 5000'
    );
    expect((await call({ tasks: [] })).output).toContain(
      '"tasks" must have at least one task (if the work needs no orchestration, say so instead)'
    );
    expect((await call({ approve: true })).output).toMatch(/approve/);
    expect(store.latest('chat-1')).toBeUndefined();
  });

  it('a valid proposal is stored pending with its tasks in dependency order; the schema is snapshotted', async () => {
    const ws = await tempDir();
    const store = new OrchestrationStore(path.join(ws, 'o'));
    const registry = registryWith(store);
    const result = await registry.call('propose_orchestration', PROPOSAL, ctx(ws));
    expect(result.ok).toBe(true);
    const stored = store.latest('chat-1')!;
    expect(stored).toMatchObject({ approval: 'pending', synthesis: PROPOSAL.synthesis, budget: PROPOSAL.budget });
    expect(stored.tasks.map((t) => t.key)).toEqual(['load', 'clean', 'chart']);
    expect(result.output).toContain(
      '1. [load] do load — analyst (good)\n2. [clean] do clean — analyst (good) (after load)\n3. [chart] do chart — plotter (fast) (after clean)'
    );
    expect(result.output).toContain('Nothing runs until the operator approves.');
    expect(result.ok && result.display).toMatchObject({
      kind: 'orchestration',
      orchestrationId: stored.id,
      approval: 'pending'
    });
    const tool = registry.get('propose_orchestration')!;
    for (const example of tool.examples) expect(tool.parameters.safeParse(example.args).success).toBe(true);
    const declared = {
      name: tool.name,
      tier: tool.tier,
      parameters: registry.inputJsonSchema(tool.name),
      description: registry.modelDescription(tool.name)
    };
    await expect(`${JSON.stringify(declared, null, 2)}\n`).toMatchFileSnapshot(
      '../tools/__schemas__/propose_orchestration.json'
    );
  });
});

describe('re-proposal cooldown (MODE-5): 2 minutes, injected clock', () => {
  it('a second proposal within 2 minutes is refused with the time left; after 2 minutes, or after a rejection, it goes through', async () => {
    const ws = await tempDir();
    let now = Date.parse('2026-12-01T10:00:00Z');
    const clock = () => now;
    const store = new OrchestrationStore(path.join(ws, 'o'), { now: clock });
    const registry = registryWith(store, clock);
    const first = await registry.call('propose_orchestration', PROPOSAL, ctx(ws));
    expect(first.ok).toBe(true);
    const firstId = store.latest('chat-1')!.id;
    now += 35_000;
    const early = await registry.call('propose_orchestration', PROPOSAL, ctx(ws, 'chat-1', 'kernel'));
    expect(early).toMatchObject({
      ok: false,
      output: `Refused: orchestration ${firstId} was proposed in this chat 35 s ago and re-proposals have a 2 min cooldown: 1 min 25 s left. It is pending; wait for the operator's answer instead of proposing again (end your turn).`
    });
    // Another chat has its own clock.
    expect((await registry.call('propose_orchestration', PROPOSAL, ctx(ws, 'chat-2'))).ok).toBe(true);
    now += PROPOSAL_COOLDOWN_MS - 35_000 - 1;
    expect((await registry.call('propose_orchestration', PROPOSAL, ctx(ws))).output).toMatch(/: 1 s left\./);
    expect(store.latest('chat-1')!.id).toBe(firstId); // refusals store nothing and do not restart the clock
    now += 1;
    const later = await registry.call('propose_orchestration', PROPOSAL, ctx(ws));
    expect(later.ok).toBe(true);
    const secondId = store.latest('chat-1')!.id;
    expect(store.get('chat-1', firstId)?.approval).toBe('superseded');
    // The operator rejects: the revision may be proposed at once.
    store.decide('chat-1', secondId, 'reject', 'fewer tasks');
    now += 1_000;
    expect((await registry.call('propose_orchestration', PROPOSAL, ctx(ws))).ok).toBe(true);
    now += 1_000;
    expect((await registry.call('propose_orchestration', PROPOSAL, ctx(ws))).output).toMatch(
      /^Refused: .* 1 s ago .*: 1 min 59 s left\./
    );
  });
});

describe('the approval is durable and only the operator gives it (MODE-5)', () => {
  it('pending survives a store reload; a run cut off by a restart reads as stopped', async () => {
    const ws = await tempDir();
    const dir = path.join(ws, '.cellmate', 'orchestrations');
    const first = new OrchestrationStore(dir);
    await registryWith(first).call('propose_orchestration', PROPOSAL, ctx(ws));
    const id = first.latest('chat-1')!.id;
    const reloaded = new OrchestrationStore(dir); // what a restarted companion reads
    expect(reloaded.latest('chat-1')).toMatchObject({
      id,
      approval: 'pending',
      tasks: [{ key: 'load' }, { key: 'clean' }, { key: 'chart' }]
    });
    expect(JSON.parse(await readFile(path.join(dir, 'chat-1.json'), 'utf8')).orchestrations[0]).toMatchObject({
      id,
      approval: 'pending'
    });
    const approved = reloaded.decide('chat-1', id, 'approve');
    expect(approved.run).toEqual({
      state: 'running',
      tasks: { load: 'queued', clean: 'queued', chart: 'queued' },
      synthesis: 'queued'
    });
    expect(() => reloaded.decide('chat-1', id, 'reject')).toThrow(OrchestrationNotPendingError);
    expect(() => reloaded.decide('chat-1', id, 'reject')).toThrow(
      `Orchestration ${id} is approved, not pending: there is nothing to answer.`
    );
    reloaded.setRun('chat-1', id, {
      state: 'running',
      tasks: { load: 'done', clean: 'running', chart: 'queued' },
      synthesis: 'queued'
    });
    expect(new OrchestrationStore(dir).get('chat-1', id)?.run).toEqual({
      state: 'stopped',
      tasks: { load: 'done', clean: 'stopped', chart: 'skipped' },
      synthesis: 'skipped',
      note: RESTART_NOTE
    });
    // An unreadable file is kept aside, never silently overwritten.
    await writeFile(path.join(dir, 'chat-9.json'), '{"version": 1, "orchestrations": [{"id": 3}]}');
    const problems: string[] = [];
    expect(new OrchestrationStore(dir, { onProblem: (m) => problems.push(m) }).latest('chat-9')).toBeUndefined();
    expect(problems[0]).toMatch(
      /the orchestration file of chat chat-9 was unreadable .* kept as .*chat-9\.json\.unreadable$/s
    );
  });

  it("no tool approves: every registered tool, called by the model or a kernel, leaves it pending; the RPC answers only a person's pane", async () => {
    const ws = await tempDir();
    const store = new OrchestrationStore(path.join(ws, 'o'));
    const plans = new PlanStore(path.join(ws, 'plans'));
    const broker = new QuestionBroker({ sink: { publish: () => undefined }, presence: new Presence() });
    const registry = new ToolRegistry([
      ...builtinTools({ questions: broker }),
      createSubmitPlanTool(plans),
      createExitPlanModeTool(plans),
      createProposeOrchestrationTool(store)
    ]);
    await registry.call('propose_orchestration', PROPOSAL, ctx(ws));
    const id = store.latest('chat-1')!.id;
    const attempts = [
      {},
      { orchestration_id: id, decision: 'approve' },
      { id, approve: true },
      { ...PROPOSAL, approval: 'approved' }
    ];
    const names = registry.list({ name: 'all', maxTier: 'exec' }).map((t) => t.name);
    expect(names.filter((n) => /approv|resolve_orch|orchestrat/.test(n))).toEqual(['propose_orchestration']);
    for (const name of names) {
      if (name === 'ask_user') continue; // would wait for a person; it cannot reach the store either
      for (const args of attempts) {
        for (const actor of ['model', 'kernel'] as const)
          await registry.call(name, args, { ...ctx(ws, 'chat-1', actor), signal: AbortSignal.timeout(2_000) });
      }
    }
    expect(store.latest('chat-1')).toMatchObject({ id, approval: 'pending' });

    // The RPC: refused for a connection that is not a person's pane, answered for one that is.
    const h = await createHarness(ws);
    const chat = h.service.create();
    store.propose(chat.id, {
      roles: [ROLES[0]!],
      tasks: [task('a')],
      synthesis: 's',
      budget: { max_workers: 1, max_minutes: 1 }
    });
    const pending = store.latest(chat.id)!.id;
    const resolved: string[] = [];
    const services = {
      workspace: ws,
      chats: h.service,
      orchestrations: {
        answer: (c: string, o: string, d: 'approve' | 'reject') => (
          resolved.push(`${c} ${o} ${d}`),
          store.decide(c, o, d),
          { state: d === 'approve' ? ('approved' as const) : ('rejected' as const), message: 'ok' }
        )
      }
    };
    const params = {
      chatId: chat.id,
      orchestrationId: pending,
      decision: 'approve' as const,
      model: { provider: 'scripted' as const, model: 'x' }
    };
    const headless = createRequestHandlers(services);
    await headless['cellmate/hello']({ protocolVersion: PROTOCOL_VERSION }, CancellationToken.None);
    await expect(
      Promise.resolve().then(() => headless['orchestration/resolve'](params, CancellationToken.None))
    ).rejects.toThrow("Only a person's Cellmate pane can answer an orchestration");
    expect(store.latest(chat.id)!.approval).toBe('pending');
    const pane = createRequestHandlers(services);
    await pane['cellmate/hello']({ protocolVersion: PROTOCOL_VERSION, interactive: true }, CancellationToken.None);
    expect(await pane['orchestration/resolve'](params, CancellationToken.None)).toEqual({
      state: 'approved',
      message: 'ok'
    });
    expect(resolved).toEqual([`${chat.id} ${pending} approve`]);
    await h.dispose();
  }, 60_000);
});

async function flowHarness(
  ws: string,
  options: { executor?: OrchestrationExecutor; minuteMs?: number } = {}
): Promise<{ h: Harness; store: OrchestrationStore; flow: OrchestrationFlow }> {
  const store = new OrchestrationStore(path.join(ws, '.cellmate', 'orchestrations'));
  const registry = registryWith(store);
  const h = await createHarness(ws, {
    registry,
    env: { CELLMATE_CONFIG: path.join(ws, 'none.json'), CELLMATE_SCRIPT_LOG: path.join(ws, 'prompts.jsonl') }
  });
  const flow = new OrchestrationFlow({
    store,
    chats: h.service,
    logger: silentLogger,
    calls: registry.onDidCall,
    ...options
  });
  return { h, store, flow };
}
const fast = (text: string) => ({ text, chunkDelayMs: 0 });
const userTexts = (h: Harness, chatId: string) =>
  h.service
    .get(chatId)
    .items.filter((i): i is UserItem => i.kind === 'user')
    .map((u) => u.text.split('\n')[0]);
const cards = (h: Harness, chatId: string) =>
  h.service
    .get(chatId)
    .items.filter((i): i is ToolCallItem => i.kind === 'tool' && i.display?.kind === 'orchestration')
    .map((c) => c.display as OrchestrationDisplay);
const notices = (h: Harness, chatId: string) =>
  h.service
    .get(chatId)
    .items.filter((i) => i.kind === 'notice')
    .map((n) => (n as { text: string }).text);

describe('an Orchestrate run end to end (MODE-5)', () => {
  it('proposes in Orchestrate (read-only), approval switches to Agent and runs the tasks in dependency order, then the synthesis', async () => {
    const ws = await tempDir();
    const model = await scriptSettings(ws, {
      turns: [
        [
          { toolCalls: [{ toolName: 'propose_orchestration', input: PROPOSAL }], chunkDelayMs: 0 },
          fast('Proposed; waiting for your approval.')
        ],
        [fast('Loaded.')],
        [fast('Cleaned.')],
        [fast('Charted.')],
        [fast('The chart shows growth.')]
      ]
    });
    let { h, store, flow } = await flowHarness(ws);
    const chat = h.service.create();
    h.service.setMode(chat.id, 'orchestrate');
    await h.sendAndWait(chat.id, 'chart the sales', model);
    const id = store.latest(chat.id)!.id;
    expect(cards(h, chat.id).map((c) => c.approval)).toEqual(['pending']);
    // Restart while pending: a new store, flow and chat service on the same files.
    flow.dispose();
    await h.dispose();
    ({ h, store, flow } = await flowHarness(ws));
    expect(store.latest(chat.id)).toMatchObject({ id, approval: 'pending' });
    expect(h.service.get(chat.id).mode).toBe('orchestrate');
    expect(() => flow.answer(chat.id, 'orch-nope', 'approve', model)).toThrow(OrchestrationNotPendingError);

    expect(flow.answer(chat.id, id, 'approve', model)).toEqual({
      state: 'approved',
      message: 'Approved: the chat is in Agent mode; 3 tasks run in dependency order, then the synthesis.'
    });
    expect(h.service.get(chat.id).mode).toBe('agent');
    await flow.settled(chat.id);
    expect(userTexts(h, chat.id)).toEqual([
      'chart the sales',
      'Orchestration task 1/3 [load]: do load',
      'Orchestration task 2/3 [clean]: do clean',
      'Orchestration task 3/3 [chart]: do chart',
      `Orchestration synthesis (${id}): Summarise the chart in two sentences.`
    ]);
    const chartTask = h.service.get(chat.id).items.filter((i): i is UserItem => i.kind === 'user')[3]!.text;
    expect(chartTask).toContain('Role: plotter (fast) — Draws the charts.');
    expect(chartTask).toContain('It comes after [clean] (done).');
    expect(store.latest(chat.id)!.run).toEqual({
      state: 'done',
      tasks: { load: 'done', clean: 'done', chart: 'done' },
      synthesis: 'done'
    });
    expect(cards(h, chat.id).map((c) => [c.approval, c.run?.state])).toEqual([['approved', 'done']]);
    expect(notices(h, chat.id).at(-1)).toMatch(
      new RegExp(`^Orchestration ${id} finished: 3 tasks and the synthesis in \\d`)
    );
    // The proposal turn was read-only, the task turns were not.
    const prompts = (await readFile(path.join(ws, 'prompts.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { turn: number; tools: string[]; prompt: Array<{ content: unknown }> });
    const proposing = prompts.filter((p) => p.turn === 0);
    expect(
      proposing.every(
        (p) =>
          String(p.prompt[0]!.content).includes('## Mode: Orchestrate') &&
          !p.tools.includes('write') &&
          p.tools.includes('propose_orchestration')
      )
    ).toBe(true);
    expect(
      prompts.filter((p) => p.turn > 0).every((p) => String(p.prompt[0]!.content).includes('## Mode: Agent'))
    ).toBe(true);
    expect(() => flow.answer(chat.id, id, 'approve', model)).toThrow(/is approved, not pending/);
    flow.dispose();
    await h.dispose();
  }, 30_000);

  it('rejection keeps Orchestrate and asks for a revision, which may be proposed at once', async () => {
    const ws = await tempDir();
    const model = await scriptSettings(ws, {
      turns: [
        [{ toolCalls: [{ toolName: 'propose_orchestration', input: PROPOSAL }], chunkDelayMs: 0 }, fast('Proposed.')],
        [
          {
            toolCalls: [
              {
                toolName: 'propose_orchestration',
                input: { ...PROPOSAL, tasks: [task('load'), task('chart', ['load'], 'plotter')] }
              }
            ],
            chunkDelayMs: 0
          },
          fast('Revised.')
        ]
      ]
    });
    const { h, store, flow } = await flowHarness(ws);
    const chat = h.service.create();
    h.service.setMode(chat.id, 'orchestrate');
    await h.sendAndWait(chat.id, 'chart the sales', model);
    const id = store.latest(chat.id)!.id;
    expect(flow.answer(chat.id, id, 'reject', model, 'skip the cleaning')).toEqual({
      state: 'rejected',
      message: 'Rejected: the agent is asked to revise the orchestration.'
    });
    await flow.settled(chat.id);
    expect(h.service.get(chat.id).mode).toBe('orchestrate');
    expect(userTexts(h, chat.id).at(-1)).toBe(
      'I rejected the orchestration (my reason: skip the cleaning). Please revise it and propose it again with propose_orchestration.'
    );
    const revised = store.latest(chat.id)!;
    expect(revised).toMatchObject({ approval: 'pending', tasks: [{ key: 'load' }, { key: 'chart' }] });
    expect(cards(h, chat.id).map((c) => c.approval)).toEqual(['rejected', 'pending']);
    flow.dispose();
    await h.dispose();
  }, 30_000);

  it('the budget stops the run: tool calls spent abort the running task, the rest is skipped, with a notice', async () => {
    const ws = await tempDir();
    await writeFile(path.join(ws, 'data.txt'), 'x\n');
    const read = { toolName: 'read', input: { path: 'data.txt' } };
    const model = await scriptSettings(ws, {
      turns: [
        [
          {
            toolCalls: [
              {
                toolName: 'propose_orchestration',
                input: { ...PROPOSAL, budget: { max_workers: 1, max_minutes: 10, max_tool_calls: 2 } }
              }
            ],
            chunkDelayMs: 0
          },
          fast('Proposed.')
        ],
        [
          { toolCalls: [read], chunkDelayMs: 0 },
          { toolCalls: [read], chunkDelayMs: 0 },
          { toolCalls: [read], chunkDelayMs: 0 },
          fast('Loaded.')
        ]
      ]
    });
    const { h, store, flow } = await flowHarness(ws);
    const chat = h.service.create();
    h.service.setMode(chat.id, 'orchestrate');
    await h.sendAndWait(chat.id, 'go', model);
    const id = store.latest(chat.id)!.id;
    flow.answer(chat.id, id, 'approve', model);
    await flow.settled(chat.id);
    expect(store.latest(chat.id)!.run).toEqual({
      state: 'stopped',
      tasks: { load: 'stopped', clean: 'skipped', chart: 'skipped' },
      synthesis: 'skipped',
      note: 'The run stopped: its tool-call budget (2 calls) is spent'
    });
    expect(userTexts(h, chat.id)).toHaveLength(2);
    expect(notices(h, chat.id).at(-1)).toBe(
      `Orchestration ${id} stopped (0/3 tasks done): the run stopped: its tool-call budget (2 calls) is spent. Send a message to continue by hand.`
    );
    flow.dispose();
    await h.dispose();
  }, 30_000);

  it('the time budget stops a long task (a budget minute shortened for the test)', async () => {
    const ws = await tempDir();
    const model = await scriptSettings(ws, {
      turns: [
        [
          {
            toolCalls: [
              { toolName: 'propose_orchestration', input: { ...PROPOSAL, budget: { max_workers: 1, max_minutes: 1 } } }
            ],
            chunkDelayMs: 0
          },
          fast('Proposed.')
        ],
        [{ text: 'one two three four five six seven eight nine ten eleven twelve', chunkDelayMs: 200 }]
      ]
    });
    const { h, store, flow } = await flowHarness(ws, { minuteMs: 300 });
    const chat = h.service.create();
    h.service.setMode(chat.id, 'orchestrate');
    await h.sendAndWait(chat.id, 'go', model);
    flow.answer(chat.id, store.latest(chat.id)!.id, 'approve', model);
    await flow.settled(chat.id);
    expect(store.latest(chat.id)!.run).toMatchObject({
      state: 'stopped',
      tasks: { load: 'stopped', clean: 'skipped' },
      note: 'The run stopped: its time budget (1 min) is spent'
    });
    flow.dispose();
    await h.dispose();
  }, 30_000);
});

describe("the budget never ends a person's turn; one run per chat", () => {
  it("a step waiting behind a person's turn when the time runs out is skipped, and that turn ends normally", async () => {
    const ws = await tempDir();
    const model = await scriptSettings(ws, {
      turns: [
        [
          {
            toolCalls: [
              { toolName: 'propose_orchestration', input: { ...PROPOSAL, budget: { max_workers: 1, max_minutes: 1 } } }
            ],
            chunkDelayMs: 0
          },
          fast('Proposed.')
        ],
        [{ text: 'my own long answer to the person, word by word, slowly', chunkDelayMs: 120 }]
      ]
    });
    const { h, store, flow } = await flowHarness(ws, { minuteMs: 300 });
    const chat = h.service.create();
    h.service.setMode(chat.id, 'orchestrate');
    await h.sendAndWait(chat.id, 'go', model);
    const id = store.latest(chat.id)!.id;
    await h.service.send({ chatId: chat.id, text: 'a question of my own first', settings: model }); // the person's turn, running
    flow.answer(chat.id, id, 'approve', model);
    const own = await h.service.waitForTurn(chat.id);
    expect(own?.reason).toBe('stop');
    await flow.settled(chat.id);
    expect(userTexts(h, chat.id)).toEqual(['go', 'a question of my own first']);
    expect(store.latest(chat.id)!.run).toMatchObject({
      state: 'stopped',
      tasks: { load: 'stopped', clean: 'skipped', chart: 'skipped' },
      note: 'The run stopped: its time budget (1 min) is spent'
    });
    flow.dispose();
    await h.dispose();
  }, 30_000);

  it('a second orchestration cannot be approved while the first one runs in the chat', async () => {
    const ws = await tempDir();
    const gate: Array<() => void> = [];
    const executor: OrchestrationExecutor = {
      concurrency: () => 1,
      runTask: () => new Promise<StepOutcome>((resolve) => gate.push(() => resolve({ ok: true }))),
      runSynthesis: async () => ({ ok: true })
    };
    const { h, store, flow } = await flowHarness(ws, { executor });
    const chat = h.service.create();
    const small = {
      roles: [ROLES[0]!],
      tasks: [task('a')],
      synthesis: 's',
      budget: { max_workers: 1, max_minutes: 5 }
    };
    const first = store.propose(chat.id, small).id;
    flow.answer(chat.id, first, 'approve', { provider: 'scripted', model: 'x' });
    const second = store.propose(chat.id, small).id;
    expect(() => flow.answer(chat.id, second, 'approve', { provider: 'scripted', model: 'x' })).toThrow(
      `Orchestration ${first} is still running in this chat: approve this one once it has finished, or press Stop to end it.`
    );
    expect(store.get(chat.id, second)?.approval).toBe('pending');
    while (!gate.length) await new Promise((r) => setTimeout(r, 5));
    gate[0]!();
    await flow.settled(chat.id);
    expect(flow.answer(chat.id, second, 'approve', { provider: 'scripted', model: 'x' }).state).toBe('approved');
    while (gate.length < 2) await new Promise((r) => setTimeout(r, 5));
    gate[1]!();
    await flow.settled(chat.id);
    flow.dispose();
    await h.dispose();
  }, 30_000);
});

describe('the executor seam (where workers plug in)', () => {
  it('tasks start once their dependencies are done, up to min(concurrency, max_workers) at once; a failed task skips what depends on it', async () => {
    const ws = await tempDir();
    const log: string[] = [];
    const gates = new Map<string, () => void>();
    const executor: OrchestrationExecutor = {
      concurrency: () => 4,
      runTask: (_o, t) =>
        new Promise<StepOutcome>((resolve) => {
          log.push(`start ${t.key}`);
          gates.set(t.key, () => {
            log.push(`end ${t.key}`);
            resolve(t.key === 'b2' ? { ok: false, reason: 'worker crashed' } : { ok: true, summary: `${t.key} done` });
          });
        }),
      runSynthesis: async () => ({ ok: true })
    };
    const { h, store, flow } = await flowHarness(ws, { executor });
    const chat = h.service.create();
    store.propose(chat.id, {
      roles: [ROLES[0]!],
      tasks: [task('a1'), task('a2'), task('a3'), task('b1', ['a1', 'a2']), task('b2', ['a3']), task('c', ['b2'])],
      synthesis: 's',
      budget: { max_workers: 2, max_minutes: 5 }
    });
    flow.answer(chat.id, store.latest(chat.id)!.id, 'approve', { provider: 'scripted', model: 'x' });
    const until = async (entry: string) => {
      while (!log.includes(entry)) await new Promise((r) => setTimeout(r, 5));
    };
    await until('start a2');
    expect(log).toEqual(['start a1', 'start a2']); // max_workers 2 caps the executor's 4
    gates.get('a2')!();
    await until('start a3');
    gates.get('a1')!();
    await until('start b1');
    gates.get('a3')!();
    await until('start b2'); // b1 still runs: one slot was free
    gates.get('b1')!();
    gates.get('b2')!();
    await flow.settled(chat.id);
    expect(log).toEqual([
      'start a1',
      'start a2',
      'end a2',
      'start a3',
      'end a1',
      'start b1',
      'end a3',
      'start b2',
      'end b1',
      'end b2'
    ]);
    expect(store.latest(chat.id)!.run).toEqual({
      state: 'stopped',
      tasks: { a1: 'done', a2: 'done', a3: 'done', b1: 'done', b2: 'stopped', c: 'skipped' },
      synthesis: 'skipped',
      note: 'Task [b2] did not finish: worker crashed'
    });
    flow.dispose();
    await h.dispose();
  }, 30_000);
});
