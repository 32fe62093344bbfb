// chat-store: what one streamed assistant item costs the chat store (item-added, five
// text-deltas, the final item-updated: applied in memory and journaled) in a chat that already
// holds 500, 2,500 or 10,000 items — per-event cost must not grow with the transcript.
//
//   npm run bench -- chat-store [ITEMS_PER_SIZE=2000]
//
// Sizes are measured in five interleaved rounds; figures are medians.
// CHAT_STORE_DIST=<a build's server/dist> measures another build (e.g. an older commit's).
// Last line: chat-store: item_us_500=<µs> item_us_2500=<µs> item_us_10000=<µs> growth=<10,000 / 500>
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { machineLine, median, round } from './lib.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.resolve(process.env.CHAT_STORE_DIST ?? path.join(repo, 'server', 'dist'));
const { ChatStore } = await import(pathToFileURL(path.join(dist, 'chats', 'chat-store.js')).href);
const { silentLogger } = await import(pathToFileURL(path.join(dist, 'config', 'logger.js')).href);
const REPS = Number(process.argv[2] ?? 2000);

async function perItem(size) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cellmate-chat-store-'));
  const store = await ChatStore.open({ directory: dir, logger: silentLogger });
  const id = 'bench';
  store.create({
    chat: { id, title: 'bench', mode: 'agent', createdAt: '', updatedAt: '', items: [], running: false },
    titleSource: 'default',
    messages: []
  });
  store.applyEvent(id, { type: 'turn-started', turnId: 't' });
  for (let i = 0; i < size; i++)
    store.applyEvent(id, {
      type: 'item-added',
      item: { kind: 'notice', id: `n${i}`, time: '', turnId: 't', level: 'info', text: 'earlier item' }
    });
  const t0 = performance.now();
  for (let r = 0; r < REPS; r++) {
    const itemId = `a${r}`;
    store.applyEvent(id, {
      type: 'item-added',
      item: { kind: 'assistant', id: itemId, time: '', turnId: 't', text: '', streaming: true }
    });
    for (let d = 0; d < 5; d++) store.applyEvent(id, { type: 'text-delta', itemId, delta: 'word ' });
    store.applyEvent(id, {
      type: 'item-updated',
      item: {
        kind: 'assistant',
        id: itemId,
        time: '',
        turnId: 't',
        text: 'word word word word word ',
        streaming: false
      }
    });
  }
  const us = ((performance.now() - t0) * 1000) / REPS;
  await store.dispose();
  rmSync(dir, { recursive: true, force: true });
  return us;
}

console.log(machineLine());
console.log(`build: ${dist}`);
await perItem(500); // warm-up
const SIZES = [500, 2500, 10000];
const runs = Object.fromEntries(SIZES.map((s) => [s, []]));
for (let round = 0; round < 5; round++) for (const size of SIZES) runs[size].push(await perItem(size));
const figures = Object.fromEntries(SIZES.map((s) => [s, median(runs[s])]));
for (const size of SIZES)
  console.log(
    `  ${String(size).padStart(5)} items: ${runs[size].map((x) => round(x)).join(' ')} µs per assistant item`
  );
console.log(
  `chat-store: item_us_500=${round(figures[500])} item_us_2500=${round(figures[2500])} item_us_10000=${round(figures[10000])} growth=${round(figures[10000] / figures[500], 2)}`
);
