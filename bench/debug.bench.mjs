// debug: how long the `debug` tool takes from launch to the first stop, against a bare DAP
// client on the same fixture in the same run, and a notebook cell under the kernel's debugger.
//
//   npm run bench -- debug [N=10]
//
// ours:   registry.call('debug', {action: 'launch', program: 'avg.py'}) with a breakpoint set
//         before → the tool's result (adapter found via the project venv, spawned in its own
//         process group, initialize/launch/initialized/setBreakpoints/configurationDone, stop
//         formatted with its stack and the card's locals), then terminate.
// raw:    a bare script: spawn `python -m debugpy.adapter`, vscode-jsonrpc stream framing, the
//         same requests, until the `stopped` event; then kill. Alternates with ours.
// kernel: registry.call('debug', {action: 'run_cell'}) on a warm private ipykernel: debugInfo,
//         initialize, attach, dumpCell, setBreakpoints, configurationDone, execute → stopped;
//         then continue and terminate (each run starts and leaves the kernel's debugger).
//
// Last line: debug: launch_to_stopped_ms=<p50 ours> raw_launch_to_stopped_ms=<p50 raw> kernel_cell_to_stopped_ms=<p50 kernel>
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { machineLine, median, round } from './lib.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const python = path.join(repo, '.venv', 'bin', 'python');
const srv = path.join(repo, 'server', 'dist');
for (const f of [python, path.join(srv, 'tools', 'debug', 'debug.js')]) {
  if (!fs.existsSync(f)) {
    console.error(`${f} is missing: run scripts/setup first`);
    process.exit(1);
  }
}
const N = Number(process.argv[2] ?? 10);
const imp = (p) => import(pathToFileURL(path.join(srv, p)).href);
const { createDebugTool } = await imp('tools/debug/debug.js');
const { DebugSessionManager } = await imp('dap/session-manager.js');
const { processLauncher } = await imp('dap/process-adapter.js');
const { KernelManager } = await imp('kernels/kernel-manager.js');
const { ToolRegistry } = await imp('gate/registry.js');
const rpc = await import(pathToFileURL(path.join(repo, 'node_modules', 'vscode-jsonrpc', 'node.js')).href);

const ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cellmate-bench-debug-')));
const PROGRAM =
  'def average(values):\n    total = 0\n    for i in range(len(values) - 1):\n        total += values[i]\n    return total / len(values)\n\nif __name__ == "__main__":\n    print("average:", average([4, 8, 15, 16]))\n';
fs.writeFileSync(path.join(ws, 'avg.py'), PROGRAM);
fs.writeFileSync(path.join(ws, 'requirements.txt'), '');
fs.mkdirSync(path.join(ws, '.venv', 'bin'), { recursive: true });
fs.writeFileSync(path.join(ws, '.venv', 'bin', 'python'), `#!/bin/sh\nexec ${python} "$@"\n`, { mode: 0o755 });
const cells = ['keep = 1', 'total = 0\nfor i in range(3):\n    total += i\nresult = total'];
fs.writeFileSync(
  path.join(ws, 'nb.ipynb'),
  JSON.stringify({
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {},
    cells: cells.map((source, i) => ({
      id: `c${i}`,
      cell_type: 'code',
      metadata: {},
      outputs: [],
      execution_count: null,
      source
    }))
  })
);

const kernels = new KernelManager({
  workspace: ws,
  pythonArgv: [python, '-m', 'ipykernel_launcher', '-f', '{connection_file}']
});
const sessions = new DebugSessionManager({ stopWaitMs: 60_000 });
const registry = new ToolRegistry([
  createDebugTool({ sessions, kernels, env: process.env, launchProcess: processLauncher({ env: process.env }) })
]);
const ctx = (chatId) => ({ workspace: ws, signal: new AbortController().signal, actor: 'model', chatId });
const call = async (args, chatId = 'bench') => {
  const r = await registry.call('debug', args, ctx(chatId));
  if (!r.ok) throw new Error(`debug ${args.action}: ${r.output}`);
  return r;
};

async function ours() {
  await call({ action: 'breakpoints', file: 'avg.py', lines: [4] });
  const t0 = performance.now();
  const r = await call({ action: 'launch', program: 'avg.py' });
  const ms = performance.now() - t0;
  if (!/Stopped \(breakpoint\)/.test(r.output)) throw new Error(`not stopped: ${r.output}`);
  await call({ action: 'terminate' });
  return ms;
}

/** The bare DAP client: the least a script needs to reach the same stop. */
async function raw() {
  const t0 = performance.now();
  const child = spawn(python, ['-m', 'debugpy.adapter'], {
    cwd: ws,
    stdio: ['pipe', 'pipe', 'inherit'],
    detached: true
  });
  const reader = new rpc.StreamMessageReader(child.stdout);
  const writer = new rpc.StreamMessageWriter(child.stdin);
  let seq = 1;
  const waiting = new Map();
  const events = [];
  reader.listen((m) => {
    if (m.type === 'response') waiting.get(m.request_seq)?.(m);
    else if (m.type === 'event') events.push(m) && waiting.get(m.event)?.(m);
  });
  const request = (command, args) =>
    new Promise((resolve) => {
      const s = seq++;
      waiting.set(s, resolve);
      void writer.write({ seq: s, type: 'request', command, arguments: args });
    });
  const event = (name) =>
    new Promise((resolve) => {
      const hit = events.find((e) => e.event === name);
      if (hit) resolve(hit);
      else waiting.set(name, resolve);
    });
  await request('initialize', {
    clientID: 'raw',
    adapterID: 'debugpy',
    pathFormat: 'path',
    linesStartAt1: true,
    columnsStartAt1: true
  });
  const launched = request('launch', {
    program: path.join(ws, 'avg.py'),
    console: 'internalConsole',
    justMyCode: true
  });
  await event('initialized');
  await request('setBreakpoints', { source: { path: path.join(ws, 'avg.py') }, breakpoints: [{ line: 4 }] });
  await request('configurationDone');
  await launched;
  await event('stopped');
  const ms = performance.now() - t0;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    /* gone */
  }
  reader.dispose();
  writer.dispose();
  return ms;
}

async function kernelCell() {
  await call({ action: 'breakpoints', file: 'nb.ipynb', cell: 'c1', lines: [3] }, 'bench-kernel');
  const t0 = performance.now();
  const r = await call({ action: 'run_cell', file: 'nb.ipynb', cell: 'c1' }, 'bench-kernel');
  const ms = performance.now() - t0;
  if (!/Stopped \(breakpoint\)/.test(r.output)) throw new Error(`not stopped: ${r.output}`);
  await call({ action: 'breakpoints', file: 'nb.ipynb', cell: 'c1', lines: [] }, 'bench-kernel');
  await call({ action: 'continue' }, 'bench-kernel');
  await call({ action: 'terminate' }, 'bench-kernel');
  return ms;
}

try {
  // Warm-up: imports, the kernel, the file cache.
  await ours();
  await raw();
  await kernels.acquire('bench-kernel', 'python');
  await kernelCell();
  const a = [];
  const b = [];
  const k = [];
  for (let i = 0; i < N; i++) {
    a.push(await ours());
    b.push(await raw());
    k.push(await kernelCell());
  }
  console.log(machineLine());
  console.log(`runs: ${N} of each (alternating), after one warm-up of each`);
  console.log(
    `ours launch→stopped ms: p50 ${round(median(a))} min ${round(Math.min(...a))} max ${round(Math.max(...a))}`
  );
  console.log(
    `raw  launch→stopped ms: p50 ${round(median(b))} min ${round(Math.min(...b))} max ${round(Math.max(...b))}`
  );
  console.log(
    `kernel run_cell→stopped ms: p50 ${round(median(k))} min ${round(Math.min(...k))} max ${round(Math.max(...k))}`
  );
  console.log(
    `debug: launch_to_stopped_ms=${round(median(a), 0)} raw_launch_to_stopped_ms=${round(median(b), 0)} kernel_cell_to_stopped_ms=${round(median(k), 0)}`
  );
} finally {
  await sessions.dispose();
  await kernels.dispose();
  registry.dispose();
  fs.rmSync(ws, { recursive: true, force: true });
}
