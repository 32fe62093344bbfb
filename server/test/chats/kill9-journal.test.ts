import { PROTOCOL_VERSION, type ChatEvent, type TranscriptItem } from '@cellmate/protocol';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sendRequest } from '../../src/transport/typed-rpc.js';
import { buildServer, startCompanion, type Companion } from '../helpers/companion.js';
import { connectClient, type TestClient } from '../helpers/rpc-client.js';
import { tempDir } from '../helpers/temp.js';

// SPEC §0 (a restart loses nothing), issue #15: what a pane was told is on disk before it is told.

beforeAll(() => buildServer(), 120_000);

let companion: Companion | undefined;
let client: TestClient | undefined;
afterEach(async () => {
  client?.close();
  await companion?.kill9();
  companion = client = undefined;
});

/** Completed: the pane will not see this item change again (the journal must have it). */
function isCompleted(item: TranscriptItem): boolean {
  switch (item.kind) {
    case 'assistant':
      return !item.streaming;
    case 'tool':
      return item.status !== 'running';
    case 'question':
      return item.state !== 'pending';
    default:
      return true;
  }
}

/** The pane's view: the last version of each item it received, kept when completed. */
function completedItems(
  events: Array<{ chatId: string; event: ChatEvent }>,
  chatId: string
): Map<string, TranscriptItem> {
  const latest = new Map<string, TranscriptItem>();
  for (const { chatId: id, event } of events) {
    if (id !== chatId) continue;
    if (event.type === 'item-added' || event.type === 'item-updated') latest.set(event.item.id, event.item);
    if (event.type === 'items-removed') event.itemIds.forEach((i) => latest.delete(i));
  }
  return new Map([...latest].filter(([, item]) => isCompleted(item)));
}

/** A small deterministic PRNG (mulberry32) so a failing trial can be replayed from its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('kill -9 of the companion during a long turn (issue #15)', () => {
  it('after each of 24 kills at random moments, every item the client had received as completed is in the reloaded chat, and the next turn works', async () => {
    const ws = await tempDir();
    const socket = path.join(ws, 's.sock');
    await mkdir(path.join(ws, 'src'));
    for (let f = 0; f < 5; f++)
      await writeFile(path.join(ws, 'src', `m${f}.py`), `def f${f}():\n    return ${f}\n`.repeat(20));
    const calls = [
      { toolName: 'read', input: { path: 'src/m1.py' } },
      { toolName: 'grep', input: { pattern: 'return 3' } },
      { toolName: 'glob', input: { pattern: 'src/*.py' } }
    ];
    const steps = Array.from({ length: 400 }, (_, i) => ({
      text: `Step ${i} looks at the code.`,
      chunkDelayMs: 1,
      toolCalls: [calls[i % 3], calls[(i + 1) % 3]]
    }));
    await writeFile(path.join(ws, 'long.json'), JSON.stringify({ steps }));
    await writeFile(
      path.join(ws, 'short.json'),
      JSON.stringify({ steps: [{ text: 'Done after the restarts.', chunkDelayMs: 0 }] })
    );
    const long = { provider: 'scripted' as const, model: 'scripted', scriptPath: 'long.json' };
    const seed = Number(process.env.KILL9_SEED ?? Date.now() % 100_000);
    const random = prng(seed);
    const context = `seed ${seed} (KILL9_SEED=${seed} replays it)`;

    let chatId: string | undefined;
    const seen = new Map<string, TranscriptItem>(); // everything completed the client was ever told
    let killedWithNewItems = 0;
    for (let trial = 0; trial < 24; trial++) {
      companion = await startCompanion(ws, socket, { CELLMATE_MAX_STEPS: '1000' });
      client = await connectClient(socket);
      await sendRequest(client.connection, 'cellmate/hello', { protocolVersion: PROTOCOL_VERSION });
      chatId ??= (await sendRequest(client.connection, 'chat/create', {})).id;
      // The reloaded chat holds every item the client saw completed before the last kill.
      const reloaded = await sendRequest(client.connection, 'chat/get', { chatId, limit: 10_000 });
      const byId = new Map(reloaded.items.map((i) => [i.id, i]));
      for (const [id, item] of seen) expect(byId.get(id), `${context}, trial ${trial}: item ${id}`).toEqual(item);
      expect(reloaded.running, context).toBe(false);

      // A long turn, killed after a random number of events (or a random time), mid-write or between writes.
      const events = client.events;
      const killAfter = 1 + Math.floor(random() * 120);
      const byTime = random() < 0.3;
      const killed = new Promise<void>((resolve) => {
        const kill = () => void companion!.kill9().then(resolve);
        if (byTime) setTimeout(kill, 20 + Math.floor(random() * 400));
        else
          client!.onEvent(() => (events.length === killAfter || events.at(-1)!.event.type === 'turn-ended') && kill());
      });
      // Not awaited: a kill may land before the reply (the connection then never answers).
      void sendRequest(client.connection, 'chat/send', {
        chatId,
        text: `Trial ${trial}: go through the code`,
        model: long
      }).catch(() => undefined);
      await killed;
      const ended = events.find((e) => e.event.type === 'turn-ended');
      expect(
        ended,
        `${context}, trial ${trial}: the turn ended before the kill; companion stderr:\n${companion.stderr()}`
      ).toBeUndefined();
      await new Promise((resolve) => setTimeout(resolve, 20)); // whatever was already in the socket buffer counts as received
      const received = completedItems(events, chatId);
      if ([...received.keys()].some((id) => !seen.has(id))) killedWithNewItems++;
      for (const [id, item] of received) seen.set(id, item);
      client.close();
      client = undefined;
      companion = undefined;
    }
    expect(killedWithNewItems, context).toBeGreaterThan(12); // the kills landed mid-turn, not before it started

    // The last restart: everything is there, and a new turn runs to its end.
    companion = await startCompanion(ws, socket);
    client = await connectClient(socket);
    await sendRequest(client.connection, 'cellmate/hello', { protocolVersion: PROTOCOL_VERSION });
    const final = await sendRequest(client.connection, 'chat/get', { chatId: chatId!, limit: 10_000 });
    const byId = new Map(final.items.map((i) => [i.id, i]));
    for (const [id, item] of seen) expect(byId.get(id), `${context}: item ${id}`).toEqual(item);
    const from = client.events.length;
    await sendRequest(client.connection, 'chat/send', {
      chatId: chatId!,
      text: 'Wrap up',
      model: { provider: 'scripted', model: 'scripted', scriptPath: 'short.json' }
    });
    expect(await client.turnEnded(chatId!, from)).toMatchObject({ type: 'turn-ended', reason: 'stop' });
    const after = await sendRequest(client.connection, 'chat/get', { chatId: chatId!, limit: 2 });
    expect(after.items.at(-1)).toMatchObject({ kind: 'assistant', text: 'Done after the restarts.', streaming: false });
    expect(after.olderCount).toBe(final.items.length);
  }, 240_000); // ~25 s on a quiet machine, 60 s under a full parallel run; the bound only stops a hang
});
