// eval: the overhead of eval's code path over a raw ZeroMQ execute, against the same
// ipykernel in one script, and the tool() bridge round trip.
//
//   npm run bench -- eval [N=200]
//
// raw:    ZmqKernelClient.execute('pass') → execute_reply + IOPub idle
// eval:   the server's registry (createHarness: policy, audit log) .call('eval', {code: 'pass', …})
//         → validation, policy, audit, the eval tool,
//         EvalSession (magic rewrite, marked request, stdin bridge armed, idle budget),
//         result formatting and output shaping — on the same kernel, alternating with raw.
// bridge: inside one eval cell, N calls of tool('noop') (a read-tier tool through the
//         registry), each timed in the kernel with perf_counter.
//
// session: EvalSession.run alone (no registry), for telling the two costs apart.
//
// Last line: eval: overhead_ratio=<p50 eval / p50 raw> raw_p50_ms=<n> bridge_p50_ms=<n> eval_p50_ms=<n> session_ratio=<p50 session / p50 raw>
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { machineLine, median, round } from './lib.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const python = path.join(repo, '.venv', 'bin', 'python');
const kb = path.join(repo, 'kernel-bridge', 'dist', 'index.js');
const srv = path.join(repo, 'server', 'dist');
for (const f of [python, kb, path.join(srv, 'tools', 'eval', 'eval.js')]) {
  if (!fs.existsSync(f)) {
    console.error(`${f} is missing: run scripts/setup first`);
    process.exit(1);
  }
}
const N = Number(process.argv[2] ?? 200);
const { launchKernel, pythonKernelArgv, EvalSession } = await import(pathToFileURL(kb).href);
const { createHarness } = await import(pathToFileURL(path.join(srv, 'tools', 'harness.js')).href);
const { defineTool } = await import(pathToFileURL(path.join(srv, 'gate', 'define-tool.js')).href);
const { createEvalTool } = await import(pathToFileURL(path.join(srv, 'tools', 'eval', 'eval.js')).href);
const { z } = await import(pathToFileURL(path.join(repo, 'node_modules', 'zod', 'index.js')).href);

const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cellmate-bench-eval-')));
const kernel = await launchKernel({ argv: pythonKernelArgv(python), cwd: workspace });
try {
  const session = new EvalSession(kernel.client, 'python');
  const info = { id: `private-${kernel.pid}`, name: 'python3', language: 'python', origin: 'private' };
  const kernels = { acquire: async () => ({ handle: { info, session, broken: false }, notes: [] }) };
  const noop = defineTool({
    name: 'noop',
    tier: 'read',
    description: 'returns ok',
    parameters: z.object({}).loose(),
    examples: [],
    async execute() {
      return { title: 'noop', output: 'ok' };
    }
  });
  // The production registry: policy, approvals, audit log (JSONL under the workspace), shaping.
  const harness = createHarness({
    workspace,
    env: { ...process.env, CELLMATE_CONFIG: path.join(workspace, 'none.json') },
    tools: () => [noop]
  });
  const registry = harness.registry;
  registry.register(createEvalTool({ kernels, registry: () => registry }));
  const ctx = { workspace, signal: new AbortController().signal, actor: 'model', chatId: 'bench' };
  const args = { code: 'pass', description: 'a trivial cell for the benchmark run' };

  const raw = async () => {
    const t = performance.now();
    await kernel.client.execute('pass', { storeHistory: true });
    return performance.now() - t;
  };
  const viaSession = async () => {
    const t = performance.now();
    await session.run({ code: 'pass' });
    return performance.now() - t;
  };
  const viaEval = async () => {
    const t = performance.now();
    const r = await registry.call('eval', args, ctx);
    if (!r.ok) throw new Error(r.output);
    return performance.now() - t;
  };
  for (let i = 0; i < 20; i++) {
    await raw();
    await viaEval();
  } // warm-up (and helper injection)
  const rawMs = [];
  const evalMs = [];
  const sessionMs = [];
  for (let i = 0; i < N; i++) {
    if (i % 2) {
      rawMs.push(await raw());
      evalMs.push(await viaEval());
      sessionMs.push(await viaSession());
    } else {
      sessionMs.push(await viaSession());
      evalMs.push(await viaEval());
      rawMs.push(await raw());
    }
  }
  const bridgeCell = `import time as _t, json as _j\n_ts = []\nfor _ in range(${N + 20}):\n    _s = _t.perf_counter()\n    tool("noop", {})\n    _ts.append((_t.perf_counter() - _s) * 1000)\nprint(_j.dumps(_ts[20:]))`;
  const b = await registry.call(
    'eval',
    { code: bridgeCell, description: 'time tool bridge round trips in the kernel' },
    ctx
  );
  if (!b.ok) throw new Error(b.output);
  const bridgeMs = JSON.parse(
    b.output.split('\n').find((l) => l.startsWith('[') && l.endsWith(']') && !l.startsWith('[python'))
  );

  const rawP50 = median(rawMs);
  const evalP50 = median(evalMs);
  const bridgeP50 = median(bridgeMs);
  console.log(machineLine());
  console.log(
    `runs: ${N} raw + ${N} eval + ${N} session interleaved (after 20 warm-up each); ${bridgeMs.length} bridge calls`
  );
  console.log(`raw p50 ${round(rawP50, 2)} ms, p90 ${round(rawMs.sort((a, b) => a - b)[Math.floor(N * 0.9)], 2)} ms`);
  console.log(
    `eval p50 ${round(evalP50, 2)} ms, p90 ${round(evalMs.sort((a, b) => a - b)[Math.floor(N * 0.9)], 2)} ms`
  );
  const sessionP50 = median(sessionMs);
  console.log(
    `session p50 ${round(sessionP50, 2)} ms (EvalSession alone: rewrite, marked request, outputs, idle budget)`
  );
  console.log(
    `eval: overhead_ratio=${round(evalP50 / rawP50, 3)} raw_p50_ms=${round(rawP50, 2)} bridge_p50_ms=${round(bridgeP50, 3)} eval_p50_ms=${round(evalP50, 2)} session_ratio=${round(sessionP50 / rawP50, 3)}`
  );
  registry.dispose();
} finally {
  await kernel.shutdown();
  fs.rmSync(workspace, { recursive: true, force: true });
}
