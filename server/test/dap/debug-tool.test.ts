/**
 * The `debug` tool's contract (SPEC DBG-1…4): what the model sees, which half of an adapter
 * is missing, one session per chat with a TTL that terminates and frees the adapter.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DebugSessionManager } from '../../src/dap/session-manager.js';
import { createDebugTool } from '../../src/tools/debug/debug.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { tempDir } from '../helpers/temp.js';
import { debugRig, HAVE_PYTHON, runInKernel, type DebugRig } from './fixtures.js';

describe('debug: what the model sees (HARN-1)', () => {
  it('schema and description snapshot; examples valid', async () => {
    const registry = new ToolRegistry([]);
    const tool = createDebugTool({ sessions: new DebugSessionManager() });
    registry.register(tool);
    const declared = {
      name: tool.name,
      tier: tool.tier,
      parameters: registry.inputJsonSchema('debug'),
      description: registry.modelDescription('debug')
    };
    await expect(`${JSON.stringify(declared, null, 2)}\n`).toMatchFileSnapshot('../tools/__schemas__/debug.json');
    expect(tool.tier).toBe('exec');
    expect(tool.parallelSafe).toBe(false);
    for (const example of tool.examples) expect(tool.parameters.safeParse(example.args).success).toBe(true);
    for (const word of [/When to use/, /cannot/, /Returns/, /Cost/]) expect(tool.description).toMatch(word);
    registry.dispose();
  });
});

describe('debug adapters: which half is missing (DBG-4)', () => {
  const call = async (ws: string, env: NodeJS.ProcessEnv) => {
    const registry = new ToolRegistry([createDebugTool({ sessions: new DebugSessionManager(), env })]);
    const r = await registry.call(
      'debug',
      { action: 'adapters' },
      { workspace: ws, signal: new AbortController().signal, actor: 'model', chatId: 'c' }
    );
    registry.dispose();
    return r.output.split('\n');
  };

  it('marker present, executable absent; executable present, marker absent; both absent', async () => {
    const ws = await tempDir();
    const bin = await tempDir();
    await writeFile(path.join(ws, 'CMakeLists.txt'), 'project(x)\n');
    // A PATH with only a `dlv` (and no lldb-dap, no python3), and no Cellmate Python either.
    await writeFile(path.join(bin, 'dlv'), '#!/bin/sh\n', { mode: 0o755 });
    const lines = await call(ws, { PATH: bin, CELLMATE_PYTHON: path.join(bin, 'no-python') });
    expect(lines).toContain(
      'lldb: not usable here (marker CMakeLists.txt found) — executable missing: needs lldb-dap ($CELLMATE_LLDB_DAP, else lldb-dap or lldb-dap-<n> on PATH; Debian: `apt-get install lldb-19` gives /usr/bin/lldb-dap-19)'
    );
    expect(lines).toContain(
      `delve: not usable here (executable \`${path.join(bin, 'dlv')} dap\` found) — root marker missing: no go.mod in the workspace root`
    );
    expect(lines.find((l) => l.startsWith('debugpy:'))).toBe(
      "debugpy: not usable here — root marker missing: no pyproject.toml / setup.py / requirements.txt in the workspace root; executable missing: needs a Python with debugpy (in a trusted workspace the project .venv/bin or venv/bin python first; then python3 on PATH, then Cellmate's own Python; `pip install debugpy`) (both halves missing: a root marker (pyproject.toml, setup.py, requirements.txt) and the executable)"
    );
    expect(lines.at(-1)).toMatch(/^kernel: usable for notebook cells/);
  });

  it('a versioned lldb-dap-19 (Debian) counts as lldb-dap; go.mod + dlv → usable', async () => {
    const ws = await tempDir();
    const bin = await tempDir();
    await writeFile(path.join(ws, 'Cargo.toml'), '[package]\n');
    await writeFile(path.join(ws, 'go.mod'), 'module x\n');
    for (const exe of ['lldb-dap-19', 'dlv']) await writeFile(path.join(bin, exe), '#!/bin/sh\n', { mode: 0o755 });
    const lines = await call(ws, { PATH: bin });
    expect(lines).toContain(`lldb: usable — marker Cargo.toml, adapter \`${path.join(bin, 'lldb-dap-19')}\``);
    expect(lines).toContain(`delve: usable — marker go.mod, adapter \`${path.join(bin, 'dlv')} dap\``);
  });

  it('$CELLMATE_DLV / $CELLMATE_LLDB_DAP name the executable; a wrong one is reported, PATH not searched behind it', async () => {
    const ws = await tempDir();
    const bin = await tempDir();
    const tools = await tempDir();
    await writeFile(path.join(ws, 'go.mod'), 'module x\n');
    await writeFile(path.join(ws, 'CMakeLists.txt'), 'project(x)\n');
    for (const exe of ['lldb-dap', 'dlv']) await writeFile(path.join(bin, exe), '#!/bin/sh\n', { mode: 0o755 });
    await writeFile(path.join(tools, 'dlv'), '#!/bin/sh\n', { mode: 0o755 });
    await writeFile(path.join(tools, 'not-executable'), '', { mode: 0o644 });
    const lines = await call(ws, {
      PATH: bin,
      CELLMATE_DLV: path.join(tools, 'dlv'),
      CELLMATE_LLDB_DAP: path.join(tools, 'not-executable')
    });
    expect(lines).toContain(`delve: usable — marker go.mod, adapter \`${path.join(tools, 'dlv')} dap\``);
    expect(lines.find((l) => l.startsWith('lldb:'))).toBe(
      `lldb: not usable here (marker CMakeLists.txt found) — executable missing ($CELLMATE_LLDB_DAP=${path.join(tools, 'not-executable')} is not an executable file): needs lldb-dap ($CELLMATE_LLDB_DAP, else lldb-dap or lldb-dap-<n> on PATH; Debian: \`apt-get install lldb-19\` gives /usr/bin/lldb-dap-19)`
    );
  });

  it('launch with an unusable adapter is refused with the same precise reason', async () => {
    const ws = await tempDir();
    await mkdir(path.join(ws, 'src'));
    await writeFile(path.join(ws, 'src', 'main.go'), 'package main\nfunc main() {}\n');
    const { processLauncher } = await import('../../src/dap/process-adapter.js');
    const registry = new ToolRegistry([
      createDebugTool({
        sessions: new DebugSessionManager(),
        env: { PATH: '' },
        launchProcess: processLauncher({ env: { PATH: '' } })
      })
    ]);
    const r = await registry.call(
      'debug',
      { action: 'launch', program: 'src/main.go' },
      { workspace: ws, signal: new AbortController().signal, actor: 'model', chatId: 'c' }
    );
    expect(r.ok).toBe(false);
    expect(r.output).toContain(
      'delve: not usable here — root marker missing: no go.mod in src or above it within the workspace; executable missing: needs dlv ($CELLMATE_DLV, else dlv on PATH;'
    );
    registry.dispose();
  });
});

describe.skipIf(!HAVE_PYTHON)('debug: waits are bounded (DBG-3)', () => {
  let rig: DebugRig;
  beforeAll(async () => {
    rig = await debugRig({ stopWaitMs: 1500 });
  }, 60_000);
  afterAll(async () => rig?.dispose());

  it('a cell that runs on answers "still running"; pause stops it where it is; terminate ends the session', async () => {
    const run = await rig.call({ action: 'run_cell', file: 'nb.ipynb', cell: '#4' });
    expect(run.ok, run.output).toBe(true);
    expect(run.output).toContain('Still running after 2 s (no stop yet).');
    const again = await rig.call({ action: 'continue' });
    expect(again.output).toContain('the debuggee is not stopped (it is running). Call pause');
    const paused = await rig.call({ action: 'pause' });
    expect(paused.output).toMatch(/Stopped \(pause\)/);
    const stack = await rig.call({ action: 'stack' });
    // Where the pause lands depends on timing (debugpy may report line 0 while inside sleep()); the frame is the cell's.
    expect(stack.output).toMatch(/<module> — nb\.ipynb cell 4 \(id cell3\), line \d+/);
    const end = await rig.call({ action: 'terminate' });
    expect(end.output).toMatch(/Terminated debug session/);
    expect((await rig.call({ action: 'status' })).output).toBe('No debug session is running in this chat.');
  }, 120_000);
});

describe.skipIf(!HAVE_PYTHON)('debug sessions: one per chat, hard TTL (DBG-2)', () => {
  let rig: DebugRig;
  beforeAll(async () => {
    rig = await debugRig({ ttlMs: 10_000 });
  }, 60_000);
  afterAll(async () => rig?.dispose());

  it('a second start is refused naming the running session; the TTL terminates it and frees the kernel debugger', async () => {
    await runInKernel(rig, 'keep = 41\nitems = [3, 5, 7]');
    await rig.call({ action: 'breakpoints', file: 'nb.ipynb', cell: 'cell1', lines: [3] });
    const run = await rig.call({ action: 'run_cell', file: 'nb.ipynb', cell: 'cell1' });
    expect(run.output).toMatch(/Stopped \(breakpoint\)/);
    const id = /Started debug session (\w+)/.exec(run.output)![1];
    const again = await rig.call({ action: 'run_cell', file: 'nb.ipynb', cell: 'cell0' });
    expect(again.ok).toBe(false);
    expect(again.output).toContain(`a cell is still running under the debugger (session ${id}, stopped)`);
    const launch = await rig.call({ action: 'launch', program: 'x.py' });
    expect(launch.ok).toBe(false);
    expect(launch.output).toMatch(
      new RegExp(`already running in this chat: session ${id} \\(kernel: this chat's private Python kernel, stopped`)
    );
    // Another chat is independent.
    expect((await rig.call({ action: 'status' }, 'chat-2')).output).toBe('No debug session is running in this chat.');

    // TTL: wait for the session to end by itself (bounded wait, no timing assertion).
    const ended = new Promise<void>((resolve) =>
      rig.sessions.onDidChange((e) => e.session.id === id && e.session.state === 'ended' && resolve())
    );
    await ended;
    const status = await rig.call({ action: 'status' });
    expect(status.output).toContain(
      `the previous debug session ${id} (kernel) ended: the session reached its 10-second limit and was terminated`
    );
    expect(status.output).toContain('No debug session is running in this chat.');
    // The stopped cell ran on, the kernel's debugger is off again, the kernel's state is kept.
    expect(await runInKernel(rig, 'print(keep, result)')).toBe('41 15\n');
    const { handle } = await rig.kernels.acquire('chat-1', 'python');
    const info = await handle.session.client.debugRequest({ type: 'request', seq: 1, command: 'debugInfo' });
    expect((info.body as { isStarted: boolean }).isStarted).toBe(false);
  }, 120_000);
});
