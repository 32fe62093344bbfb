import type { QuestionItem } from '@cellmate/protocol';
import { describe, expect, it } from 'vitest';
import { parseChatFile, recoverInterruptedTurn, serializeChat, type ChatRecord } from '../../src/chats/chat-file.js';

const question: QuestionItem = {
  kind: 'question',
  id: 'q1',
  questionId: 'q1',
  time: '2026-11-29T20:00:00.000Z',
  turnId: 't1',
  type: 'approval',
  question: 'The agent wants to run write. Allow it?',
  options: [{ label: 'Approve once' }, { label: 'Always for this pattern' }, { label: 'Deny' }],
  allowFreeText: true,
  multiSelect: false,
  approval: { tool: 'write', args: { path: 'a' }, pattern: 'a', reason: 'write-tier tools ask by default' },
  state: 'pending'
};

describe('question items in chat files (ASK-2)', () => {
  it('round-trip through the file format, and a pending card of an interrupted turn becomes cancelled', () => {
    const record: ChatRecord = {
      chat: {
        id: 'c1',
        title: 't',
        mode: 'agent',
        createdAt: question.time,
        updatedAt: question.time,
        items: [question],
        running: true
      },
      titleSource: 'default',
      messages: []
    };
    const loaded = parseChatFile(serializeChat(record, 0), 'c1');
    expect(loaded.chat.items[0]).toEqual(question);
    expect(recoverInterruptedTurn(loaded, '2026-11-29T21:00:00.000Z')).toBe(true);
    expect(loaded.chat.items[0]).toMatchObject({ kind: 'question', state: 'cancelled' });
  });
});
