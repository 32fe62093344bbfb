// Content-Length framing throughput (DBG-6): the same byte streams decoded by our reader
// (server/src/framing: the resynchronising scanner is the reader, one pass over the bytes)
// and by vscode-jsonrpc's own StreamMessageReader, alternating, 7 rounds each after a
// warm-up; each stream ~16 MB, cut into 64 KiB chunks delivered one per event-loop turn as a
// pipe does. Three sessions:
//   lsp   — the recorded basedpyright session (server/test/framing/fixtures/lsp-session.bin)
//           repeated (the figure line's ours_mb_s / jsonrpc_mb_s);
//   small — DAP `output` / `stopped` / `thread` events of 90–200 bytes (a chatty debuggee);
//   huge  — three 5 MB publishDiagnostics (a generated file full of errors).
// Prints MB/s medians and ours/jsonrpc per session. `FRAMING_READER=<module>` measures
// another build of createFramedReader (e.g. an older one) in place of server/dist's.
// Needs server/dist (npm run build:ts).
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { StreamMessageReader } from 'vscode-jsonrpc/node.js';
import { machineLine, median, round } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { createFramedReader } = await import(
  process.env.FRAMING_READER
    ? pathToFileURL(path.resolve(process.env.FRAMING_READER)).href
    : '../server/dist/framing/index.js'
);
const TARGET = 16 * 2 ** 20;
const CHUNK = 64 * 1024;

const frame = (message) => {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]);
};

/** `unit` (with `perUnit` messages) repeated to ~16 MB, and its 64 KiB chunks. */
function session(name, unit, perUnit) {
  const copies = Math.max(1, Math.round(TARGET / unit.length));
  const stream = Buffer.concat(Array.from({ length: copies }, () => unit));
  const chunks = [];
  for (let i = 0; i < stream.length; i += CHUNK) chunks.push(stream.subarray(i, i + CHUNK));
  return { name, stream, chunks, expected: copies * perUnit };
}

function lspSession() {
  const unit = readFileSync(path.join(here, '../server/test/framing/fixtures/lsp-session.bin'));
  const per = JSON.parse(
    readFileSync(path.join(here, '../server/test/framing/fixtures/lsp-session.json'), 'utf8')
  ).length;
  return session('lsp', unit, per);
}

function smallSession() {
  const frames = [];
  for (let seq = 1; seq <= 1000; seq++) {
    const m =
      seq % 10 === 0
        ? { seq, type: 'event', event: 'stopped', body: { reason: 'breakpoint', threadId: 1, allThreadsStopped: true } }
        : seq % 10 === 5
          ? { seq, type: 'event', event: 'thread', body: { reason: 'started', threadId: seq } }
          : {
              seq,
              type: 'event',
              event: 'output',
              body: { category: 'stdout', output: `step ${seq}: loss=${(1 / seq).toFixed(6)} ✓\n` }
            };
    frames.push(frame(m));
  }
  return session('small', Buffer.concat(frames), frames.length);
}

function hugeSession() {
  const diagnostics = [];
  let size = 0;
  for (let i = 0; size < 5 * 2 ** 20; i++) {
    const d = {
      range: { start: { line: i, character: 4 }, end: { line: i, character: 12 } },
      severity: 1,
      code: 'reportUndefinedVariable',
      source: 'basedpyright',
      message: `"name_${i}" is not defined`
    };
    size += JSON.stringify(d).length + 1;
    diagnostics.push(d);
  }
  const unit = frame({
    jsonrpc: '2.0',
    method: 'textDocument/publishDiagnostics',
    params: { uri: 'file:///work/generated.py', version: 1, diagnostics }
  });
  return session('huge', Buffer.concat([unit, unit, unit]), 3);
}

/** MB/s of one decode of the whole stream by the reader `make` builds. */
async function run(s, make) {
  const source = new EventEmitter();
  const reader = make(source);
  let n = 0;
  let errors = 0;
  reader.onError(() => errors++);
  const start = process.hrtime.bigint();
  const done = new Promise((resolve) => reader.listen(() => ++n === s.expected && resolve()));
  // One chunk per event-loop turn, as a pipe delivers them (vscode-jsonrpc decodes each
  // message on its own turn; flooding it with all chunks at once measures its queue instead).
  for (const c of s.chunks) {
    source.emit('data', c);
    await new Promise((r) => setImmediate(r));
  }
  await done;
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  reader.dispose();
  if (errors) throw new Error(`${errors} errors decoding the ${s.name} stream`);
  return s.bytes / 2 ** 20 / seconds;
}

const ours = (src) => createFramedReader(src);
const theirs = (src) => new StreamMessageReader(src);
console.log(machineLine());
const results = {};
for (const s of [lspSession(), smallSession(), hugeSession()]) {
  s.bytes = s.chunks.reduce((sum, c) => sum + c.length, 0);
  console.log(`${s.name}: ${round(s.bytes / 2 ** 20)} MB, ${s.expected} messages, ${s.chunks.length} chunks of 64 KiB`);
  await run(s, ours);
  await run(s, theirs);
  const a = [];
  const b = [];
  for (let i = 0; i < 7; i++) {
    a.push(await run(s, ours));
    b.push(await run(s, theirs));
  }
  console.log(`  ours MB/s:    ${a.map((x) => round(x)).join(' ')}`);
  console.log(`  jsonrpc MB/s: ${b.map((x) => round(x)).join(' ')}`);
  results[s.name] = { ours: median(a), theirs: median(b) };
  console.log(
    `  ${s.name}: ours=${round(median(a))} jsonrpc=${round(median(b))} ratio=${round(median(a) / median(b), 2)}`
  );
}
const r = (k) => round(results[k].ours / results[k].theirs, 2);
console.log(
  `framing: ours_mb_s=${round(results.lsp.ours)} jsonrpc_mb_s=${round(results.lsp.theirs)} ratio=${r('lsp')} small_ratio=${r('small')} huge_ratio=${r('huge')}`
);
