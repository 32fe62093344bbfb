/**
 * debugpy through the `debug` tool (SPEC DBG-3/4/5, issue #12 acceptance "debugpy"): a
 * fixture program with an off-by-one bug; breakpoint, launch, variables in the loop frame,
 * evaluate in that frame, continue to the end, read output. The adapter is the real
 * `python -m debugpy.adapter`, found through the project's `.venv/bin/python` (DBG-5).
 * Session rules on it: a second launch refused, `kill -9` of the adapter mid-session.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processLauncher } from '../../src/dap/process-adapter.js';
import { debugRig, HAVE_PYTHON, leftOver, processesWith, PYTHON, type DebugRig } from './fixtures.js';

/** Line 4 is `total += values[i]`; the loop skips the last value. */
const PROGRAM = [
  'def average(values):',
  '    total = 0',
  '    for i in range(len(values) - 1):',
  '        total += values[i]',
  '    return total / len(values)',
  '',
  'if __name__ == "__main__":',
  '    data = [4, 8, 15, 16]',
  '    print("average:", average(data))',
  ''
].join('\n');

describe.skipIf(!HAVE_PYTHON)('debug: programs under debugpy', () => {
  let rig: DebugRig;
  let savedTrust: string | undefined;
  beforeAll(async () => {
    rig = await debugRig({ launchProcess: processLauncher({ env: process.env }) });
    // The project's own venv python is used only in a workspace the person trusts.
    savedTrust = process.env.CELLMATE_TRUSTED_WORKSPACES;
    process.env.CELLMATE_TRUSTED_WORKSPACES = rig.ws;
    await writeFile(path.join(rig.ws, 'requirements.txt'), '');
    await writeFile(path.join(rig.ws, 'avg.py'), PROGRAM);
    // The project's own venv python (DBG-5): a wrapper around the repo's venv, which has debugpy.
    await mkdir(path.join(rig.ws, '.venv', 'bin'), { recursive: true });
    await writeFile(path.join(rig.ws, '.venv', 'bin', 'python'), `#!/bin/sh\nexec ${PYTHON} "$@"\n`);
    await chmod(path.join(rig.ws, '.venv', 'bin', 'python'), 0o755);
  }, 60_000);
  afterAll(async () => {
    if (savedTrust === undefined) delete process.env.CELLMATE_TRUSTED_WORKSPACES;
    else process.env.CELLMATE_TRUSTED_WORKSPACES = savedTrust;
    await rig?.dispose();
  });

  it('adapters: debugpy usable through the project .venv python', async () => {
    const r = await rig.call({ action: 'adapters' });
    expect(r.output).toContain(
      `debugpy: usable — marker requirements.txt, adapter \`${path.join(rig.ws, '.venv', 'bin', 'python')} -m debugpy.adapter\``
    );
  }, 60_000);

  it('off-by-one: breakpoint, launch, variables, evaluate in the frame, continue, output', async () => {
    const bp = await rig.call({ action: 'breakpoints', file: 'avg.py', lines: [4] });
    expect(bp.output).toContain('line 4: total += values[i] — pending, not verified yet');
    const launch = await rig.call({ action: 'launch', program: 'avg.py' });
    expect(launch.ok, launch.output).toBe(true);
    expect(launch.output).toContain('line 4: total += values[i] — set, verified');
    expect(launch.output).toMatch(/Stopped \(breakpoint\) in average at .*avg\.py, line 4: total \+= values\[i\]/);

    const stack = await rig.call({ action: 'stack' });
    const top = stack.output.split('\n')[0]!;
    expect(top).toMatch(/^frame \d+ average — .*avg\.py, line 4: total \+= values\[i\]$/);
    expect(stack.output).toMatch(/<module> — .*avg\.py, line 9: print\("average:", average\(data\)\)/);
    const frameId = Number(/^frame (\d+)/.exec(top)![1]);
    const scopes = await rig.call({ action: 'scopes', frame_id: frameId });
    const locals = Number(/^Locals: reference=(\d+)/m.exec(scopes.output)![1]);
    const vars = await rig.call({ action: 'variables', reference: locals });
    expect(vars.output).toMatch(/^i \(int\) = 0$/m);
    expect(vars.output).toMatch(/^values \(list\) = \[4, 8, 15, 16\] \[expand: reference=\d+\]$/m);
    const ev = await rig.call({
      action: 'evaluate',
      expression: 'len(range(len(values) - 1)), len(values)',
      frame_id: frameId
    });
    expect(ev.output).toMatch(/^\(3, 4\) \(tuple\)/);

    // Second launch while this one runs: refused, naming the running session (DBG-2).
    const second = await rig.call({ action: 'launch', program: 'avg.py' });
    expect(second.ok).toBe(false);
    expect(second.output).toMatch(/already running in this chat: session \w+ \(debugpy: avg\.py, stopped/);

    await rig.call({ action: 'breakpoints', file: 'avg.py', lines: [] });
    const cont = await rig.call({ action: 'continue' });
    expect(cont.output).toContain('The program finished.');
    const out = await rig.call({ action: 'output' });
    expect(out.output).toContain('average: 6.75');
    const end = await rig.call({ action: 'terminate' });
    expect(end.output).toMatch(/Terminated debug session \w+ \(debugpy: avg\.py\)/);
    expect(await leftOver(path.join(rig.ws, 'avg.py'))).toEqual([]);
  }, 120_000);

  it('kill -9 of the adapter mid-session: a clear error, status shows no session, nothing leaked', async () => {
    await rig.call({ action: 'breakpoints', file: 'avg.py', lines: [4] }, 'chat-kill');
    const launch = await rig.call({ action: 'launch', program: 'avg.py' }, 'chat-kill');
    expect(launch.output).toMatch(/Stopped \(breakpoint\)/);
    // Our session's own adapter process (never a process found by name: other kernels run debugpy adapters too).
    const pid = rig.sessions.chat('chat-kill').active?.pid;
    expect(pid).toBeGreaterThan(0);
    expect(processesWith('debugpy.adapter').some((l) => l.trim().startsWith(`${pid} `))).toBe(true);
    process.kill(pid!, 'SIGKILL');
    // The next call reports it (no polling on time: the exit reaches the session before the call's reply).
    let status = await rig.call({ action: 'status' }, 'chat-kill');
    for (let i = 0; i < 50 && /Running:/.test(status.output); i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = await rig.call({ action: 'status' }, 'chat-kill');
    }
    expect(status.output).toMatch(
      /the previous debug session \w+ \(debugpy\) ended: the debugpy debug adapter went away: the adapter process ended \(signal SIGKILL\)/
    );
    expect(status.output).toContain('No debug session is running in this chat.');
    expect(await leftOver(path.join(rig.ws, 'avg.py'))).toEqual([]);
    await rig.call({ action: 'breakpoints', file: 'avg.py', lines: [] }, 'chat-kill');
  }, 120_000);
});
