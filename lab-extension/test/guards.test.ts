import { describe, expect, it } from 'vitest';

import type { ContextStatus } from '@cellmate/protocol';

import { isChatEvent, isContextStatus, isTranscriptItem, sanitizeChat } from '../src/guards';

const base = { id: 'i1', turnId: 't1', time: '2026-12-03T10:00:00.000Z' };

const context: ContextStatus = {
  model: 'scripted/script',
  usedTokens: 1_200,
  estimated: true,
  window: 4_000,
  windowSource: 'settings',
  reservedOutput: 500,
  compactAtTokens: 2_975,
  total: { input: 3_000, cachedInput: 0, cacheWrite: 0, output: 90 }
};

describe('guards for usage, compaction and context (CTX-1, CTX-3)', () => {
  it('accepts usage items and refuses malformed ones', () => {
    const usage = {
      ...base,
      kind: 'usage',
      model: 'a/b',
      usage: { input: 10, cachedInput: 2, cacheWrite: 0, output: 3 },
      requests: 1
    };
    expect(isTranscriptItem(usage)).toBe(true);
    expect(isTranscriptItem({ ...usage, costUsd: 0.001 })).toBe(true);
    expect(isTranscriptItem({ ...usage, usage: { ...usage.usage, reasoning: 1 } })).toBe(true);
    expect(isTranscriptItem({ ...usage, usage: { input: 10, output: 3 } })).toBe(false);
    expect(isTranscriptItem({ ...usage, usage: { ...usage.usage, output: '3' } })).toBe(false);
    expect(isTranscriptItem({ ...usage, requests: -1 })).toBe(false);
    expect(isTranscriptItem({ ...usage, costUsd: Number.NaN })).toBe(false);
    expect(isTranscriptItem({ ...usage, model: undefined })).toBe(false);
  });

  it('accepts compaction items and refuses malformed ones', () => {
    const compaction = {
      ...base,
      kind: 'compaction',
      trigger: 'auto',
      prunedOutputs: 3,
      summarizedMessages: 0,
      tokensBefore: 9_000,
      tokensAfter: 4_000
    };
    expect(isTranscriptItem(compaction)).toBe(true);
    expect(isTranscriptItem({ ...compaction, trigger: 'manual', summary: '## State\n- df' })).toBe(true);
    expect(isTranscriptItem({ ...compaction, trigger: 'whenever' })).toBe(false);
    expect(isTranscriptItem({ ...compaction, summary: 42 })).toBe(false);
    expect(isTranscriptItem({ ...compaction, tokensAfter: undefined })).toBe(false);
  });

  it('accepts the context event only with a readable status', () => {
    expect(isChatEvent({ type: 'context', context })).toBe(true);
    const { window: _w, compactAtTokens: _c, ...unknown } = context;
    expect(isChatEvent({ type: 'context', context: { ...unknown, windowSource: 'unknown' } })).toBe(true);
    expect(isChatEvent({ type: 'context' })).toBe(false);
    expect(isChatEvent({ type: 'context', context: { ...context, windowSource: 'guess' } })).toBe(false);
    expect(isChatEvent({ type: 'context', context: { ...context, window: 0 } })).toBe(false);
    expect(isChatEvent({ type: 'context', context: { ...context, usedTokens: '1k' } })).toBe(false);
    expect(isChatEvent({ type: 'context', context: { ...context, total: null } })).toBe(false);
    expect(isContextStatus({ ...context, estimated: 'yes' })).toBe(false);
  });

  it('sanitizeChat keeps a valid context and drops an unreadable one', () => {
    const chat = {
      id: 'c1',
      title: 'Chat',
      mode: 'agent',
      createdAt: base.time,
      updatedAt: base.time,
      items: [],
      running: false
    };
    expect(sanitizeChat({ ...chat, context })?.chat.context).toEqual(context);
    const bad = sanitizeChat({ ...chat, context: { ...context, usedTokens: -1 } });
    expect(bad?.chat).not.toHaveProperty('context');
    expect(bad?.dropped).toBe(0);
    expect(sanitizeChat(chat)?.chat).not.toHaveProperty('context');
  });
});
