/**
 * Each debug action has its own subject, and code the debuggee runs is judged like `eval`:
 * a real kernel debug session (ipykernel + debugpy) stopped at a breakpoint, the policy
 * store with the person's rules, the question broker with a person answering cards.
 *
 * - With `debug` allowed by a rule (the control: debugging works), `evaluate` of a harmless
 *   expression answers; one that calls `shutil.rmtree` is refused by a `shell rm*` deny rule,
 *   and the victim folder is intact; a breakpoint `condition` is judged the same way.
 * - On the default policy, "Always" on `status` allows `status` only: the next `evaluate`
 *   and `attach` still ask (the person's card shows the expression / the port).
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { QuestionItem } from '@cellmate/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PolicyStore } from '../../src/policy/policy-store.js';
import { Presence } from '../../src/questions/presence.js';
import { QuestionBroker } from '../../src/questions/question-broker.js';
import { createDebugTool } from '../../src/tools/debug/debug.js';
import type { ToolContext } from '../../src/gate/define-tool.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { debugRig, HAVE_PYTHON, runInKernel, type DebugRig } from './fixtures.js';

describe.skipIf(!HAVE_PYTHON)('debug actions before the policy', () => {
  let rig: DebugRig;
  let home: string;
  let victim: string;
  const cards: QuestionItem[] = [];
  /** What the person clicks on the next card: 0 = once, 1 = always, 2 = deny. */
  let click = 2;
  let registry: ToolRegistry;
  let calls = 0;
  const call = (args: Record<string, unknown>, chatId = 'chat-1') => {
    const ctx: ToolContext = {
      workspace: rig.ws,
      signal: new AbortController().signal,
      actor: 'model',
      chatId,
      turnId: `turn-${++calls}`
    };
    return registry.call('debug', args, ctx);
  };

  beforeAll(async () => {
    rig = await debugRig({ stopWaitMs: 60_000 });
    home = await mkdtemp(path.join(os.tmpdir(), 'cellmate-debug-home-'));
    victim = path.join(home, 'victim');
    await mkdir(victim);
    await writeFile(path.join(victim, 'keep.txt'), 'precious\n');
    const presence = new Presence();
    presence.attach();
    // eslint-disable-next-line prefer-const
    let broker: QuestionBroker;
    broker = new QuestionBroker({
      presence,
      sink: {
        publish: (chatId, event) => {
          if (event.type !== 'item-added' || event.item.kind !== 'question') return;
          const item = event.item;
          cards.push(item);
          queueMicrotask(() => broker.answer(chatId, item.questionId, { action: 'answer', selected: [click] }));
        }
      }
    });
    const policy = new PolicyStore({
      workspace: rig.ws,
      env: { HOME: home, CELLMATE_HOME: path.join(home, '.cellmate') }
    });
    registry = new ToolRegistry([createDebugTool({ sessions: rig.sessions, kernels: rig.kernels })], {
      policy,
      approvals: broker
    });
  }, 60_000);
  afterAll(async () => {
    registry?.dispose();
    await rig?.dispose();
    await rm(home, { recursive: true, force: true });
  });

  async function rules(list: unknown[]): Promise<void> {
    await mkdir(path.join(home, '.cellmate'), { recursive: true });
    await writeFile(path.join(home, '.cellmate', 'policy.json'), JSON.stringify({ rules: list }));
  }

  it('with debug allowed: evaluate answers; rmtree in evaluate or in a breakpoint condition is refused by the shell deny rule', async () => {
    await rules([
      { tool: 'debug', pattern: '*', action: 'allow' },
      { tool: 'eval', pattern: '*', action: 'allow' },
      { tool: 'shell', pattern: 'rm*', action: 'deny' }
    ]);
    await runInKernel(rig, 'keep = 41\nitems = [3, 5, 7]');
    expect((await call({ action: 'breakpoints', file: 'nb.ipynb', cell: 'cell1', lines: [3] })).ok).toBe(true);
    const run = await call({ action: 'run_cell', file: 'nb.ipynb', cell: 'cell1' });
    expect(run.output).toMatch(/Stopped \(breakpoint\)/);
    const fine = await call({ action: 'evaluate', expression: 'len(items) + keep' });
    expect(fine.ok, fine.output).toBe(true);
    expect(fine.output).toContain('44');
    for (const expression of [
      `__import__('shutil').rmtree(${JSON.stringify(victim)})`,
      `__import__('os').system('rm -rf ${victim}')`
    ]) {
      const r = await call({ action: 'evaluate', expression });
      expect(r.ok).toBe(false);
      expect(r.output).toMatch(
        /^Denied: shell on "rm[^"]*" \(.*\) is denied by the policy rule \{"tool":"shell","pattern":"rm\*","action":"deny"\}/
      );
    }
    const cond = await call({
      action: 'breakpoints',
      file: 'nb.ipynb',
      cell: 'cell1',
      lines: [3],
      condition: `__import__('shutil').rmtree(${JSON.stringify(victim)}) or True`
    });
    expect(cond.output).toMatch(/^Denied: shell on "rm/);
    await call({ action: 'continue' });
    expect(await readdir(victim)).toEqual(['keep.txt']);
    expect(cards).toEqual([]);
    await call({ action: 'terminate' });
  }, 120_000);

  it('on the default policy, "Always" on one action allows that action only: evaluate and attach still ask, naming the expression and the port', async () => {
    await rules([]);
    cards.length = 0;
    click = 1;
    // `continue` with no session to continue is exec tier (views and control of a running session ask nothing).
    await call({ action: 'continue' }, 'chat-2');
    expect(cards).toHaveLength(1);
    await call({ action: 'continue' }, 'chat-2');
    expect(cards).toHaveLength(1);
    click = 2;
    const evaluate = await call({ action: 'evaluate', expression: 'secret_value' }, 'chat-2');
    expect(evaluate.ok).toBe(false);
    const attach = await call({ action: 'attach', port: 5678 }, 'chat-2');
    expect(attach.ok).toBe(false);
    expect(cards).toHaveLength(3);
    // The first card's "Always" wrote a rule for `continue` alone; the others would cover one expression, one port.
    expect(cards.map((c) => c.approval?.pattern)).toEqual([
      'continue',
      'evaluate secret_value',
      'attach 127.0.0.1:5678'
    ]);
  }, 60_000);
});
