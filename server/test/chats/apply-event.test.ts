// The fold of chat events finds items through an index kept beside the chat, so an event
// costs the same at item 10 and at item 10,000; the index must answer exactly what a
// linear search answers, whatever else changed the array.
import type { Chat, TranscriptItem } from '@cellmate/protocol';
import { describe, expect, it } from 'vitest';
import { applyChatEvent, itemIndexOf } from '../../src/chats/apply-event.js';

const note = (id: string, text = id): TranscriptItem => ({
  kind: 'notice',
  id,
  time: '2026-01-01T00:00:00Z',
  turnId: 't',
  level: 'info',
  text
});
const chat = (items: TranscriptItem[] = []): Chat => ({
  id: 'c',
  title: 'c',
  mode: 'agent',
  createdAt: '',
  updatedAt: '',
  running: false,
  items
});
const linear = (c: Chat, id: string): number => c.items.findIndex((i) => i.id === id);

describe('itemIndexOf', () => {
  it('answers as findIndex does after pushes, replaced arrays, splices, reassignments and duplicates', () => {
    const c = chat([note('a'), note('b')]);
    const probe = (): void => {
      for (const id of ['a', 'b', 'c', 'd', 'e', 'x']) expect([id, itemIndexOf(c, id)]).toEqual([id, linear(c, id)]);
    };
    probe();
    c.items.push(note('c'), note('d')); // pushed behind the index's back
    probe();
    c.items = c.items.filter((i) => i.id !== 'b'); // replaced array
    probe();
    c.items.splice(0, 1); // in place, shorter
    probe();
    c.items.splice(1, 0, note('e')); // in place, same identity, longer: positions shift
    probe();
    c.items[0] = note('x'); // reassigned in place
    probe();
    c.items.push(note('d', 'duplicate id')); // the first one wins, as with findIndex
    probe();
  });

  it('updates, streams into and removes the right items of a long transcript', () => {
    const c = chat();
    for (let i = 0; i < 5000; i++) applyChatEvent(c, { type: 'item-added', item: note(`n${i}`) });
    applyChatEvent(c, {
      type: 'item-added',
      item: { kind: 'assistant', id: 'a1', time: '', turnId: 't', text: '', streaming: true }
    });
    applyChatEvent(c, { type: 'text-delta', itemId: 'a1', delta: 'Hel' });
    applyChatEvent(c, { type: 'text-delta', itemId: 'a1', delta: 'lo' });
    applyChatEvent(c, { type: 'text-delta', itemId: 'n7', delta: 'ignored: not an assistant item' });
    applyChatEvent(c, { type: 'text-delta', itemId: 'missing', delta: 'ignored' });
    expect(c.items.at(-1)).toMatchObject({ id: 'a1', text: 'Hello' });
    expect(c.items[7]).toEqual(note('n7'));

    const updated = note('n2500', 'changed');
    applyChatEvent(c, { type: 'item-updated', item: updated });
    expect(c.items[2500]).toEqual(updated);
    expect(c.items[2500]).not.toBe(updated); // the chat keeps its own copy
    applyChatEvent(c, { type: 'item-updated', item: note('missing') });
    expect(c.items).toHaveLength(5001);

    applyChatEvent(c, { type: 'items-removed', itemIds: ['n0', 'n1'] });
    applyChatEvent(c, { type: 'item-updated', item: note('n2500', 'again') });
    expect(c.items[2498]).toEqual(note('n2500', 'again'));
    expect(itemIndexOf(c, 'a1')).toBe(4998);
  });
});
