/**
 * Which `debug` calls ask, on the default policy with a real kernel debugger: looking at a
 * stopped program (status, stack, scopes, variables, threads, output) and setting
 * breakpoints never ask; starting a session and evaluating code do; stepping and continuing a session
 * the person already allowed ask nothing new. "Always" on `evaluate` names what it allows
 * in words, and covers evaluate in that session only.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PolicyStore } from '../../src/policy/policy-store.js';
import { answeringPerson } from '../helpers/answering-person.js';
import { debugRig, HAVE_PYTHON, runInKernel, type DebugRig } from './fixtures.js';

describe.skipIf(!HAVE_PYTHON)('debug approvals: fewer, better questions', () => {
  const person = answeringPerson('always');
  let rig: DebugRig;
  beforeAll(async () => {
    rig = await debugRig({
      stopWaitMs: 30_000,
      gate: (ws) => ({
        policy: new PolicyStore({
          workspace: ws,
          env: { HOME: path.join(ws, '.home'), CELLMATE_TRUSTED_WORKSPACES: ws }
        }),
        approvals: person.broker
      })
    });
  }, 60_000);
  afterAll(async () => rig?.dispose());

  const asked = (): string[] =>
    person.approvals().map((c) => JSON.stringify((c.approval!.args as { action: string }).action));

  it('views are read tier, control of an allowed session asks nothing, evaluate asks once with "Always" in words', async () => {
    expect((await rig.call({ action: 'status' })).ok).toBe(true);
    expect((await rig.call({ action: 'adapters' })).ok).toBe(true);
    expect(asked()).toEqual([]);
    // Without a session there is nothing the person allowed: continue asks (and then says there is no session).
    const early = await rig.call({ action: 'continue' });
    expect(early.output).toMatch(/no debug session is running/);
    expect(asked()).toEqual(['"continue"']);

    await runInKernel(rig, 'keep = 41\nitems = [3, 5, 7]');
    expect((await rig.call({ action: 'breakpoints', file: 'nb.ipynb', cell: 'cell1', lines: [3] })).ok).toBe(true);
    const run = await rig.call({ action: 'run_cell', file: 'nb.ipynb', cell: 'cell1' });
    expect(run.output).toMatch(/Stopped \(breakpoint\)/);
    expect(asked()).toEqual(['"continue"', '"run_cell"']);

    const stack = await rig.call({ action: 'stack' });
    expect(stack.ok, stack.output).toBe(true);
    const frame = Number(/frame (\d+)|\[(\d+)\]|id=(\d+)/.exec(stack.output)?.slice(1).find(Boolean) ?? NaN);
    const scopes = await rig.call({ action: 'scopes', ...(Number.isFinite(frame) ? { frame_id: frame } : {}) });
    expect(scopes.ok, scopes.output).toBe(true);
    const reference = Number(/reference=(\d+)/.exec(scopes.output)![1]);
    expect((await rig.call({ action: 'variables', reference })).output).toMatch(/total/);
    expect((await rig.call({ action: 'threads' })).ok).toBe(true);
    expect((await rig.call({ action: 'output' })).ok).toBe(true);
    const step = await rig.call({ action: 'step_over' });
    expect(step.ok, step.output).toBe(true);
    const cont = await rig.call({ action: 'continue' });
    expect(cont.ok, cont.output).toBe(true);
    expect(asked()).toEqual(['"continue"', '"run_cell"']);

    const evaluated = await rig.call({ action: 'evaluate', expression: 'total + 1' });
    expect(evaluated.ok, evaluated.output).toBe(true);
    // The expression is code the debuggee runs: asked as the debug action and as eval of that code.
    const cards = person.approvals().slice(2);
    expect(asked().length).toBeGreaterThanOrEqual(3);
    // In words, and no wider than the one expression.
    expect(cards.map((c) => c.approval!.allows)).toContain('debug: evaluate total + 1');
    for (const c of cards) expect(c.approval!.allows).not.toMatch(/\\|\*/);
    // "Always" covered that expression: evaluating it again asks nothing; control of the session asks nothing.
    const before = asked().length;
    expect((await rig.call({ action: 'evaluate', expression: 'total + 1' })).ok).toBe(true);
    expect((await rig.call({ action: 'terminate' })).output).toMatch(/Terminated debug session/);
    expect(asked()).toHaveLength(before);
  }, 120_000);
});
