// Content-Length framing throughput (DBG-6; issue #10): the same byte stream — the
// recorded basedpyright session (server/test/framing/fixtures/lsp-session.bin) repeated to
// ~16 MB, cut into 64 KiB chunks delivered one per event-loop turn as a pipe does — decoded by our reader
// (server/src/framing: scanner in front of vscode-jsonrpc's reader) and by vscode-jsonrpc's
// own StreamMessageReader, alternating, 7 rounds each after a warm-up. Prints MB/s medians.
// Needs server/dist (npm run build:ts).
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { StreamMessageReader } from 'vscode-jsonrpc/node.js';
import { createFramedReader } from '../server/dist/framing/index.js';
import { machineLine, median, round } from './lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const session = readFileSync(path.join(here, '../server/test/framing/fixtures/lsp-session.bin'));
const perSession = JSON.parse(readFileSync(path.join(here, '../server/test/framing/fixtures/lsp-session.json'), 'utf8')).length;
const copies = Math.ceil((16 * 2 ** 20) / session.length);
const stream = Buffer.concat(Array.from({ length: copies }, () => session));
const expected = copies * perSession;
const CHUNK = 64 * 1024;
const chunks = [];
for (let i = 0; i < stream.length; i += CHUNK) chunks.push(stream.subarray(i, i + CHUNK));

/** MB/s of one decode of the whole stream by the reader `make` builds. */
async function run(make) {
  const source = new EventEmitter();
  const reader = make(source);
  let n = 0;
  let errors = 0;
  reader.onError(() => errors++);
  const start = process.hrtime.bigint();
  const done = new Promise((resolve) => reader.listen(() => ++n === expected && resolve()));
  // One chunk per event-loop turn, as a pipe delivers them (vscode-jsonrpc decodes each
  // message on its own turn; flooding it with all chunks at once measures its queue instead).
  for (const c of chunks) {
    source.emit('data', c);
    await new Promise((r) => setImmediate(r));
  }
  await done;
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  reader.dispose();
  if (errors) throw new Error(`${errors} errors decoding the bench stream`);
  return stream.length / 2 ** 20 / seconds;
}

const ours = (s) => createFramedReader(s);
const theirs = (s) => new StreamMessageReader(s);
console.log(machineLine());
console.log(`stream: ${round(stream.length / 2 ** 20)} MB, ${expected} messages, ${chunks.length} chunks of 64 KiB`);
await run(ours);
await run(theirs);
const a = [];
const b = [];
for (let i = 0; i < 7; i++) {
  a.push(await run(ours));
  b.push(await run(theirs));
}
console.log(`ours MB/s:    ${a.map((x) => round(x)).join(' ')}`);
console.log(`jsonrpc MB/s: ${b.map((x) => round(x)).join(' ')}`);
console.log(`framing: ours_mb_s=${round(median(a))} jsonrpc_mb_s=${round(median(b))} ratio=${round(median(a) / median(b), 2)}`);
