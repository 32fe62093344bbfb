// turn: what one agent turn costs over the real /cellmate/ws of a running JupyterLab
// (started like the e2e tests: test/support/jupyter.ts), with the scripted provider, so the
// figures are the product's own overhead, not a model's.
//
//   npm run bench -- turn [N=40] [--nodelay=off]
//
// --nodelay=off starts the lab with --CellmateApp.tcp_nodelay=False: Nagle's algorithm on
// /cellmate/ws and on Jupyter's kernel WebSockets, as the "before" figures were measured.
//
// no_tool_turn: chat/send → `turn-ended` for a turn whose one step is the text "ok".
// eval_turn:    chat/send → `turn-ended` for a turn that calls eval({code: "pass"}) in the
//               chat's private ipykernel, then says "ok". eval_turn_extra = p50(eval_turn) − p50(no_tool_turn).
// raw_kernel:   ZmqKernelClient.execute("pass") on an ipykernel of this script (reply + IOPub
//               idle): the round trip an eval cannot avoid.
// turn-notebook: the same eval turn in a chat focused on a Jupyter-Server-managed kernel
//               (a notebook's), against a raw execute over Jupyter's kernel WebSocket.
// token_to_client: a text delta "{{sent_at}}" stamped by the scripted provider as it
//               leaves (wall clock, µs) → the `text-delta` event arriving at this client.
// Kinds alternate in one chat, after warm-ups, so drift and history length cancel out.
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
const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const nodelayOff = process.argv.includes('--nodelay=off');
const N = Number(positional[0] ?? 40);
const WARMUP = 5;
const { startJupyter, connectRpc } = await loadTestSupport();
const { launchKernel, pythonKernelArgv, JupyterServerKernelClient } = await import(pathToFileURL(kb).href);

const step = (s) => ({ chunkDelayMs: 0, ...s });
const scripts = {
  text: { steps: [step({ text: 'ok' })] },
  eval: {
    steps: [
      step({ toolCalls: [{ toolName: 'eval', input: { code: 'pass', description: 'Benchmark cell' } }] }),
      step({ text: 'ok' })
    ]
  },
  token: { steps: [step({ text: '{{sent_at}}' })] }
};
const files = Object.fromEntries(Object.entries(scripts).map(([k, v]) => [`scripts/${k}.json`, JSON.stringify(v)]));
// eval is exec tier (asks by default): allow it here, and keep the machine's home policy out.
files['.cellmate/policy.json'] = JSON.stringify({ rules: [{ tool: 'eval', pattern: '*', action: 'allow' }] });
const model = (kind) => ({ provider: 'scripted', model: 'script', scriptPath: `scripts/${kind}.json` });

const jupyter = await startJupyter({
  files,
  env: { CELLMATE_POLICY: '/nonexistent/cellmate-policy.json', CELLMATE_TRUSTED_WORKSPACES: '*' },
  args: nodelayOff ? ['--CellmateApp.tcp_nodelay=False'] : []
});
const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cellmate-bench-turn-')));
const kernel = await launchKernel({ argv: pythonKernelArgv(python), cwd: work });
let rpc;
let nbClient;
try {
  rpc = await connectRpc(jupyter.wsUrl, jupyter.token);
  await rpc.request('cellmate/hello', { protocolVersion: 1 });
  // One chat for every kind, interleaved: each kind's turn sees the same history length
  // (the model gets the whole history each step, so a longer chat costs more per step).
  const chats = { main: (await rpc.request('chat/create', { title: 'bench turn' })).id };
  // A second chat focused on a Jupyter-Server-managed kernel (as a notebook's would be):
  // its evals cross Jupyter's kernel WebSocket (TCP) instead of ZeroMQ.
  const auth = { Authorization: `token ${jupyter.token}`, 'Content-Type': 'application/json' };
  const made = await fetch(`${jupyter.url}/api/kernels`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ name: 'python3' })
  });
  if (!made.ok) throw new Error(`POST /api/kernels answered ${made.status}`);
  const nbKernel = await made.json();
  chats.nb = (await rpc.request('chat/create', { title: 'bench notebook kernel' })).id;
  await rpc.request('chat/context', {
    chatId: chats.nb,
    kernel: { id: nbKernel.id, name: 'python3', language: 'python', notebookPath: 'bench.ipynb' }
  });
  nbClient = await JupyterServerKernelClient.connect({
    baseUrl: jupyter.baseUrl,
    token: jupyter.token,
    kernelId: nbKernel.id,
    kernelName: 'python3'
  });

  /** One turn: ms from chat/send to its `turn-ended` (and the delta's delivery, when stamped). */
  const turn = async (kind, chatId = chats.main) => {
    const seen = rpc.notifications.length;
    const t0 = performance.now();
    const { turnId } = await rpc.request('chat/send', { chatId, text: 'go', model: model(kind) });
    const ended = await rpc.waitForEvent(chatId, (e) => e.type === 'turn-ended' && e.turnId === turnId, 60_000);
    const ms = performance.now() - t0;
    if (ended.reason !== 'stop') throw new Error(`${kind} turn ended with ${ended.reason}: ${ended.error ?? ''}`);
    if (kind !== 'token') return { ms };
    // The delta's own arrival time, taken in the WebSocket message handler (test/support/rpc.ts).
    const arrived = rpc.notifications
      .slice(seen)
      .find((n) => n.method === 'chat/event' && n.params.chatId === chatId && n.params.event.type === 'text-delta');
    return { ms, tokenMs: arrived ? arrived.receivedAt - Number(arrived.params.event.delta) : undefined };
  };
  const raw = async (client = kernel.client) => {
    const t = performance.now();
    await client.execute('pass', { storeHistory: true });
    return performance.now() - t;
  };

  for (let i = 0; i < WARMUP; i++) {
    await turn('text');
    await turn('eval'); // the first one starts the chat's kernel
    await turn('token');
    await raw();
    await turn('text', chats.nb);
    await turn('eval', chats.nb);
    await raw(nbClient);
  }
  const noTool = [];
  const evalTurn = [];
  const token = [];
  const rawMs = [];
  const nb = { text: [], eval: [], raw: [] };
  for (let i = 0; i < N; i++) {
    const order =
      i % 2
        ? ['text', 'eval', 'token', 'raw', 'nbtext', 'nbeval', 'nbraw']
        : ['nbraw', 'nbeval', 'nbtext', 'raw', 'token', 'eval', 'text'];
    for (const kind of order) {
      if (kind === 'raw') rawMs.push(await raw());
      else if (kind === 'nbraw') nb.raw.push(await raw(nbClient));
      else if (kind.startsWith('nb')) nb[kind.slice(2)].push((await turn(kind.slice(2), chats.nb)).ms);
      else {
        const r = await turn(kind);
        if (kind === 'text') noTool.push(r.ms);
        else if (kind === 'eval') evalTurn.push(r.ms);
        else if (r.tokenMs !== undefined) token.push(r.tokenMs);
      }
    }
  }
  // "arrived" is stamped in the client's WebSocket message handler (before JSON.parse), so
  // the client's own bookkeeping is not counted (it used to rescan every event of the run,
  // O(n²) over a long session, and inflated both turn times and token→client).
  const p50 = (xs) => round(median(xs), 2);
  const p90 = (xs) => round(percentile(xs, 90), 2);
  console.log(machineLine());
  console.log(
    `runs: ${N} of each kind, interleaved, after ${WARMUP} warm-ups; JupyterLab at ${jupyter.url}; TCP_NODELAY ${nodelayOff ? 'off' : 'on'}`
  );
  console.log(`no-tool turn p50 ${p50(noTool)} ms, p90 ${p90(noTool)} ms`);
  console.log(`eval turn    p50 ${p50(evalTurn)} ms, p90 ${p90(evalTurn)} ms`);
  console.log(`raw kernel   p50 ${p50(rawMs)} ms, p90 ${p90(rawMs)} ms`);
  console.log(`token→client p50 ${p50(token)} ms, p90 ${p90(token)} ms (${token.length} deltas)`);
  const extra = median(evalTurn) - median(noTool);
  console.log(`eval extra / raw kernel = ${round(extra / median(rawMs), 2)}`);
  const nbExtra = median(nb.eval) - median(nb.text);
  console.log(
    `notebook kernel (Jupyter Server WebSocket): no-tool turn p50 ${p50(nb.text)} ms, eval turn p50 ${p50(nb.eval)} ms, raw p50 ${p50(nb.raw)} ms`
  );
  console.log(
    `turn-notebook: eval_turn_extra_ms_p50=${round(nbExtra, 2)} raw_kernel_ms_p50=${p50(nb.raw)} ratio=${round(nbExtra / median(nb.raw), 2)}`
  );
  console.log(
    `turn: no_tool_turn_ms_p50=${p50(noTool)} eval_turn_extra_ms_p50=${round(extra, 2)} raw_kernel_ms_p50=${p50(rawMs)} token_to_client_ms_p50=${p50(token)}`
  );
} finally {
  rpc?.close();
  nbClient?.dispose();
  await kernel.shutdown();
  await jupyter.stop();
  fs.rmSync(work, { recursive: true, force: true });
}
