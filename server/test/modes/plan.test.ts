/**
 * Plan mode (SPEC MODE-3, issue #16 item 3): the plan graph's validation, the durable
 * approval (a restart keeps it pending), the one gentle nudge, and approval turning the
 * nodes into Agent turns in dependency order. Real chat service, store and plan files;
 * scripted model.
 */
import type { PlanNode, ToolCallItem, UserItem } from '@cellmate/protocol';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CancellationToken } from 'vscode-jsonrpc/node.js';
import { PROTOCOL_VERSION } from '@cellmate/protocol';
import { createRequestHandlers } from '../../src/transport/rpc-handlers.js';
import { silentLogger } from '../../src/config/logger.js';
import { PlanFlow } from '../../src/flows/plan-flow.js';
import { PlanNotPendingError, PlanStore } from '../../src/modes/plan/plan-store.js';
import { createExitPlanModeTool } from '../../src/tools/exit_plan_mode/exit_plan_mode.js';
import { builtinTools } from '../../src/tools/index.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { orderPlan, PlanGraphError } from '../../src/tools/submit_plan/plan-graph.js';
import { createSubmitPlanTool } from '../../src/tools/submit_plan/submit_plan.js';
import { createHarness, scriptSettings, type Harness } from '../helpers/chat-harness.js';
import { tempDir } from '../helpers/temp.js';

const node = (key: string, depends_on: string[] = []): PlanNode => ({
  key,
  title: `do ${key}`,
  description: `${key} done when checked`,
  depends_on
});

function planRegistry(plans: PlanStore): ToolRegistry {
  return new ToolRegistry([...builtinTools(), createSubmitPlanTool(plans), createExitPlanModeTool(plans)]);
}

async function planHarness(
  ws: string,
  env: NodeJS.ProcessEnv = {}
): Promise<{ h: Harness; plans: PlanStore; flow: PlanFlow }> {
  const plans = new PlanStore(path.join(ws, '.cellmate', 'plans'));
  const h = await createHarness(ws, {
    registry: planRegistry(plans),
    env: { CELLMATE_CONFIG: path.join(ws, 'none.json'), ...env }
  });
  const flow = new PlanFlow({ plans, chats: h.service, logger: silentLogger });
  return { h, plans, flow };
}

describe('submit_plan: the plan graph (MODE-3)', () => {
  it.each([
    [
      'duplicate keys',
      [node('a'), node('a')],
      'Two nodes have the key "a". Keys must be unique: rename one and submit again.'
    ],
    [
      'unknown dependency',
      [node('a'), node('b', ['z'])],
      'Node "b" depends on "z", which is not a node of this plan (keys: a, b). Use one of those keys or add the node.'
    ],
    ['self dependency', [node('a', ['a'])], 'Node "a" depends on itself. Remove "a" from its depends_on.'],
    [
      'cycle',
      [node('a', ['c']), node('b', ['a']), node('c', ['b'])],
      'The dependencies form a cycle: a → c → b → a. A plan must be acyclic: drop one of these dependencies.'
    ]
  ])('%s is refused with what to fix', (_label, nodes, message) => {
    expect(() => orderPlan(nodes)).toThrow(PlanGraphError);
    expect(() => orderPlan(nodes)).toThrow(message);
  });

  it('orders nodes after their dependencies, otherwise as given', () => {
    const ordered = orderPlan([
      node('report', ['chart', 'clean']),
      node('load'),
      node('chart', ['clean']),
      node('clean', ['load'])
    ]);
    expect(ordered.map((n) => n.key)).toEqual(['load', 'clean', 'chart', 'report']);
    expect(orderPlan([node('x'), node('y')]).map((n) => n.key)).toEqual(['x', 'y']);
  });

  it("the registry rejects a bad plan at the call with the graph's message; schema snapshots", async () => {
    const ws = await tempDir();
    const plans = new PlanStore(path.join(ws, 'plans'));
    const registry = planRegistry(plans);
    const ctx = { workspace: ws, signal: new AbortController().signal, actor: 'model' as const, chatId: 'chat-1' };
    const bad = await registry.call('submit_plan', { goal: 'g', nodes: [node('a', ['b']), node('b', ['a'])] }, ctx);
    expect(bad).toMatchObject({
      ok: false,
      output:
        'submit_plan: The dependencies form a cycle: a → b → a. A plan must be acyclic: drop one of these dependencies.'
    });
    const empty = await registry.call('submit_plan', { goal: 'g', nodes: [] }, ctx);
    expect(empty.output).toContain(
      'must have at least one node (if no plan is needed, say so instead of calling submit_plan)'
    );
    expect(plans.latest('chat-1')).toBeUndefined();
    const noPlan = await registry.call('exit_plan_mode', {}, ctx);
    expect(noPlan.output).toBe('No plan to approve: call submit_plan with the plan first, then exit_plan_mode.');
    for (const name of ['submit_plan', 'exit_plan_mode']) {
      const tool = registry.get(name)!;
      for (const example of tool.examples) expect(tool.parameters.safeParse(example.args).success).toBe(true);
      const declared = {
        name,
        tier: tool.tier,
        parameters: registry.inputJsonSchema(name),
        description: registry.modelDescription(name)
      };
      await expect(`${JSON.stringify(declared, null, 2)}\n`).toMatchFileSnapshot(`../tools/__schemas__/${name}.json`);
    }
  });
});

describe('exit_plan_mode: a durable approval (MODE-3)', () => {
  it('pending survives a new store on the same files; repeated calls stay pending; only a person resolves, once', async () => {
    const ws = await tempDir();
    const dir = path.join(ws, 'plans');
    const first = new PlanStore(dir);
    const registry = planRegistry(first);
    const ctx = { workspace: ws, signal: new AbortController().signal, actor: 'model' as const, chatId: 'chat-1' };
    await registry.call('submit_plan', { goal: 'g', nodes: [node('a')] }, ctx);
    const opened = await registry.call('exit_plan_mode', {}, ctx);
    expect(opened.output).toMatch(/^Pending: the user is asked to approve plan plan-\w+ \("g", 1 steps\)/);
    const again = await registry.call('exit_plan_mode', {}, ctx);
    expect(again.output).toMatch(/^Still pending: /);
    const planId = first.latest('chat-1')!.id;

    const restarted = new PlanStore(dir); // what a restarted companion reads
    expect(restarted.latest('chat-1')).toMatchObject({ id: planId, approval: 'pending' });
    const still = await planRegistry(restarted).call('exit_plan_mode', {}, ctx);
    expect(still.output).toMatch(/^Still pending: /);
    expect(restarted.decide('chat-1', planId, 'reject', ' too broad ')).toMatchObject({
      approval: 'rejected',
      reason: 'too broad'
    });
    expect(() => restarted.decide('chat-1', planId, 'approve')).toThrow(PlanNotPendingError);
    expect(() => restarted.decide('chat-1', planId, 'approve')).toThrow(
      `Plan ${planId} is rejected, not pending: there is nothing to answer.`
    );
    const after = await planRegistry(restarted).call('exit_plan_mode', {}, ctx);
    expect(after.output).toBe(
      `Rejected: the user rejected plan ${planId} (their reason: too broad). Revise it, call submit_plan with the new plan, then exit_plan_mode again.`
    );
    const onDisk = JSON.parse(await readFile(path.join(dir, 'chat-1.json'), 'utf8'));
    expect(onDisk.plans[0]).toMatchObject({ id: planId, approval: 'rejected' });
    // A new submission supersedes a pending one (one store per companion: the restarted one from here on).
    await planRegistry(restarted).call('submit_plan', { goal: 'g2', nodes: [node('a')] }, ctx);
    const fresh = new PlanStore(dir);
    await planRegistry(fresh).call('exit_plan_mode', {}, ctx);
    fresh.submit('chat-1', 'g3', [node('b')]);
    expect(new PlanStore(dir).get('chat-1', fresh.latest('chat-1')!.id)?.approval).toBe('none');
    expect(
      JSON.parse(await readFile(path.join(dir, 'chat-1.json'), 'utf8')).plans.map(
        (p: { approval: string }) => p.approval
      )
    ).toEqual(['rejected', 'superseded', 'none']);
  });
});

describe('a Plan run end to end (MODE-3)', () => {
  const SUBMIT = { goal: 'Clean then chart', nodes: [node('chart', ['clean']), node('clean')] };

  it('nudges once, keeps the approval pending across a restart, and approval runs the nodes as Agent turns in order', async () => {
    const ws = await tempDir();
    const log = path.join(ws, 'prompts.jsonl');
    // The scripted model's turn index counts user messages, and the nudge is one: turns 0–1 are the plan run.
    const model = await scriptSettings(ws, {
      turns: [
        [{ text: 'I had a look around.', chunkDelayMs: 0 }], // ends without submit_plan → the nudge
        [
          {
            toolCalls: [
              { toolName: 'submit_plan', input: SUBMIT },
              { toolName: 'exit_plan_mode', input: {} }
            ],
            chunkDelayMs: 0
          },
          { text: 'Waiting for your approval.', chunkDelayMs: 0 }
        ],
        [{ text: 'Cleaned.', chunkDelayMs: 0 }],
        [{ text: 'Charted.', chunkDelayMs: 0 }]
      ]
    });
    const env = { CELLMATE_SCRIPT_LOG: log };
    let { h, plans, flow } = await planHarness(ws, env);
    const chat = h.service.create();
    h.service.setMode(chat.id, 'plan');
    const planned = await h.sendAndWait(chat.id, 'make me a chart', model);
    const notices = planned.items.filter((i) => i.kind === 'notice');
    expect(notices.map((n) => (n as { text: string }).text)).toEqual([
      'Reminded the agent once that this mode expects submit_plan (or a plain "not needed").'
    ]);
    const prompts = (await readFile(log, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(JSON.stringify(prompts[1].prompt.at(-1))).toContain('If no plan is needed here, that is fine');
    const cards = planned.items.filter((i): i is ToolCallItem => i.kind === 'tool');
    expect(cards.map((c) => [c.name, c.status, c.display?.kind])).toEqual([
      ['submit_plan', 'ok', 'plan'],
      ['exit_plan_mode', 'ok', 'plan']
    ]);
    // The submit card followed the approval to pending (every card of the plan shows it).
    expect(cards.map((c) => (c.display as { approval: string }).approval)).toEqual(['pending', 'pending']);
    const planId = plans.latest(chat.id)!.id;

    // Companion restart while pending: everything reloaded from disk.
    flow.dispose();
    await h.dispose();
    ({ h, plans, flow } = await planHarness(ws, env));
    expect(plans.latest(chat.id)).toMatchObject({ id: planId, approval: 'pending' });
    expect(h.service.get(chat.id).mode).toBe('plan');
    expect(() => flow.answer(chat.id, 'plan-nope', 'approve', model)).toThrow(PlanNotPendingError);

    expect(flow.answer(chat.id, planId, 'approve', model)).toEqual({
      state: 'approved',
      message: 'Approved: the chat is in Agent mode; 2 steps run in order.'
    });
    expect(h.service.get(chat.id).mode).toBe('agent');
    await flow.settled(chat.id);
    const done = h.service.get(chat.id);
    const users = done.items.filter((i): i is UserItem => i.kind === 'user').map((u) => u.text.split('\n')[0]);
    expect(users).toEqual(['make me a chart', 'Plan step 1/2 [clean]: do clean', 'Plan step 2/2 [chart]: do chart']);
    expect(
      done.items
        .filter((i) => i.kind === 'tool')
        .map((c) => ((c as ToolCallItem).display as { approval: string }).approval)
    ).toEqual(['approved', 'approved']);
    // The step turns ran in Agent mode: their declared tools include write, the plan turn's did not.
    const all = (await readFile(log, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(all.filter((p) => p.turn <= 1).every((p) => !p.tools.includes('write'))).toBe(true);
    expect(all.filter((p) => p.turn > 1).map((p) => p.tools.includes('write'))).toEqual([true, true]);
    expect(() => flow.answer(chat.id, planId, 'approve', model)).toThrow(/is approved, not pending/);
    flow.dispose();
    await h.dispose();
  }, 30_000);

  it('approval with unusable model settings says why nothing runs (a notice in the chat)', async () => {
    const ws = await tempDir();
    const model = await scriptSettings(ws, {
      turns: [
        [
          {
            toolCalls: [
              { toolName: 'submit_plan', input: SUBMIT },
              { toolName: 'exit_plan_mode', input: {} }
            ],
            chunkDelayMs: 0
          },
          { text: 'Asked.', chunkDelayMs: 0 }
        ]
      ]
    });
    const { h, plans, flow } = await planHarness(ws, { OPENAI_API_KEY: '' });
    const chat = h.service.create();
    h.service.setMode(chat.id, 'plan');
    await h.sendAndWait(chat.id, 'plan it', model);
    flow.answer(chat.id, plans.latest(chat.id)!.id, 'approve', { provider: 'openai', model: 'gpt-4.1' });
    await flow.settled(chat.id);
    const last = h.service.get(chat.id).items.at(-1)!;
    expect(last).toMatchObject({ kind: 'notice', level: 'info' });
    expect((last as { text: string }).text).toMatch(/^The plan's next turn could not start: .*OPENAI_API_KEY/);
    flow.dispose();
    await h.dispose();
  }, 30_000);

  it('an honest "no plan needed" after the one nudge ends the run; Agent mode never nudges; rejection asks for a revision', async () => {
    const ws = await tempDir();
    const model = await scriptSettings(ws, {
      turns: [
        [{ text: 'That is a one-liner.', chunkDelayMs: 0 }], // → the nudge (a user message: the next script turn)
        [{ text: 'No plan needed here.', chunkDelayMs: 0 }],
        [{ text: 'Just answering.', chunkDelayMs: 0 }],
        [
          {
            toolCalls: [
              { toolName: 'submit_plan', input: SUBMIT },
              { toolName: 'exit_plan_mode', input: {} }
            ],
            chunkDelayMs: 0
          },
          { text: 'Asked.', chunkDelayMs: 0 }
        ],
        [{ text: 'Revising.', chunkDelayMs: 0 }]
      ]
    });
    const { h, plans, flow } = await planHarness(ws);
    const chat = h.service.create();
    h.service.setMode(chat.id, 'plan');
    const first = await h.sendAndWait(chat.id, 'rename x', model);
    expect(first.items.map((i) => i.kind)).toEqual(['user', 'assistant', 'notice', 'assistant']);
    // Retrying a nudged run drops the whole run (the nudge is not taken for the person's message).
    const nudgedHistory = h.store.get(chat.id)!.messages.length;
    await h.service.retry({ chatId: chat.id, settings: model });
    await h.service.waitForTurn(chat.id);
    const history = h.store.get(chat.id)!.messages;
    expect(history.filter((m) => m.role === 'user' && m.content === 'rename x')).toHaveLength(1);
    expect(history[0]).toMatchObject({ role: 'user', content: 'rename x' });
    expect(history.length).toBeLessThanOrEqual(nudgedHistory);
    h.service.setMode(chat.id, 'agent');
    const second = await h.sendAndWait(chat.id, 'what is x?', model);
    expect(second.items.slice(4).map((i) => i.kind)).toEqual(['user', 'assistant']);
    h.service.setMode(chat.id, 'plan');
    await h.sendAndWait(chat.id, 'plan it', model);
    const planId = plans.latest(chat.id)!.id;
    expect(flow.answer(chat.id, planId, 'reject', model, 'split the chart step')).toEqual({
      state: 'rejected',
      message: 'Rejected: the agent is asked to revise the plan.'
    });
    await flow.settled(chat.id);
    const after = h.service.get(chat.id);
    expect(after.mode).toBe('plan');
    const last = after.items.filter((i): i is UserItem => i.kind === 'user').at(-1)!;
    expect(last.text).toBe(
      'I rejected the plan (my reason: split the chart step). Please revise it and submit it again with submit_plan, then exit_plan_mode.'
    );
    flow.dispose();
    await h.dispose();
  }, 30_000);
});

describe('plan/resolve answers a person only (MODE-3: a hard approval gate)', () => {
  it('a connection that did not say interactive in hello is refused and the plan stays pending; a pane is answered', async () => {
    const ws = await tempDir();
    const h = await createHarness(ws);
    const resolved: string[] = [];
    const services = {
      workspace: ws,
      chats: h.service,
      plans: {
        answer: (c: string, p: string, d: 'approve' | 'reject') => (
          resolved.push(`${c} ${p} ${d}`),
          { state: d === 'approve' ? ('approved' as const) : ('rejected' as const), message: 'ok' }
        )
      }
    };
    const params = {
      chatId: 'chat-1',
      planId: 'plan-1',
      decision: 'approve' as const,
      model: { provider: 'scripted' as const, model: 'x' }
    };
    const headless = createRequestHandlers(services);
    await headless['cellmate/hello']({ protocolVersion: PROTOCOL_VERSION }, CancellationToken.None);
    await expect(
      Promise.resolve().then(() => headless['plan/resolve'](params, CancellationToken.None))
    ).rejects.toThrow("Only a person's Cellmate pane can answer a plan");
    expect(resolved).toEqual([]);
    const pane = createRequestHandlers(services);
    await pane['cellmate/hello']({ protocolVersion: PROTOCOL_VERSION, interactive: true }, CancellationToken.None);
    expect(await pane['plan/resolve'](params, CancellationToken.None)).toEqual({ state: 'approved', message: 'ok' });
    expect(resolved).toEqual(['chat-1 plan-1 approve']);
    await h.dispose();
  }, 60_000);
});
