/**
 * The `kernel` adapter through the `debug` tool on a real ipykernel with debugpy (SPEC
 * DBG-3/4, issue #12 acceptance "kernel"): a breakpoint on line 3 of a notebook cell,
 * run_cell stops there, stack/variables/evaluate see the cell's locals, continue finishes
 * the cell, and the kernel's other variables are intact; the same with an exception
 * breakpoint on a cell that raises.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { KernelDapChannel } from '../../src/dap/kernel-channel.js';
import { createEvalTool } from '../../src/tools/eval/eval.js';
import { debugRig, HAVE_PYTHON, notebookJson, runInKernel, type DebugRig } from './fixtures.js';

describe.skipIf(!HAVE_PYTHON)("debug: notebook cells under the kernel's own debugger", () => {
  let rig: DebugRig;
  beforeAll(async () => {
    rig = await debugRig();
  }, 60_000);
  afterAll(async () => rig?.dispose());

  it('breakpoint on a cell line → run_cell stops there; locals, evaluate, continue; state kept', async () => {
    await runInKernel(rig, 'keep = 41\nitems = [3, 5, 7]');
    const bp = await rig.call({ action: 'breakpoints', file: 'nb.ipynb', cell: 'cell1', lines: [3] });
    expect(bp.ok).toBe(true);
    expect(bp.output).toContain('line 3: total += items[i] — pending, not verified yet');

    const run = await rig.call({ action: 'run_cell', file: 'nb.ipynb', cell: 'cell1' });
    expect(run.ok, run.output).toBe(true);
    expect(run.output).toContain('line 3: total += items[i] — set, verified');
    expect(run.output).toMatch(
      /Stopped \(breakpoint\) in <module> at nb\.ipynb cell 2 \(id cell1\), line 3: total \+= items\[i\]/
    );
    const display = run.ok ? run.display : undefined;
    expect(display?.kind).toBe('debug');
    if (display?.kind === 'debug') {
      expect(display.state).toBe('stopped');
      expect(display.frames?.[0]).toMatchObject({
        line: 3,
        sourceLine: '    total += items[i]',
        cell: { notebook: 'nb.ipynb', cellId: 'cell1', index: 1 }
      });
    }

    const stack = await rig.call({ action: 'stack' });
    expect(stack.output).toMatch(
      /^frame (\d+) <module> — nb\.ipynb cell 2 \(id cell1\), line 3: total \+= items\[i\]$/m
    );
    const frameId = Number(/^frame (\d+)/.exec(stack.output)![1]);
    const scopes = await rig.call({ action: 'scopes', frame_id: frameId });
    const ref = Number(/reference=(\d+)/.exec(scopes.output)![1]);
    const vars = await rig.call({ action: 'variables', reference: ref });
    // A cell's frame is module level: its locals are the kernel's namespace, `keep` included.
    expect(vars.output).toMatch(/^i \(int\) = 0$/m);
    expect(vars.output).toMatch(/^total \(int\) = 0$/m);
    expect(vars.output).toMatch(/^keep \(int\) = 41$/m);
    const ev = await rig.call({ action: 'evaluate', expression: 'items[i] * 100 + keep', frame_id: frameId });
    expect(ev.output).toMatch(/^341 \(int\)/);

    // Clear the breakpoint, continue: the cell finishes.
    await rig.call({ action: 'breakpoints', file: 'nb.ipynb', cell: 'cell1', lines: [] });
    const cont = await rig.call({ action: 'continue' });
    expect(cont.output).toContain('The cell finished without error.');
    expect(await runInKernel(rig, 'print(keep, result, total)')).toBe('41 15 15\n');
    const status = await rig.call({ action: 'status' });
    expect(status.output).toMatch(/Running: session \w+ \(kernel: this chat's private Python kernel, finished/);
    const end = await rig.call({ action: 'terminate' });
    expect(end.output).toMatch(/Terminated debug session \w+ \(kernel/);
    expect((await rig.call({ action: 'status' })).output).toBe('No debug session is running in this chat.');
    expect(await runInKernel(rig, 'print(keep)')).toBe('41\n');
  }, 120_000);

  it("another client of the kernel debugger replacing the cell's breakpoints does not undo the agent's: they are set again before a resume (issue #12)", async () => {
    await runInKernel(rig, 'keep = 41\nitems = [3, 5, 7]');
    await rig.call({ action: 'breakpoints', file: 'nb.ipynb', cell: 'cell1', lines: [3] });
    const run = await rig.call({ action: 'run_cell', file: 'nb.ipynb', cell: 'cell1' });
    onTestFinished(async () => {
      await rig.call({ action: 'terminate' });
    });
    expect(run.output).toMatch(/Stopped \(breakpoint\) in <module> at nb\.ipynb cell 2 \(id cell1\), line 3/);
    // The card carries the session's breakpoints by the kernel's source path (the pane draws them).
    const display = run.ok && run.display?.kind === 'debug' ? run.display : undefined;
    expect(display?.breakpoints).toHaveLength(1);
    const source = display!.breakpoints![0]!.source;
    expect(display!.breakpoints![0]!.lines).toEqual([3]);
    // JupyterLab's debugger restoring a view read before the agent's change writes it back: here,
    // no breakpoint at all in the cell.
    const { handle } = await rig.kernels.acquire('chat-1', 'python');
    const other = new KernelDapChannel(handle.session.client);
    onTestFinished(() => other.dispose());
    await other.request('setBreakpoints', { source: { path: source }, breakpoints: [], sourceModified: false });
    const again = await rig.call({ action: 'continue' });
    expect(again.output).toMatch(/Stopped \(breakpoint\) in <module> at nb\.ipynb cell 2 \(id cell1\), line 3/);
    expect(await rig.call({ action: 'evaluate', expression: 'i' }).then((r) => r.output)).toMatch(/^1 \(int\)/);
    await rig.call({ action: 'breakpoints', file: 'nb.ipynb', cell: 'cell1', lines: [] });
    const cleared = await rig.call({ action: 'continue' });
    expect(cleared.ok && cleared.display?.kind === 'debug' ? cleared.display.breakpoints : undefined).toEqual([]);
    expect(cleared.output).toContain('The cell finished without error.');
  }, 120_000);

  it("a breakpoint in a module the cell imports stops there, under the kernel's debugger", async () => {
    await writeFile(path.join(rig.ws, 'helper.py'), 'def scale(x):\n    doubled = x * 2\n    return doubled + 1\n');
    await writeFile(
      path.join(rig.ws, 'nb2.ipynb'),
      notebookJson(['import helper\nvalue = helper.scale(20)\nprint(value)'])
    );
    const bp = await rig.call({ action: 'breakpoints', file: 'helper.py', lines: [3] });
    expect(bp.output).toContain('line 3: return doubled + 1 — pending, not verified yet');
    const run = await rig.call({ action: 'run_cell', file: 'nb2.ipynb', cell: '#1' });
    expect(run.output).toContain('helper.py:\nline 3: return doubled + 1 — set, verified');
    expect(run.output).toMatch(/Stopped \(breakpoint\) in scale at .*helper\.py, line 3: return doubled \+ 1/);
    expect((await rig.call({ action: 'evaluate', expression: 'doubled' })).output).toMatch(/^40 \(int\)/);
    await rig.call({ action: 'breakpoints', file: 'helper.py', lines: [] });
    expect((await rig.call({ action: 'continue' })).output).toContain(
      'The cell finished without error.\nLast output:\n41'
    );
    await rig.call({ action: 'terminate' });
  }, 120_000);

  it('exception breakpoint: a raising cell stops at the raise, evaluate there, continue ends it with the error', async () => {
    await runInKernel(rig, 'keep = 41');
    const ex = await rig.call({ action: 'exception_breakpoints', filters: ['uncaught'] });
    expect(ex.output).toContain('stop on uncaught exceptions (applied when the session starts)');
    const run = await rig.call({ action: 'run_cell', file: 'nb.ipynb', cell: '#3' });
    expect(run.ok, run.output).toBe(true);
    expect(run.output).toMatch(
      /Stopped \(exception ZeroDivisionError: division by zero\) in \S+ at nb\.ipynb cell 3 \(id cell2\), line (3|5): /
    );
    const stack = await rig.call({ action: 'stack' });
    const lines = stack.output.split('\n');
    // The frame where it raised is in the cell, the helper's line 3, with its own locals.
    const ratio = lines.find((l) => / ratio — /.test(l));
    expect(ratio).toMatch(/nb\.ipynb cell 3 \(id cell2\), line 3: return scaled \/ b$/);
    const frameId = Number(/^frame (\d+)/.exec(ratio!)![1]);
    const ev = await rig.call({ action: 'evaluate', expression: 'scaled / (b + 1)', frame_id: frameId });
    expect(ev.output).toMatch(/^410\.0 \(float\)/);
    const cont = await rig.call({ action: 'continue' });
    expect(cont.output).toContain('The cell finished with an error: ZeroDivisionError: division by zero.');
    await rig.call({ action: 'terminate' });
    await rig.call({ action: 'exception_breakpoints', filters: [] });
    expect(await runInKernel(rig, 'print(keep)')).toBe('41\n');
  }, 120_000);

  it('eval while run_cell is paused: refused at once with where it is paused; runs again after continue', async () => {
    rig.registry.register(createEvalTool({ kernels: rig.kernels, registry: () => rig.registry }));
    const evalCall = (code: string) =>
      rig.registry.call(
        'eval',
        { code, description: 'Print a kernel variable' },
        { workspace: rig.ws, signal: new AbortController().signal, actor: 'model', chatId: 'chat-1' }
      );
    await runInKernel(rig, 'keep = 41\nitems = [3, 5, 7]');
    await rig.call({ action: 'breakpoints', file: 'nb.ipynb', cell: 'cell1', lines: [3] });
    const run = await rig.call({ action: 'run_cell', file: 'nb.ipynb', cell: 'cell1' });
    expect(run.output).toMatch(/Stopped \(breakpoint\)/);
    const session = rig.sessions.chat('chat-1').active!.session.id;
    // Queued behind the paused cell this would wait for the idle budget (minutes): the test's timeout would fail it.
    const refused = await evalCall('print(keep)');
    expect(refused.ok).toBe(false);
    expect(refused.output).toContain(
      `The kernel is paused in the debugger at nb.ipynb cell 2 (id cell1), line 3: total += items[i] (debug session ${session}). Nothing else can run in that kernel until the debugged cell goes on: call debug continue (or step) until it finishes, or debug terminate, then run this again.`
    );
    await rig.call({ action: 'breakpoints', file: 'nb.ipynb', cell: 'cell1', lines: [] });
    expect((await rig.call({ action: 'continue' })).output).toContain('The cell finished without error.');
    const after = await evalCall('print(keep, result)');
    expect(after.ok, after.output).toBe(true);
    expect(after.output).toContain('41 15');
    await rig.call({ action: 'terminate' });
  }, 120_000);
});
