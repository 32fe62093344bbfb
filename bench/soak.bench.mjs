// soak: a real companion (`node server/dist/main.js --socket …`, private Python and JS
// kernels) driven over its Unix socket JSON-RPC — the transport the Jupyter bridge uses —
// by the scripted model: mixed read / grep / glob / Python eval / JS eval calls, several
// chats two at a time, every third chat deleted midway.
//
//   npm run bench -- soak [CALLS=10000] [CALLS_PER_CHAT=1000]
//
// SOAK_DELETE=all also deletes each chat once it is done (its private kernels stop with it);
// SOAK_EVAL=0 replaces the eval calls by reads (no kernels: tells the store's memory from
// the kernels'); SOAK_NODE_ARGS passes flags to the companion's node (e.g. --cpu-prof);
// SOAK_COMPANION runs another build's main.js (e.g. an older commit's, for a before figure).
// A finished chat's private kernels are stopped as an idle chat's are, only sooner
// (CELLMATE_KERNEL_IDLE_MS=3000 instead of 30 min; SOAK_KERNEL_IDLE_MS overrides), and up to
// 8 run at once (two running chats and the two just finished, two kernels each), so the
// companion's private-kernel cap never refuses an eval.
//
// Figures: peak_rss_mb — the companion's peak RSS (kernels are other processes);
// rss_slope_mb_per_1k — least-squares slope of RSS against calls after the first 20 %;
// written_mb_per_1k — bytes the chat store wrote (its counter, logged at shutdown);
// kept_mb_per_1k — chat files on disk at the end plus deleted chats' files just before
// their deletion; calls_per_s_first / _last — completed calls per second in the 10–20 %
// window and in the last 10 % of calls made while both chats still ran (the run's tail,
// where one chat finishes its last turn alone, runs at half the concurrency);
// leaked_processes — descendants of the companion alive after it exited.
//
// Last line: soak: calls=<n> peak_rss_mb=<n> rss_slope_mb_per_1k=<n> written_mb_per_1k=<n> kept_mb_per_1k=<n> calls_per_s_first=<n> calls_per_s_last=<n> leaked_processes=<n>
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineLine, median, round, rssMiB } from './lib.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const mainJs = process.env.SOAK_COMPANION
  ? path.resolve(process.env.SOAK_COMPANION)
  : path.join(repo, 'server', 'dist', 'main.js');
if (!fs.existsSync(mainJs)) {
  console.error(`${mainJs} is missing: run scripts/setup first`);
  process.exit(1);
}
const rpc = createRequire(path.join(repo, 'server', 'package.json'))('vscode-jsonrpc/node.js');
const TOTAL = Number(process.argv[2] ?? 10_000);
const PER_CHAT = Number(process.argv[3] ?? 1_000);
const STEPS_PER_TURN = 50; // four calls per step: 200 calls per turn
const CALLS_PER_TURN = STEPS_PER_TURN * 4;
const DELETE_ALL = process.env.SOAK_DELETE === 'all';

const ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'cellmate-soak-')));
fs.mkdirSync(path.join(ws, 'src'));
for (let f = 0; f < 8; f++) {
  fs.writeFileSync(
    path.join(ws, 'src', `mod${f}.py`),
    Array.from({ length: 120 }, (_, i) => `def f${f}_${i}(x):\n    return x * ${i}  # kiln ${i % 7}\n`).join('')
  );
}
const steps = [];
for (let i = 0; i < STEPS_PER_TURN; i++) {
  const toolCalls = [
    { toolName: 'read', input: { path: `src/mod${i % 8}.py`, offset: 1 + (i % 50), limit: 40 } },
    { toolName: 'grep', input: { pattern: `kiln ${i % 7}`, path: 'src' } },
    { toolName: 'glob', input: { pattern: 'src/*.py' } },
    process.env.SOAK_EVAL === '0'
      ? { toolName: 'read', input: { path: `src/mod${(i + 3) % 8}.py`, limit: 40 } }
      : i % 2
        ? {
            toolName: 'eval',
            input: {
              code: `sum(range(${i * 100}))`,
              description: 'Add up a range of numbers in Python',
              language: 'python'
            }
          }
        : {
            toolName: 'eval',
            input: {
              code: `[...Array(${i + 10}).keys()].reduce((a, b) => a + b, 0)`,
              description: 'Add up a range of numbers in JavaScript',
              language: 'javascript'
            }
          }
  ];
  steps.push({ text: `Step ${i}: reading, searching and computing.`, chunkDelayMs: 0, toolCalls });
}
steps.push({ text: 'That was the last step of this turn.', chunkDelayMs: 0 });
fs.writeFileSync(path.join(ws, 'soak.json'), JSON.stringify({ steps }));
const model = { provider: 'scripted', model: 'scripted', scriptPath: 'soak.json' };

const socketPath = path.join(ws, 'companion.sock');
const companion = spawn(
  process.execPath,
  [
    ...(process.env.SOAK_NODE_ARGS ? process.env.SOAK_NODE_ARGS.split(' ') : []),
    mainJs,
    '--socket',
    socketPath,
    '--workspace',
    ws
  ],
  {
    cwd: ws,
    env: {
      PATH: process.env.PATH,
      HOME: ws,
      CELLMATE_CONFIG: path.join(ws, 'none.json'),
      CELLMATE_MAX_STEPS: '1000',
      CELLMATE_KERNEL_IDLE_MS: process.env.SOAK_KERNEL_IDLE_MS ?? '3000',
      CELLMATE_MAX_PRIVATE_KERNELS: '8'
    },
    stdio: ['ignore', 'pipe', 'pipe']
  }
);
let stderr = '';
companion.stderr.on('data', (d) => (stderr = (stderr + d.toString()).slice(-200_000)));
const exited = new Promise((resolve) => companion.once('exit', resolve));
await new Promise((resolve, reject) => {
  companion.stdout.once('data', resolve);
  companion.once('exit', (code) => reject(new Error(`companion exited (${code}):\n${stderr}`)));
});

const socket = net.connect(socketPath);
await new Promise((resolve) => socket.once('connect', resolve));
const connection = rpc.createMessageConnection(
  new rpc.StreamMessageReader(socket),
  new rpc.StreamMessageWriter(socket)
);
let calls = 0;
const outcomes = new Map(); // `${tool} ${status}` → count
const turnWaiters = new Map();
connection.onNotification('chat/event', ({ chatId, event }) => {
  if (event.type === 'item-updated' && event.item.kind === 'tool' && event.item.status !== 'running') {
    calls++;
    const key = `${event.item.name}${event.item.name === 'eval' ? `(${event.item.args?.language})` : ''} ${event.item.status}`;
    outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    if (event.item.status !== 'ok' && (outcomes.get(key) ?? 0) <= 2)
      console.log(`not ok: ${key}: ${String(event.item.output).slice(0, 300)}`);
  }
  if (event.type === 'turn-ended') turnWaiters.get(chatId)?.(event);
});
connection.listen();
await connection.sendRequest('cellmate/hello', { protocolVersion: 1 });

// Samples: time, calls, RSS; descendants seen (for the leak check).
const samples = [];
const descendants = new Set();
function scanDescendants() {
  const parent = new Map();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone
    }
  }
  for (const [pid] of parent) {
    for (let p = parent.get(pid), hops = 0; p && hops < 10; p = parent.get(p), hops++) {
      if (p === companion.pid) descendants.add(pid);
    }
  }
}
/** User + system CPU seconds of a live process (/proc/<pid>/stat, in clock ticks of 1/100 s). */
function cpuSeconds(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
const start = performance.now();
const sampler = setInterval(() => {
  try {
    samples.push({
      t: (performance.now() - start) / 1000,
      calls,
      rss: rssMiB(companion.pid),
      cpu: cpuSeconds(companion.pid)
    });
    if (samples.length % 8 === 0) scanDescendants();
  } catch {
    // the companion is exiting
  }
}, 250);

const chatsDir = path.join(ws, '.cellmate', 'chats');
const chatBytes = (id) =>
  ['json', 'jsonl'].reduce(
    (n, ext) => n + (fs.statSync(path.join(chatsDir, `${id}.${ext}`), { throwIfNoEntry: false })?.size ?? 0),
    0
  );
let keptDeleted = 0;
const turnMs = []; // turnMs[k]: wall times of each chat's k-th turn (200 calls each)
let started = 0;
let chatIndex = 0;
let bothRunningUntil; // calls done when the first worker ran out of turns
async function worker() {
  while (started < TOTAL) {
    const index = chatIndex++;
    const chat = await connection.sendRequest('chat/create', { title: `soak ${index}` });
    const midway = Math.ceil(PER_CHAT / CALLS_PER_TURN / 2);
    const deleteAfter = index % 3 === 2 ? midway : DELETE_ALL ? Number.MAX_SAFE_INTEGER : Infinity;
    for (let turn = 0; turn * CALLS_PER_TURN < PER_CHAT && started < TOTAL; turn++) {
      started += CALLS_PER_TURN;
      const ended = new Promise((resolve) => turnWaiters.set(chat.id, resolve));
      const t0 = performance.now();
      await connection.sendRequest('chat/send', {
        chatId: chat.id,
        text: `Turn ${turn}: go through the modules.`,
        model
      });
      const event = await ended;
      (turnMs[turn] ??= []).push(performance.now() - t0);
      if (event.reason !== 'stop')
        throw new Error(`turn ended with ${event.reason}: ${event.error ?? ''}\n${stderr.slice(-4000)}`);
      if (turn + 1 >= deleteAfter) break;
    }
    if (deleteAfter !== Infinity) {
      keptDeleted += chatBytes(chat.id);
      await connection.sendRequest('chat/delete', { chatId: chat.id });
    }
  }
}
await Promise.all([worker(), worker()].map((w) => w.then(() => (bothRunningUntil ??= calls))));
scanDescendants();
clearInterval(sampler);

let kept = keptDeleted;
for (const name of fs.readdirSync(chatsDir)) kept += fs.statSync(path.join(chatsDir, name)).size;
const dirBytes = (dir) =>
  fs.existsSync(dir) ? fs.readdirSync(dir).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0) : 0;
const auditBytes = dirBytes(path.join(ws, '.cellmate', 'audit'));
const outputBytes = dirBytes(path.join(ws, '.cellmate', 'outputs'));
const ioWrite = Number(/write_bytes: (\d+)/.exec(fs.readFileSync(`/proc/${companion.pid}/io`, 'utf8'))?.[1] ?? 0);
connection.dispose();
socket.destroy();
companion.kill('SIGTERM');
await exited;
await new Promise((resolve) => setTimeout(resolve, 2_000));
const leaked = [...descendants].filter((pid) => {
  try {
    return !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
});
for (const pid of leaked) process.kill(pid, 'SIGKILL');
const written = Number(/chat files: written_bytes=(\d+)/.exec(stderr)?.[1] ?? NaN);

// Figures.
const peak = Math.max(...samples.map((s) => s.rss));
const steady = samples.filter((s) => s.calls >= 0.2 * calls);
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const mx = mean(steady.map((s) => s.calls / 1000));
const my = mean(steady.map((s) => s.rss));
const fit = (points) => {
  const px = mean(points.map((p) => p.x));
  const py = mean(points.map((p) => p.y));
  return points.reduce((n, p) => n + (p.x - px) * (p.y - py), 0) / points.reduce((n, p) => n + (p.x - px) ** 2, 0);
};
const rawSlope = fit(steady.map((s) => ({ x: s.calls / 1000, y: s.rss })));
// RSS is a sawtooth (a running chat's history is in memory until the chat is done and
// dropped; the GC runs late): the slope is fitted to the peak of each window of
// CALLS_PER_CHAT calls after the warm-up, i.e. compared at the same phase.
const windows = new Map();
for (const s of steady) {
  const w = Math.floor(s.calls / PER_CHAT);
  if (!windows.has(w) || windows.get(w).y < s.rss) windows.set(w, { x: s.calls / 1000, y: s.rss });
}
const slope = windows.size >= 2 ? fit([...windows.values()]) : rawSlope;
const timeAt = (c) => samples.find((s) => s.calls >= c)?.t ?? samples.at(-1).t;
const rate = (from, to) => ((to - from) * calls) / (timeAt(to * calls) - timeAt(from * calls));
const perK = (bytes) => round(bytes / 2 ** 20 / (calls / 1000), 3);

console.log(machineLine());
console.log(
  `chats: ${chatIndex} (every third deleted midway), ${round((performance.now() - start) / 1000)} s, ${samples.length} samples, ${descendants.size} descendant processes seen`
);
console.log(
  `chat files: written ${round(written / 2 ** 20, 2)} MiB (store counter; /proc write_bytes ${round(ioWrite / 2 ** 20, 2)} MiB incl. audit and outputs), kept ${round(kept / 2 ** 20, 2)} MiB; audit ${round(auditBytes / 2 ** 20, 2)} MiB, outputs ${round(outputBytes / 2 ** 20, 2)} MiB`
);
console.log(
  `calls: ${[...outcomes]
    .sort()
    .map(([k, n]) => `${k} ${n}`)
    .join(', ')}`
);
// Per-step cost against chat length: the same turn at each position of a chat (both chats
// run side by side throughout, so load cancels between positions).
// The companion's own CPU per call in the same windows: what a step costs it, whatever the
// load on the machine (wall-clock throughput on a shared machine is mostly the load's).
const cpuAt = (c) => samples.find((x) => x.calls >= c)?.cpu ?? samples.at(-1).cpu;
const cpuPerCall = (from, to) => (1000 * (cpuAt(to * calls) - cpuAt(from * calls))) / ((to - from) * calls);
console.log(
  `companion cpu ms per call: 10–20 % ${round(cpuPerCall(0.1, 0.2), 2)}, last 10 % with both chats running ${round(cpuPerCall(bothRunningUntil / calls - 0.1, bothRunningUntil / calls), 2)}, whole run ${round((1000 * samples.at(-1).cpu) / calls, 2)}`
);
console.log(
  `both chats ran until call ${bothRunningUntil} of ${calls}; calls/s in the last 10 % of the run itself: ${round(rate(0.9, 1))}`
);
console.log(
  `turn ms by position in chat (median over chats): ${turnMs.map((xs, k) => `${k + 1}: ${round(median(xs))}`).join(', ')}`
);
console.log(
  `rss: first ${round(samples[0].rss)} MiB, at 20 % ${round(steady[0].rss)} MiB, last ${round(samples.at(-1).rss)} MiB; window peaks ${[...windows.values()].map((p) => round(p.y)).join(' ')} MiB; slope of all samples ${round(rawSlope, 2)} MiB per 1k`
);
fs.rmSync(ws, { recursive: true, force: true });
console.log(
  `soak: calls=${calls} peak_rss_mb=${round(peak)} rss_slope_mb_per_1k=${round(slope, 2)} written_mb_per_1k=${perK(written)} kept_mb_per_1k=${perK(kept)} ` +
    `calls_per_s_first=${round(rate(0.1, 0.2))} calls_per_s_last=${round(rate(bothRunningUntil / calls - 0.1, bothRunningUntil / calls))} leaked_processes=${leaked.length}`
);
