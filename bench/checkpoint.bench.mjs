// What checkpoints cost the one write path: the same staged
// structural rewrite over N generated notebooks, applied by `resolve accept` through the real
// registry, once without checkpoints (baseline) and once inside a turn whose writes keep
// what they replace (CheckpointStore: each notebook read and appended to the turn's JSONL
// before it is written). Rounds interleave baseline and checkpointed runs (alternating which goes first) on fresh
// copies; the figures are medians.
// Needs server/dist (npm run build:ts). Usage: npm run bench -- checkpoint [notebooks=300] [rounds=6]
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { machineLine, round } from './lib.mjs';
import { builtinTools } from '../server/dist/tools/index.js';
import { ToolRegistry } from '../server/dist/gate/registry.js';
import { StagedEdits } from '../server/dist/structural/staged-edits.js';
import { CheckpointStore } from '../server/dist/checkpoints/checkpoint-store.js';

const count = Number(process.argv[2] ?? 300);
const rounds = Number(process.argv[3] ?? 6);
const root = await mkdtemp(path.join(os.tmpdir(), 'cellmate-checkpoint-bench-'));
const seed = path.join(root, 'seed');
const cell = (id, source, i) => ({
  cell_type: 'code',
  execution_count: i,
  id,
  metadata: {},
  outputs: [{ name: 'stdout', output_type: 'stream', text: [`result ${id}\n`] }],
  source: source.split(/(?<=\n)/)
});
await mkdir(seed, { recursive: true });
for (let n = 0; n < count; n++) {
  const nb = {
    cells: [
      cell(`a${n}`, `r = fetch("https://x/${n}", 3)\nprint(r)`, 1),
      cell(`b${n}`, `data = fetch(u, ${n % 7})`, 2)
    ],
    metadata: { kernelspec: { display_name: 'Python 3', language: 'python', name: 'python3' } },
    nbformat: 4,
    nbformat_minor: 5
  };
  await writeFile(path.join(seed, `nb${String(n).padStart(4, '0')}.ipynb`), `${JSON.stringify(nb, null, 1)}\n`);
}

/** Stages on a fresh copy, then times only the apply. */
async function applyMs(withCheckpoints, i) {
  const ws = path.join(root, `${withCheckpoints ? 'ck' : 'base'}${i}`);
  await cp(seed, ws, { recursive: true });
  const checkpoints = withCheckpoints
    ? new CheckpointStore({ directory: path.join(ws, '.cellmate', 'chats', 'checkpoints') })
    : undefined;
  const registry = new ToolRegistry(builtinTools({ edits: new StagedEdits() }), checkpoints ? { checkpoints } : {});
  const ctx = {
    workspace: ws,
    signal: new AbortController().signal,
    actor: 'model',
    chatId: 'bench',
    turnId: `turn${i}`
  };
  const staged = await registry.call('ast_edit', { pattern: 'fetch($U, $T)', rewrite: 'fetch($U, timeout=$T)' }, ctx);
  if (!staged.ok) throw new Error(staged.output);
  const editId = /edit_[0-9a-f]+_\d+/.exec(staged.output)[0];
  const t = performance.now();
  const applied = await registry.call('resolve', { edit_id: editId, action: 'accept' }, ctx);
  const ms = performance.now() - t;
  if (!applied.ok) throw new Error(applied.output);
  if (checkpoints && checkpoints.list('bench')[0]?.paths.length !== count)
    throw new Error('not every notebook was kept');
  await rm(ws, { recursive: true, force: true });
  return ms;
}

console.log(machineLine());
const base = [];
const kept = [];
for (let i = 0; i < rounds; i++) {
  // The order alternates, so a warm cache favours neither.
  if (i % 2 === 0) {
    base.push(await applyMs(false, i));
    kept.push(await applyMs(true, i));
  } else {
    kept.push(await applyMs(true, i));
    base.push(await applyMs(false, i));
  }
}
await rm(root, { recursive: true, force: true });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `checkpoint: notebooks=${count} apply_ms=${round(median(base), 0)} apply_checkpointed_ms=${round(median(kept), 0)} ratio=${round(median(kept) / median(base), 2)}`
);
