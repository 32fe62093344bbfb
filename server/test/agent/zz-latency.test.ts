import { it } from 'vitest';
import path from 'node:path';
import { createHarness, scriptSettings } from '../helpers/chat-harness.js';
import { tempDir } from '../helpers/temp.js';
it('latency', async () => {
  const ws = await tempDir();
  const model = await scriptSettings(ws, { steps: [{ text: '{{sent_at}}', chunkDelayMs: 0 }] });
  const h = await createHarness(ws, { env: { CELLMATE_CONFIG: path.join(ws, 'none.json') } });
  const chat = h.service.create();
  const lat: number[] = []; const turnMs: number[] = [];
  h.service.onEvent((e) => { if (e.event.type === 'text-delta') lat.push(performance.timeOrigin + performance.now() - Number((e.event as { delta: string }).delta)); });
  for (let i = 0; i < 60; i++) {
    const n = h.events.length;
    const t0 = performance.now();
    await h.sendAndWait(chat.id, 'go ' + i, model);
    turnMs.push(performance.now() - t0);
    const ev = h.events.slice(n).find((e) => e.event.type === 'text-delta');
    // arrival time not recorded by the harness: approximate with a listener below
  }
  console.log('turn p50', turnMs.sort((a, b) => a - b)[30].toFixed(2), 'token p50', lat.sort((a, b) => a - b)[30].toFixed(3), lat.slice(0,5));
  await h.dispose();
});
