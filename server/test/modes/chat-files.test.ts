/**
 * The one durable per-chat document behind plans, orchestrations and reviews
 * (`modes/chat-files.ts`, MODE-3/4/5), and the card re-rendering their flows and the debug
 * follower share (`ports/tool-cards.ts`).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ChatEvent, ToolCallDisplay, ToolCallItem } from '@cellmate/protocol';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { updateToolCards } from '../../src/ports/tool-cards.js';
import { ChatFiles } from '../../src/modes/chat-files.js';
import { tempDir } from '../helpers/temp.js';

interface Note {
  chatId: string;
  text: string;
}

const store = (directory: string, problems: string[] = []) =>
  new ChatFiles<Note[]>({
    directory,
    key: 'notes',
    noun: 'note',
    schema: z.array(z.object({ chatId: z.string(), text: z.string() })),
    empty: () => [],
    accept: (chatId, stored) => (stored as Note[]).filter((n) => n.chatId === chatId),
    onProblem: (m) => problems.push(m)
  });

describe('ChatFiles: one durable document per chat (MODE-3/4/5)', () => {
  it('writes {version, key} whole, leaves no temp file, and a fresh store reads it back', async () => {
    const dir = await tempDir();
    const a = store(dir);
    const notes = a.get('chat-1');
    notes.push({ chatId: 'chat-1', text: 'one' });
    a.save('chat-1', notes);
    expect(JSON.parse(readFileSync(path.join(dir, 'chat-1.json'), 'utf8'))).toEqual({
      version: 1,
      notes: [{ chatId: 'chat-1', text: 'one' }]
    });
    expect(readdirSync(dir)).toEqual(['chat-1.json']);
    expect(store(dir).get('chat-1')).toEqual([{ chatId: 'chat-1', text: 'one' }]);
  });

  it("drops another chat's records, sets an unreadable file aside and says so, refuses a chat id that is a path", async () => {
    const dir = await tempDir();
    writeFileSync(
      path.join(dir, 'chat-2.json'),
      JSON.stringify({
        version: 1,
        notes: [
          { chatId: 'other', text: 'x' },
          { chatId: 'chat-2', text: 'mine' }
        ]
      })
    );
    writeFileSync(path.join(dir, 'chat-3.json'), '{"version": 2}');
    const problems: string[] = [];
    const s = store(dir, problems);
    expect(s.get('chat-2')).toEqual([{ chatId: 'chat-2', text: 'mine' }]);
    expect(s.get('chat-3')).toEqual([]);
    expect(existsSync(path.join(dir, 'chat-3.json.unreadable'))).toBe(true);
    expect(problems).toEqual([
      expect.stringMatching(/^the note file of chat chat-3 was unreadable .*kept as .*chat-3\.json\.unreadable$/s)
    ]);
    expect(() => s.get('../etc/passwd')).toThrow(RangeError);
    expect(() => s.save('a/b', [])).toThrow(RangeError);
    s.remove('chat-2');
    expect(existsSync(path.join(dir, 'chat-2.json'))).toBe(false);
    expect(s.get('chat-2')).toEqual([]);
  });
});

describe('updateToolCards: changed cards go to every pane as item-updated', () => {
  const card = (id: string, n: number): ToolCallItem =>
    ({
      kind: 'tool',
      id,
      toolName: 'x',
      status: 'ok',
      display: { kind: 'plan', planId: 'p', n } as unknown as ToolCallDisplay
    }) as unknown as ToolCallItem;
  const chats = (items: unknown[]) => {
    const published: ChatEvent[] = [];
    return { published, get: () => ({ items }), publish: (_: string, e: ChatEvent) => published.push(e) };
  };
  const render = (item: ToolCallItem) => ({ ...item.display, n: 2 }) as unknown as ToolCallDisplay;

  it('every matching card, or only the newest; an unchanged display publishes nothing', () => {
    const all = chats([card('a', 1), { kind: 'user', id: 'u' }, card('b', 2), card('c', 1)]);
    updateToolCards(all, 'chat', { match: () => true, render });
    expect(all.published.map((e) => (e as { item: ToolCallItem }).item.id)).toEqual(['a', 'c']);
    const latest = chats([card('a', 1), card('c', 1)]);
    updateToolCards(latest, 'chat', { match: () => true, render, latestOnly: true });
    expect(latest.published.map((e) => (e as { item: ToolCallItem }).item.id)).toEqual(['c']);
  });

  it('a chat that cannot be read updates nothing and is reported', () => {
    const errors: unknown[] = [];
    updateToolCards(
      {
        get: () => {
          throw new Error('gone');
        },
        publish: () => {
          throw new Error('never');
        }
      },
      'chat',
      { match: () => true, render, onUnreadable: (e) => errors.push(e) }
    );
    expect(errors.map(String)).toEqual(['Error: gone']);
  });
});
