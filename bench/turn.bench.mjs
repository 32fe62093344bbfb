// turn: what one agent turn costs over the real /cellmate/ws of a running JupyterLab
// (started like the e2e tests: test/support/jupyter.ts), with the scripted provider, so the
// figures are the product's own overhead, not a model's.
//
//   npm run bench -- turn [N=40]
//
// no_tool_turn: chat/send → `turn-ended` for a turn whose one step is the text "ok".
// eval_turn:    chat/send → `turn-ended` for a turn that calls eval({code: "pass"}) in the
//               chat's private ipykernel, then says "ok". eval_turn_extra = p50(eval_turn) − p50(no_tool_turn).
// raw_kernel:   ZmqKernelClient.execute("pass") on an ipykernel of this script (reply + IOPub
//               idle): the round trip an eval cannot avoid.
// token_to_client: a text delta "{{sent_at}}" stamped by the scripted provider as it
//               leaves (wall clock, µs) → the `text-delta` event arriving at this client.
// Kinds alternate, after warm-ups, so drift cancels out.
//
// Last line: turn: no_tool_turn_ms_p50=<n> eval_turn_extra_ms_p50=<n> raw_kernel_ms_p50=<n> token_to_client_ms_p50=<n>
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadTestSupport, machineLine, median, percentile, round } from './lib.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const python = path.join(repo, '.venv', 'bin', 'python');
const kb = path.join(repo, 'kernel-bridge', 'dist', 'index.js');
for (const f of [python, kb, path.join(repo, 'server', 'dist', 'main.js')]) {
  if (!fs.existsSync(f)) {
    console.error(`${f} is missing: run scripts/setup first`);
    process.exit(1);
  }
}
const N = Number(process.argv[2] ?? 40);
const WARMUP = 5;
const { startJupyter, connectRpc } = await loadTestSupport();
const { launchKernel, pythonKernelArgv } = await import(pathToFileURL(kb).href);

const step = (s) => ({ chunkDelayMs: 0, ...s });
const scripts = {
  text: { steps: [step({ text: 'ok' })] },
  eval: { steps: [step({ toolCalls: [{ toolName: 'eval', input: { code: 'pass', description: 'Benchmark cell' } }] }), step({ text: 'ok' })] },
  token: { steps: [step({ text: '{{sent_at}}' })] }
};
const files = Object.fromEntries(Object.entries(scripts).map(([k, v]) => [`scripts/${k}.json`, JSON.stringify(v)]));
// eval is exec tier (asks by default): allow it here, and keep the machine's home policy out.
files['.cellmate/policy.json'] = JSON.stringify({ rules: [{ tool: 'eval', pattern: '*', action: 'allow' }] });
const model = (kind) => ({ provider: 'scripted', model: 'script', scriptPath: `scripts/${kind}.json` });

const jupyter = await startJupyter({ files, env: { CELLMATE_POLICY: '/nonexistent/cellmate-policy.json' } });
const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cellmate-bench-turn-')));
const kernel = await launchKernel({ argv: pythonKernelArgv(python), cwd: work });
let rpc;
try {
  rpc = await connectRpc(jupyter.wsUrl, jupyter.token);
  await rpc.request('cellmate/hello', { protocolVersion: 1 });
  const chats = {};
  for (const kind of Object.keys(scripts)) chats[kind] = (await rpc.request('chat/create', { title: `bench ${kind}` })).id;

  /** One turn: ms from chat/send to its `turn-ended` (and the delta's delivery, when stamped). */
  const turn = async (kind) => {
    const chatId = chats[kind];
    const seen = rpc.events(chatId).length;
    const t0 = performance.now();
    const { turnId } = await rpc.request('chat/send', { chatId, text: 'go', model: model(kind) });
    let arrivedAt;
    let delta;
    const ended = await rpc.waitForEvent(chatId, (e) => {
      if (e.type === 'text-delta' && delta === undefined && rpc.events(chatId).indexOf(e) >= seen) {
        delta = e.delta;
        arrivedAt = performance.timeOrigin + performance.now();
      }
      return e.type === 'turn-ended' && e.turnId === turnId;
    }, 60_000);
    const ms = performance.now() - t0;
    if (ended.reason !== 'stop') throw new Error(`${kind} turn ended with ${ended.reason}: ${ended.error ?? ''}`);
    return { ms, tokenMs: kind === 'token' && delta !== undefined ? arrivedAt - Number(delta) : undefined };
  };
  const raw = async () => {
    const t = performance.now();
    await kernel.client.execute('pass', { storeHistory: true });
    return performance.now() - t;
  };

  for (let i = 0; i < WARMUP; i++) {
    await turn('text');
    await turn('eval'); // the first one starts the chat's kernel
    await turn('token');
    await raw();
  }
  const noTool = [];
  const evalTurn = [];
  const token = [];
  const rawMs = [];
  for (let i = 0; i < N; i++) {
    const order = i % 2 ? ['text', 'eval', 'token', 'raw'] : ['raw', 'token', 'eval', 'text'];
    for (const kind of order) {
      if (kind === 'raw') rawMs.push(await raw());
      else {
        const r = await turn(kind);
        if (kind === 'text') noTool.push(r.ms);
        else if (kind === 'eval') evalTurn.push(r.ms);
        else if (r.tokenMs !== undefined) token.push(r.tokenMs);
      }
    }
  }
  // waitForEvent polls on each notification, so "arrived" is taken when the client's
  // message handler ran for it: the socket → JSON.parse → our predicate.
  const p50 = (xs) => round(median(xs), 2);
  const p90 = (xs) => round(percentile(xs, 90), 2);
  console.log(machineLine());
  console.log(`runs: ${N} of each kind, interleaved, after ${WARMUP} warm-ups; JupyterLab at ${jupyter.url}`);
  console.log(`no-tool turn p50 ${p50(noTool)} ms, p90 ${p90(noTool)} ms`);
  console.log(`eval turn    p50 ${p50(evalTurn)} ms, p90 ${p90(evalTurn)} ms`);
  console.log(`raw kernel   p50 ${p50(rawMs)} ms, p90 ${p90(rawMs)} ms`);
  console.log(`token→client p50 ${p50(token)} ms, p90 ${p90(token)} ms (${token.length} deltas)`);
  const extra = median(evalTurn) - median(noTool);
  console.log(`eval extra / raw kernel = ${round(extra / median(rawMs), 2)}`);
  console.log(`turn: no_tool_turn_ms_p50=${p50(noTool)} eval_turn_extra_ms_p50=${round(extra, 2)} raw_kernel_ms_p50=${p50(rawMs)} token_to_client_ms_p50=${p50(token)}`);
} finally {
  rpc?.close();
  await kernel.shutdown();
  await jupyter.stop();
  fs.rmSync(work, { recursive: true, force: true });
}
