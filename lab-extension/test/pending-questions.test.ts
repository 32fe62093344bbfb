/**
 * The pane's follower of cards waiting for the person: one `added` per card that starts
 * waiting (also one already pending when a chat is opened), `changed` when the set changes,
 * nothing for text deltas, and the count back to 0 once answered.
 */
import { describe, expect, it } from 'vitest';

import type { Chat, QuestionItem, TranscriptItem } from '@cellmate/protocol';

import { ChatsModel } from '../src/model';
import { PendingQuestions } from '../src/pending-questions';

const T0 = '2026-12-03T04:00:00.000Z';

function chat(items: TranscriptItem[]): Chat {
  return { id: 'c1', title: 'Chat', mode: 'agent', createdAt: T0, updatedAt: T0, items, running: true };
}

const question = (id: string, state: QuestionItem['state'] = 'pending'): QuestionItem => ({
  kind: 'question',
  id,
  turnId: 't1',
  time: T0,
  questionId: `q-${id}`,
  type: 'approval',
  question: 'The agent wants to run write. Allow it?',
  options: [],
  allowFreeText: true,
  multiSelect: false,
  approval: { tool: 'write', args: {}, pattern: '/a.md', reason: 'write-tier tools ask by default' },
  state
});

describe('PendingQuestions', () => {
  it('reports each card that starts waiting once, ignores text deltas, and counts answers', () => {
    const store = new ChatsModel();
    store.load(chat([question('old')]));
    const pending = new PendingQuestions(store);
    // Already pending when the watcher starts: counted, not re-announced (the load happened before).
    expect(pending.count).toBe(1);
    const added: string[] = [];
    let changes = 0;
    pending.added.connect((_, q) => added.push(q.id));
    pending.changed.connect(() => changes++);

    store.apply('c1', {
      type: 'item-added',
      item: { kind: 'assistant', id: 'a1', turnId: 't1', time: T0, text: '', streaming: true }
    });
    store.apply('c1', { type: 'text-delta', itemId: 'a1', delta: 'thinking…' });
    expect(added).toEqual([]);
    expect(changes).toBe(0);

    store.apply('c1', { type: 'item-added', item: question('q2') });
    expect(added).toEqual(['q2']);
    expect(pending.count).toBe(2);
    store.apply('c1', { type: 'item-updated', item: question('q2') });
    expect(added).toEqual(['q2']);

    store.apply('c1', { type: 'item-updated', item: question('q2', 'answered') });
    store.apply('c1', { type: 'item-updated', item: question('old', 'expired') });
    expect(pending.count).toBe(0);
    expect(changes).toBe(3);

    // A chat opened with a card waiting announces it: a reload must not hide it.
    store.load({ ...chat([question('q3')]), id: 'c2' });
    expect(added).toEqual(['q2', 'q3']);
    pending.dispose();
  });
});
