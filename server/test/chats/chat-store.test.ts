import type { ModelSettings } from '@cellmate/protocol';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { INTERRUPTED_NOTICE } from '../../src/chats/chat-file.js';
import { titleFromMessage } from '../../src/chats/title.js';
import { createHarness, scriptSettings } from '../helpers/chat-harness.js';
import { tempDir } from '../helpers/temp.js';

const chatsDir = (ws: string) => path.join(ws, '.cellmate', 'chats');

describe('chat persistence', () => {
  it('survives a restart: a second store on the same folder sees the same chats and history', async () => {
    const ws = await tempDir();
    await writeFile(path.join(ws, 'notes.md'), 'one\ntwo\n');
    const model = await scriptSettings(ws, {
      turns: [
        [
          { text: 'Reading.', toolCalls: [{ toolName: 'read', input: { path: 'notes.md' } }], chunkDelayMs: 0 },
          { text: 'Two lines.', chunkDelayMs: 0 }
        ],
        [{ text: 'Second answer.', chunkDelayMs: 0 }]
      ]
    });
    const first = await createHarness(ws);
    const chat = first.service.create();
    const before = await first.sendAndWait(chat.id, 'How many lines are in notes.md?', model);
    const renamed = first.service.create('My title');
    await first.dispose();

    const second = await createHarness(ws);
    expect(
      second.service
        .list()
        .map((c) => c.id)
        .sort()
    ).toEqual([chat.id, renamed.id].sort());
    const after = second.service.get(chat.id);
    expect(after).toEqual(before);
    expect(after.title).toBe('How many lines are in notes.md?');
    expect(second.service.get(renamed.id).title).toBe('My title');
    const record = second.store.get(chat.id)!;
    expect(record.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);

    // The conversation continues where it was: the scripted provider is at turn 1.
    const continued = await second.sendAndWait(chat.id, 'And now?', model);
    expect(continued.items.at(-1)).toMatchObject({ kind: 'assistant', text: 'Second answer.' });
    expect(continued.title).toBe('How many lines are in notes.md?');
    await second.dispose();
  });

  it('appends one numbered record per change to the chat journal and leaves no temporary files', async () => {
    const ws = await tempDir();
    const h = await createHarness(ws);
    const chat = h.service.create();
    await h.sendAndWait(chat.id, 'hi', { provider: 'scripted', model: '', scriptPath: '' } as ModelSettings);
    await h.dispose();
    const files = await readdir(chatsDir(ws));
    expect(files).toEqual([`${chat.id}.jsonl`]);
    const records = (await readFile(path.join(chatsDir(ws), files[0]!), 'utf8'))
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(records.map((r) => r.s)).toEqual(records.map((_, i) => i + 1));
    expect(records[0]).toMatchObject({ t: 'chat', titleSource: 'default', chat: { id: chat.id, running: false } });
    expect([...records].reverse().find((r: { t: string }) => r.t === 'chat')).toMatchObject({
      titleSource: 'auto',
      chat: { running: false }
    });
    // Streamed text is never written delta by delta: each assistant item is written when added and when final.
    const assistantIds = h.service
      .get(chat.id)
      .items.filter((i) => i.kind === 'assistant')
      .map((i) => i.id);
    for (const id of assistantIds)
      expect(records.filter((r) => r.t === 'item' && r.item.id === id).length).toBeLessThanOrEqual(2);
    expect(records.some((r) => r.t === 'messages')).toBe(true);
  });

  it('skips a corrupt chat file and keeps it on disk', async () => {
    const ws = await tempDir();
    const h = await createHarness(ws);
    const good = h.service.create('good');
    await h.dispose();
    const corrupt = path.join(chatsDir(ws), 'corrupt-1.json');
    await writeFile(corrupt, '{"version": 1, "chat": {');
    const wrongShape = path.join(chatsDir(ws), 'wrong-2.json');
    await writeFile(wrongShape, JSON.stringify({ version: 1, chat: { id: 'other' } }));

    const again = await createHarness(ws);
    expect(again.service.list().map((c) => c.id)).toEqual([good.id]);
    expect(await readFile(corrupt, 'utf8')).toBe('{"version": 1, "chat": {');
    expect((await readdir(chatsDir(ws))).sort()).toEqual([`${good.id}.jsonl`, 'corrupt-1.json', 'wrong-2.json'].sort());
    await again.dispose();
  });

  it('marks a chat that was mid-turn as interrupted on load', async () => {
    const ws = await tempDir();
    const model = await scriptSettings(ws, {
      steps: [{ text: 'a b c d e f g h i j k l m n o p q r s t u v w x y z', chunkDelayMs: 200 }]
    });
    const h = await createHarness(ws);
    const chat = h.service.create();
    await h.service.send({ chatId: chat.id, text: 'long answer please', settings: model });
    await h.waitForEvent((e) => e.type === 'text-delta');
    await h.dispose(); // like SIGTERM mid-turn: the journal ends with the chat running
    const lastChatRecord = async () =>
      (await readFile(path.join(chatsDir(ws), `${chat.id}.jsonl`), 'utf8'))
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l))
        .reverse()
        .find((r: { t: string }) => r.t === 'chat');
    expect((await lastChatRecord()).chat.running).toBe(true);

    const after = await createHarness(ws);
    const loaded = after.service.get(chat.id);
    expect(loaded.running).toBe(false);
    expect(loaded.items.at(-1)).toMatchObject({ kind: 'notice', level: 'warning', text: INTERRUPTED_NOTICE });
    expect(loaded.items.find((i) => i.kind === 'assistant')).toMatchObject({ streaming: false });
    // The repair is journaled too.
    expect((await lastChatRecord()).chat.running).toBe(false);
    await after.dispose();
  });

  it('deletes, renames and reports list changes', async () => {
    const ws = await tempDir();
    const h = await createHarness(ws);
    const a = h.service.create();
    expect(h.service.rename(a.id, '  Renamed  ')).toMatchObject({ id: a.id, title: 'Renamed' });
    expect(await h.service.delete(a.id)).toBe(true);
    expect(await h.service.delete(a.id)).toBe(false);
    expect(h.lists.map((l) => l.length)).toEqual([1, 1, 0]);
    expect(() => h.service.get(a.id)).toThrow(/does not exist/);
    await h.dispose();
    expect(await readdir(chatsDir(ws))).toEqual([]);
  });
});

describe('titleFromMessage', () => {
  it.each([
    ['  hello   world ', 'hello world'],
    ['', 'New chat'],
    ['x'.repeat(100), `${'x'.repeat(59)}…`],
    ['word '.repeat(20), `${'word '.repeat(11).trim()}…`]
  ])('%j → %j', (input, expected) => {
    expect(titleFromMessage(input)).toBe(expected);
  });
});
