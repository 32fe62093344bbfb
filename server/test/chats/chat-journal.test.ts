import type { Chat, ToolCallItem, TranscriptItem } from '@cellmate/protocol';
import { cpSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { INTERRUPTED_NOTICE, type ChatRecord } from '../../src/chats/chat-file.js';
import { ChatStore } from '../../src/chats/chat-store.js';
import { silentLogger } from '../../src/config/logger.js';
import { createHarness, scriptSettings } from '../helpers/chat-harness.js';
import { tempDir } from '../helpers/temp.js';

// SPEC §0 (a restart loses nothing), issue #15: the chat journal.

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'v1');
const T0 = '2026-12-01T10:00:00.000Z';

function newRecord(id: string): ChatRecord {
  return {
    chat: { id, title: 'Journal', mode: 'agent', createdAt: T0, updatedAt: T0, items: [], running: false },
    titleSource: 'user',
    messages: []
  };
}

function toolItem(n: number, status: ToolCallItem['status'] = 'ok'): ToolCallItem {
  return {
    kind: 'tool',
    id: `item-${n}`,
    time: T0,
    turnId: 'turn-1',
    callId: `call-${n}`,
    name: 'read',
    args: { path: `f${n}.txt` },
    actor: 'model',
    status,
    output: `line ${n}\n`.repeat(3)
  };
}

async function storeWith(dir: string, items: number): Promise<ChatStore> {
  const store = await ChatStore.open({ directory: dir, logger: silentLogger });
  store.create(newRecord('c1'));
  for (let i = 0; i < items; i++) store.applyEvent('c1', { type: 'item-added', item: toolItem(i) });
  return store;
}

const journal = (dir: string, id = 'c1') => path.join(dir, `${id}.jsonl`);
const itemsOf = (store: ChatStore, id = 'c1'): TranscriptItem[] => structuredClone(store.get(id)!.chat.items);

describe('chat journal (issue #15)', () => {
  it('a journal cut at every byte offset of its last record loads with every earlier item intact, and appends go on', async () => {
    const ws = await tempDir();
    const dir = path.join(ws, 'full');
    const store = await storeWith(dir, 5);
    const earlier = itemsOf(store);
    store.applyEvent('c1', { type: 'item-added', item: toolItem(5) });
    await store.dispose();
    const bytes = readFileSync(journal(dir));
    const lastStart = bytes.subarray(0, bytes.length - 1).lastIndexOf(0x0a) + 1;
    const warnings: string[] = [];
    const logger = { ...silentLogger, warn: (m: string) => warnings.push(m) };
    for (let cut = lastStart; cut < bytes.length; cut++) {
      const trial = path.join(ws, `cut-${cut}`);
      await mkdir(trial);
      writeFileSync(journal(trial), bytes.subarray(0, cut));
      const again = await ChatStore.open({ directory: trial, logger });
      expect(itemsOf(again), `cut at ${cut}`).toEqual(earlier);
      // The torn tail is cut off the file, so the next record starts on a line of its own.
      again.applyEvent('c1', { type: 'item-added', item: toolItem(99) });
      await again.dispose();
      const third = await ChatStore.open({ directory: trial, logger: silentLogger });
      expect(itemsOf(third).map((i) => i.id)).toEqual([...earlier.map((i) => i.id), 'item-99']);
      await third.dispose();
      await rm(trial, { recursive: true });
    }
    expect(warnings.filter((w) => w.includes('torn last line')).length).toBe(bytes.length - 1 - lastStart);
    // The whole file (newline included) keeps the last item too.
    const whole = await ChatStore.open({ directory: dir, logger: silentLogger });
    expect(itemsOf(whole).map((i) => i.id)).toEqual([...earlier.map((i) => i.id), 'item-5']);
    await whole.dispose();
  });

  it('in a chat of 5,000 items, appending one item writes that item only; paging returns the latest first', async () => {
    const ws = await tempDir();
    const store = await storeWith(ws, 5000);
    const sizeBefore = statSync(journal(ws)).size;
    const writtenBefore = store.stats.bytesWritten;
    const item = toolItem(5000);
    store.applyEvent('c1', { type: 'item-added', item });
    const delta = statSync(journal(ws)).size - sizeBefore;
    expect(store.stats.bytesWritten - writtenBefore).toBe(delta);
    const itemBytes = Buffer.byteLength(JSON.stringify(item));
    expect(delta).toBeGreaterThanOrEqual(itemBytes);
    expect(delta).toBeLessThan(itemBytes + 100); // the record's envelope: sequence number, time, type
    expect(readdirSync(ws)).toEqual(['c1.jsonl']); // no snapshot rewritten

    const latest = store.page('c1', 50);
    expect(latest.olderCount).toBe(4951);
    expect(latest.items.map((i) => i.id)).toEqual(Array.from({ length: 50 }, (_, i) => `item-${4951 + i}`));
    const older = store.page('c1', 50, latest.items[0]!.id);
    expect(older.olderCount).toBe(4901);
    expect(older.items.at(-1)!.id).toBe('item-4950');
    expect(() => store.page('c1', 10, 'no-such-item')).toThrow(/has no item/);
    await store.dispose();
  });

  it('version-1 chat files of the previous release load unchanged, and go on as journals', async () => {
    const ws = await tempDir();
    const dir = path.join(ws, '.cellmate', 'chats');
    await mkdir(dir, { recursive: true });
    const originals = new Map<string, { chat: Chat; messages: unknown[] }>();
    for (const name of readdirSync(fixtures).filter((n) => n.endsWith('.json'))) {
      cpSync(path.join(fixtures, name), path.join(dir, name));
      originals.set(name.slice(0, -5), JSON.parse(readFileSync(path.join(fixtures, name), 'utf8')));
    }
    expect(originals.size).toBe(3);
    const model = await scriptSettings(ws, { steps: [{ text: 'Still here.', chunkDelayMs: 0 }] });
    const h = await createHarness(ws);
    for (const [id, original] of originals) {
      const loaded = h.service.get(id);
      expect(loaded.title).toBe(original.chat.title);
      expect((original.chat as { mode: string }).mode).toBe('chat'); // the Agent mode's earlier name
      expect(loaded.mode).toBe('agent');
      expect(loaded.createdAt).toBe(original.chat.createdAt);
      expect(h.store.get(id)!.messages).toEqual(original.messages);
      if (!original.chat.running) {
        expect(loaded.items).toEqual(original.chat.items);
        continue;
      }
      // The chat killed mid-turn: its items, the streaming one ended, then the interrupted notice.
      expect(loaded.running).toBe(false);
      const repaired = original.chat.items.map((i) => (i.kind === 'assistant' ? { ...i, streaming: false } : i));
      expect(loaded.items.slice(0, -1)).toEqual(repaired);
      expect(loaded.items.at(-1)).toMatchObject({ kind: 'notice', text: INTERRUPTED_NOTICE });
    }
    // The old file is the snapshot; new records go to the journal beside it.
    const [busyId] = [...originals.keys()].filter((id) => originals.get(id)!.chat.items.length > 3);
    const before = h.service.get(busyId!).items;
    const after = await h.sendAndWait(busyId!, 'One more question', model);
    await h.dispose();
    expect(readFileSync(path.join(dir, `${busyId}.json`), 'utf8')).toBe(
      readFileSync(path.join(fixtures, `${busyId}.json`), 'utf8')
    );
    const again = await createHarness(ws);
    expect(again.service.get(busyId!).items).toEqual(after.items);
    expect(after.items.slice(0, before.length)).toEqual(before);
    expect(
      again.service
        .list()
        .map((c) => c.title)
        .sort()
    ).toEqual([...originals.values()].map((o) => o.chat.title).sort());
    await again.dispose();
  });

  it('MODE-1: a journal and a snapshot written when the Agent mode was called `chat` open in Agent mode, and a later switch survives a restart', async () => {
    const ws = await tempDir();
    const dir = path.join(ws, '.cellmate', 'chats');
    await mkdir(dir, { recursive: true });
    const meta = (id: string) => ({ id, title: `old ${id}`, mode: 'chat', createdAt: T0, running: false });
    const journalId = '3f0c2a71-9a4e-4c55-8d0e-5b7e6f1a2b3c';
    writeFileSync(
      journal(dir, journalId),
      `${JSON.stringify({ s: 1, u: T0, t: 'chat', chat: meta(journalId), titleSource: 'user' })}\n`
    );
    const snapshotId = '8b1d4e62-0c7f-4a93-9e15-2d6a7c8f9e01';
    writeFileSync(
      path.join(dir, `${snapshotId}.json`),
      `${JSON.stringify({ version: 2, seq: 0, chat: { ...meta(snapshotId), updatedAt: T0, items: [] }, titleSource: 'user', messages: [] })}\n`
    );
    const h = await createHarness(ws);
    expect(h.service.get(journalId).mode).toBe('agent');
    expect(h.service.get(snapshotId).mode).toBe('agent');
    expect(h.service.list().map((c) => c.mode)).toEqual(['agent', 'agent']);
    h.service.setMode(journalId, 'plan');
    await h.dispose();
    const again = await createHarness(ws);
    expect(again.service.get(journalId).mode).toBe('plan');
    expect(again.service.get(snapshotId).mode).toBe('agent');
    await again.dispose();
  });

  it('compaction is crash-safe at every moment between the two renames, records appended meanwhile included', async () => {
    const ws = await tempDir();
    const dir = path.join(ws, 'live');
    const store = await ChatStore.open({ directory: dir, logger: silentLogger, compactMinDeadBytes: 1 });
    store.create(newRecord('c1'));
    for (let i = 0; i < 20; i++) {
      store.applyEvent('c1', { type: 'item-added', item: toolItem(i, 'running') });
      for (let k = 0; k < 4; k++)
        store.applyEvent('c1', { type: 'item-updated', item: { ...toolItem(i), title: `update ${k}` } });
      store.appendMessages('c1', [{ role: 'user', content: `message ${i}` }]);
    }
    const beforeSnapshot = readFileSync(journal(dir));
    store.applyEvent('c1', { type: 'turn-started', turnId: 'turn-2' });
    store.applyEvent('c1', { type: 'turn-ended', turnId: 'turn-2', reason: 'stop' }); // compaction starts (most of the journal is superseded)
    // Appended while the snapshot is being written: must survive every intermediate state.
    store.applyEvent('c1', { type: 'item-added', item: toolItem(100) });
    store.appendMessages('c1', [{ role: 'user', content: 'during compaction' }]);
    const journalDuring = readFileSync(journal(dir));
    await store.flush();
    expect(store.stats.compactions).toBe(1);
    const expected = itemsOf(store);
    const expectedMessages = structuredClone(store.get('c1')!.messages);
    expect(expectedMessages).toHaveLength(21);
    expect(expected.map((i) => i.id).at(-1)).toBe('item-100');
    const snapshotAfter = readFileSync(path.join(dir, 'c1.json'));
    const journalAfter = readFileSync(journal(dir));
    expect(journalAfter.length).toBeLessThan(journalDuring.length);
    await store.dispose();

    const states: Record<string, Record<string, Buffer>> = {
      'snapshot temp written, nothing renamed': { 'c1.jsonl': journalDuring, 'c1.json.1.abc.tmp': snapshotAfter },
      'snapshot renamed, long journal kept': { 'c1.json': snapshotAfter, 'c1.jsonl': journalDuring },
      'snapshot renamed, journal temp written': {
        'c1.json': snapshotAfter,
        'c1.jsonl': journalDuring,
        'c1.jsonl.1.abc.tmp': journalAfter
      },
      'both renamed': { 'c1.json': snapshotAfter, 'c1.jsonl': journalAfter }
    };
    for (const [name, files] of Object.entries(states)) {
      const trial = path.join(ws, name.replace(/\W+/g, '-'));
      await mkdir(trial);
      for (const [file, content] of Object.entries(files)) writeFileSync(path.join(trial, file), content);
      const again = await ChatStore.open({ directory: trial, logger: silentLogger });
      expect(itemsOf(again), name).toEqual(expected);
      expect(again.get('c1')!.messages, name).toEqual(expectedMessages);
      expect(
        (await readdir(trial)).filter((f) => f.endsWith('.tmp')),
        name
      ).toEqual([]);
      await again.dispose();
    }
    expect(beforeSnapshot.length).toBeGreaterThan(0);
  });

  it('a deletion cut short between its steps never brings half a chat back', async () => {
    const ws = await tempDir();
    const store = await storeWith(ws, 3);
    await store.dispose();
    const journalText = await readFile(journal(ws), 'utf8');
    const deletedLine = `${JSON.stringify({ s: 99, u: T0, t: 'deleted' })}\n`;
    await writeFile(journal(ws), journalText + deletedLine);
    const again = await ChatStore.open({ directory: ws, logger: silentLogger });
    expect(again.summaries()).toEqual([]);
    expect(await readdir(ws)).toEqual([]);
    await again.dispose();
  });

  it('keeps a bounded number of chats in memory and reads the others back from disk when asked', async () => {
    const ws = await tempDir();
    const store = await ChatStore.open({ directory: ws, logger: silentLogger, maxLoaded: 2 });
    for (let c = 0; c < 5; c++) {
      store.create(newRecord(`c${c}`));
      store.applyEvent(`c${c}`, { type: 'item-added', item: toolItem(c) });
    }
    const loaded = (store as unknown as { entries: Map<string, { record?: unknown }> }).entries; // white-box: what is in memory
    expect([...loaded.values()].filter((e) => e.record).length).toBe(2);
    expect(
      store
        .summaries()
        .map((s) => s.id)
        .sort()
    ).toEqual(['c0', 'c1', 'c2', 'c3', 'c4']);
    expect(itemsOf(store, 'c0').map((i) => i.id)).toEqual(['item-0']);
    store.applyEvent('c0', { type: 'item-added', item: toolItem(50) });
    expect([...loaded.values()].filter((e) => e.record).length).toBe(2);
    expect(itemsOf(store, 'c1').map((i) => i.id)).toEqual(['item-1']);
    expect(itemsOf(store, 'c0').map((i) => i.id)).toEqual(['item-0', 'item-50']);
    await store.dispose();
  });
});
