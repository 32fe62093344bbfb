import { describe, expect, it } from 'vitest';

import type {
  AssistantItem,
  Chat,
  ChatEvent,
  ContextStatus,
  ToolCallItem,
  TranscriptItem,
  UserItem
} from '@cellmate/protocol';

import {
  applyEvent,
  applySnapshot,
  ChatChange,
  ChatState,
  ChatsModel,
  fromSnapshot,
  isChatEvent,
  isLocal,
  oldestServerItemId,
  prependOlder,
  sanitizeChat,
  sortChats
} from '../src/model';

const T0 = '2026-11-29T10:00:00.000Z';
const T1 = '2026-11-29T10:00:01.000Z';
const T2 = '2026-11-29T10:00:02.000Z';

function chat(items: TranscriptItem[] = [], running = false): Chat {
  return {
    id: 'c1',
    title: 'Chat',
    mode: 'agent',
    createdAt: T0,
    updatedAt: T0,
    items,
    running
  };
}

const user = (id = 'u1', turnId = 't1'): UserItem => ({
  kind: 'user',
  id,
  turnId,
  time: T0,
  text: 'hi'
});

const assistant = (text: string, streaming = true, id = 'a1'): AssistantItem => ({
  kind: 'assistant',
  id,
  turnId: 't1',
  time: T1,
  text,
  streaming
});

const tool = (status: ToolCallItem['status'], extra: Partial<ToolCallItem> = {}): ToolCallItem => ({
  kind: 'tool',
  id: 'k1',
  turnId: 't1',
  time: T1,
  callId: 'call-1',
  name: 'read',
  args: { path: 'notes.md' },
  actor: 'model',
  status,
  ...extra
});

/** Applies events in order, returning the final state and every change. */
function run(state: ChatState, events: ChatEvent[]): { state: ChatState; changes: ChatChange[] } {
  const changes: ChatChange[] = [];
  for (const event of events) {
    const step = applyEvent(state, event);
    state = step.state;
    changes.push(step.change);
  }
  return { state, changes };
}

const texts = (state: ChatState): string[] =>
  state.items.map((i) => ('text' in i ? `${i.kind}:${i.text}` : `${i.kind}:${(i as ToolCallItem).status}`));

describe('applyEvent', () => {
  it('runs a whole turn: start, user, streamed text, tool card, final text, end', () => {
    const { state, changes } = run(fromSnapshot(chat()), [
      { type: 'turn-started', turnId: 't1' },
      { type: 'item-added', item: user() },
      { type: 'item-added', item: assistant('') },
      { type: 'text-delta', itemId: 'a1', delta: 'Hel' },
      { type: 'text-delta', itemId: 'a1', delta: 'lo' },
      { type: 'item-updated', item: assistant('Hello', false) },
      { type: 'item-added', item: tool('running') },
      { type: 'item-updated', item: tool('ok', { durationMs: 12, output: 'text' }) },
      { type: 'turn-ended', turnId: 't1', reason: 'stop' }
    ]);
    expect(texts(state)).toEqual(['user:hi', 'assistant:Hello', 'tool:ok']);
    expect(state.running).toBe(false);
    expect(state.turnId).toBeNull();
    expect(changes[0].running).toBe(true);
    expect(changes[1].structure).toBe(true);
    expect(changes[3]).toEqual({ updated: ['a1'], structure: false, running: false });
  });

  it('keeps deltas for an unknown item and applies them when it arrives', () => {
    const { state, changes } = run(fromSnapshot(chat([user()])), [
      { type: 'text-delta', itemId: 'a1', delta: 'Hel' },
      { type: 'text-delta', itemId: 'a1', delta: 'lo' },
      { type: 'item-added', item: assistant('') },
      { type: 'text-delta', itemId: 'a1', delta: '!' }
    ]);
    expect(changes[0].updated).toEqual([]);
    expect(texts(state)).toEqual(['user:hi', 'assistant:Hello!']);
    expect(state.pendingDeltas.size).toBe(0);
  });

  it('drops kept deltas when the unknown item arrives already final', () => {
    const { state } = run(fromSnapshot(chat()), [
      { type: 'text-delta', itemId: 'a1', delta: 'Hel' },
      { type: 'item-updated', item: assistant('Hello', false) }
    ]);
    expect(texts(state)).toEqual(['assistant:Hello']);
    expect(state.pendingDeltas.size).toBe(0);
  });

  it('does not duplicate an item added twice (replay after a reconnect)', () => {
    const { state, changes } = run(fromSnapshot(chat([user()])), [
      { type: 'item-added', item: user() },
      { type: 'item-added', item: assistant('') },
      { type: 'text-delta', itemId: 'a1', delta: 'Hello' },
      // The same add again, older than the deltas already applied.
      { type: 'item-added', item: assistant('') }
    ]);
    expect(texts(state)).toEqual(['user:hi', 'assistant:Hello']);
    expect(changes[0]).toEqual({ updated: [], structure: false, running: false });
    expect(changes[3].updated).toEqual([]);
  });

  it('ignores a stale running update that arrives after the call ended', () => {
    const { state } = run(fromSnapshot(chat()), [
      { type: 'item-added', item: tool('running') },
      { type: 'item-updated', item: tool('error', { output: 'boom', durationMs: 3 }) },
      { type: 'item-updated', item: tool('running') }
    ]);
    const card = state.items[0] as ToolCallItem;
    expect(card.status).toBe('error');
    expect(card.output).toBe('boom');
  });

  it('takes an update that arrives before its add, and ignores the late add', () => {
    const { state } = run(fromSnapshot(chat()), [
      { type: 'item-updated', item: tool('ok', { output: 'done' }) },
      { type: 'item-added', item: tool('running') }
    ]);
    expect(state.items).toHaveLength(1);
    expect((state.items[0] as ToolCallItem).status).toBe('ok');
  });

  it('does not reopen a final assistant text and ignores late deltas to it', () => {
    const { state, changes } = run(fromSnapshot(chat()), [
      { type: 'item-added', item: assistant('Hi') },
      { type: 'item-updated', item: assistant('Hi there', false) },
      { type: 'text-delta', itemId: 'a1', delta: ' (late)' },
      { type: 'item-updated', item: assistant('Hi', true) }
    ]);
    expect(texts(state)).toEqual(['assistant:Hi there']);
    expect(changes[2].updated).toEqual([]);
    expect((state.items[0] as AssistantItem).streaming).toBe(false);
  });

  it('replaces a streaming text with a newer streaming copy that is not a prefix', () => {
    const { state } = run(fromSnapshot(chat()), [
      { type: 'item-added', item: assistant('abc') },
      { type: 'item-updated', item: assistant('xyz') }
    ]);
    expect(texts(state)).toEqual(['assistant:xyz']);
  });

  it('ends a turn: settles streaming text and running tools of that turn', () => {
    const { state, changes } = run(fromSnapshot(chat()), [
      { type: 'turn-started', turnId: 't1' },
      { type: 'item-added', item: assistant('partial') },
      { type: 'item-added', item: tool('running') },
      { type: 'turn-ended', turnId: 't1', reason: 'aborted' }
    ]);
    expect(state.running).toBe(false);
    expect((state.items[0] as AssistantItem).streaming).toBe(false);
    expect((state.items[1] as ToolCallItem).status).toBe('aborted');
    expect(changes[3].updated).toEqual(['a1', 'k1']);
  });

  it('adds one local error notice when a turn ends in error without a server notice', () => {
    const { state } = run(fromSnapshot(chat()), [
      { type: 'turn-started', turnId: 't1' },
      { type: 'turn-ended', turnId: 't1', reason: 'error', error: 'rate limited' }
    ]);
    expect(state.items).toHaveLength(1);
    expect(state.items[0]).toMatchObject({ kind: 'notice', level: 'error', text: 'rate limited' });
    expect(isLocal(state.items[0])).toBe(true);

    const withNotice = run(fromSnapshot(chat()), [
      { type: 'turn-started', turnId: 't1' },
      {
        type: 'item-added',
        item: { kind: 'notice', id: 'n1', turnId: 't1', time: T1, level: 'error', text: 'rate limited' }
      },
      { type: 'turn-ended', turnId: 't1', reason: 'error', error: 'rate limited' }
    ]);
    expect(withNotice.state.items).toHaveLength(1);
  });

  it('keeps running when an older turn ends after a newer one started', () => {
    const { state } = run(fromSnapshot(chat()), [
      { type: 'turn-started', turnId: 't2' },
      { type: 'turn-ended', turnId: 't1', reason: 'stop' }
    ]);
    expect(state.running).toBe(true);
    expect(state.turnId).toBe('t2');
  });

  it('removes the items of a retried turn (items-removed) and keeps local notices', () => {
    const start = fromSnapshot(chat([user(), assistant('old', false), tool('ok')]));
    const withNotice = applyEvent(start, { type: 'item-added', item: user('u2', 't2') }).state;
    const { state, changes } = run(withNotice, [
      { type: 'items-removed', itemIds: ['a1', 'k1', 'u2'] },
      { type: 'items-removed', itemIds: ['nope'] }
    ]);
    expect(texts(state)).toEqual(['user:hi']);
    expect(changes[0]).toEqual({ updated: [], structure: true, running: false });
    expect(changes[1].structure).toBe(false);
    expect(isChatEvent({ type: 'items-removed', itemIds: ['a'] })).toBe(true);
    expect(isChatEvent({ type: 'items-removed', itemIds: [1] })).toBe(false);
  });

  it('keeps the last output line of a running tool call only', () => {
    const start = fromSnapshot(chat([user(), tool('running')], true));
    const step = applyEvent(start, { type: 'tool-progress', itemId: 'k1', elapsedMs: 900, lastLine: 'step 3' });
    expect(step.state.progress?.get('k1')).toBe('step 3');
    expect(step.change).toEqual({ updated: ['k1'], structure: false, running: false });
    expect(applyEvent(step.state, { type: 'tool-progress', itemId: 'k1', lastLine: 'step 3' }).change.updated).toEqual(
      []
    );
    const ended = applyEvent(step.state, { type: 'item-updated', item: tool('ok', { durationMs: 5 }) }).state;
    expect(applyEvent(ended, { type: 'tool-progress', itemId: 'k1', lastLine: 'late' }).state).toBe(ended);
    expect(isChatEvent({ type: 'tool-progress', itemId: 'k1', lastLine: 3 })).toBe(false);
  });

  it('leaves the state unchanged for an unknown event type', () => {
    const before = fromSnapshot(chat([user()]));
    const step = applyEvent(before, { type: 'bogus' } as unknown as ChatEvent);
    expect(step.state).toBe(before);
  });
});

describe('snapshots', () => {
  it('replaces server items, keeps local notices in time order, clears kept deltas', () => {
    let state = fromSnapshot(chat([user()]));
    const store = new ChatsModel();
    store.load(chat([user()]));
    store.notice('warning', 'connection lost');
    state = store.state!;
    state = applyEvent(state, { type: 'text-delta', itemId: 'a9', delta: 'x' }).state;
    const next = applySnapshot(
      state,
      chat([user(), { ...assistant('Hello', false), time: '2999-01-01T00:00:00.000Z' }])
    ).state;
    expect(next.items.map((i) => i.kind)).toEqual(['user', 'notice', 'assistant']);
    expect(next.pendingDeltas.size).toBe(0);
  });

  it('dedupes repeated ids inside a snapshot', () => {
    const state = fromSnapshot(chat([user(), assistant('a'), assistant('ab', false)]));
    expect(texts(state)).toEqual(['user:hi', 'assistant:ab']);
  });

  it('knows the running turn from a running snapshot', () => {
    const state = fromSnapshot(chat([user('u2', 't7')], true));
    expect(state.running).toBe(true);
    expect(state.turnId).toBe('t7');
  });
});

describe('paging a long transcript (issue #15)', () => {
  const users = (from: number, to: number): UserItem[] =>
    Array.from({ length: to - from }, (_, i) => user(`u${from + i}`));

  it('shows the latest page first and puts older pages in front, in order', () => {
    let state = fromSnapshot({ ...chat(users(8, 10)), olderCount: 8 });
    expect(state.olderCount).toBe(8);
    expect(state.items.map((i) => i.id)).toEqual(['u8', 'u9']);
    let step = prependOlder(state, 'u8', { items: users(5, 8), olderCount: 5 });
    expect(step.change.structure).toBe(true);
    state = step.state;
    step = prependOlder(state, 'u5', { items: users(0, 5), olderCount: 0 });
    expect(step.state.items.map((i) => i.id)).toEqual(users(0, 10).map((i) => i.id));
    expect(step.state.olderCount).toBe(0);
  });

  it('ignores a page for another cursor, and a reconnect snapshot keeps the older pages shown', () => {
    const state = prependOlder(fromSnapshot({ ...chat(users(8, 10)), olderCount: 8 }), 'u8', {
      items: users(6, 8),
      olderCount: 6
    }).state;
    expect(prependOlder(state, 'u8', { items: users(4, 6), olderCount: 4 }).state).toBe(state);
    expect(oldestServerItemId(state)).toBe('u6');
    // The server's latest page now starts at u9 (one item more at the end).
    const again = applySnapshot(state, { ...chat([...users(9, 10), user('u10')]), olderCount: 9 }).state;
    expect(again.items.map((i) => i.id)).toEqual(['u6', 'u7', 'u8', 'u9', 'u10']);
    expect(again.olderCount).toBe(6);
    // No overlap (many items arrived meanwhile): the new page alone.
    const gap = applySnapshot(state, { ...chat(users(20, 22)), olderCount: 20 }).state;
    expect(gap.items.map((i) => i.id)).toEqual(['u20', 'u21']);
    expect(gap.olderCount).toBe(20);
  });

  it('treats a missing or malformed olderCount as a complete transcript', () => {
    expect(fromSnapshot(chat(users(0, 2))).olderCount).toBe(0);
    expect(fromSnapshot({ ...chat(), olderCount: -3 }).olderCount).toBe(0);
    expect(fromSnapshot({ ...chat(), olderCount: 'x' as unknown as number }).olderCount).toBe(0);
  });
});

describe('ChatsModel', () => {
  it('applies events only for the open chat and reports changes', () => {
    const store = new ChatsModel();
    const seen: ChatChange[] = [];
    store.subscribe((_s, change) => seen.push(change));
    expect(store.apply('c1', { type: 'turn-started', turnId: 't1' })).toBe(false);
    store.load(chat());
    expect(store.apply('other', { type: 'turn-started', turnId: 't1' })).toBe(false);
    expect(store.apply('c1', { type: 'item-added', item: user() })).toBe(true);
    expect(store.state!.items).toHaveLength(1);
    expect(seen).toHaveLength(2);
    store.clear();
    expect(store.state).toBeNull();
  });

  it('reloading the same chat keeps its local notices', () => {
    const store = new ChatsModel();
    store.load(chat([user()]));
    store.notice('info', 'reconnected');
    store.load(chat([user()]));
    expect(store.state!.items.map((i) => i.kind)).toEqual(['user', 'notice']);
    store.load({ ...chat([]), id: 'c2' });
    expect(store.state!.items).toHaveLength(0);
  });
});

describe('validation', () => {
  it('accepts well-formed events and rejects malformed ones', () => {
    expect(isChatEvent({ type: 'text-delta', itemId: 'a', delta: 'x' })).toBe(true);
    expect(isChatEvent({ type: 'item-added', item: tool('running') })).toBe(true);
    expect(isChatEvent({ type: 'text-delta', itemId: 'a' })).toBe(false);
    expect(isChatEvent({ type: 'item-added', item: { kind: 'tool', id: 'x' } })).toBe(false);
    expect(isChatEvent({ type: 'item-added', item: { ...user(), kind: 'weird' } })).toBe(false);
    expect(isChatEvent(null)).toBe(false);
    expect(isChatEvent('turn-started')).toBe(false);
  });

  it('sorts chats most recent first and drops junk', () => {
    const a = { id: 'a', title: 'A', mode: 'agent' as const, createdAt: T0, updatedAt: T0 };
    const b = { ...a, id: 'b', title: 'B', updatedAt: T2 };
    expect(sortChats([a, b, { nope: 1 } as never]).map((c) => c.id)).toEqual(['b', 'a']);
  });
});

describe('sanitizeChat', () => {
  it('drops items it cannot render and rejects non-chats', () => {
    const raw = { ...chat([user()]), items: [user(), { kind: 'hologram', id: 'h', turnId: 't1' }] };
    const checked = sanitizeChat(raw);
    expect(checked?.dropped).toBe(1);
    expect(checked?.chat.items.map((i) => i.id)).toEqual(['u1']);
    expect(sanitizeChat({ id: 'x', title: 'y' })).toBeNull();
    expect(sanitizeChat('nope')).toBeNull();
  });
});

describe('the context meter figures (CTX-1)', () => {
  const context = (usedTokens: number): ContextStatus => ({
    model: 'scripted/script',
    usedTokens,
    estimated: false,
    window: 16_000,
    windowSource: 'settings',
    reservedOutput: 1_000,
    compactAtTokens: 12_750,
    total: { input: usedTokens, cachedInput: 0, cacheWrite: 0, output: 10 }
  });

  it('comes from the snapshot and is replaced by each context event, outside the items', () => {
    const state = fromSnapshot({ ...chat([user()]), context: context(1_000) });
    expect(state.context?.usedTokens).toBe(1_000);
    const step = applyEvent(state, { type: 'context', context: context(5_000) });
    expect(step.state.context?.usedTokens).toBe(5_000);
    expect(step.state.items).toBe(state.items);
    expect(step.change).toEqual({ updated: [], structure: false, running: true });
  });

  it('a snapshot of the same chat brings its current figures, or none', () => {
    const state = fromSnapshot({ ...chat([user()]), context: context(1_000) });
    expect(applySnapshot(state, { ...chat([user()]), context: context(9_000) }).state.context?.usedTokens).toBe(9_000);
    expect(applySnapshot(state, chat([user()])).state.context).toBeUndefined();
    expect(fromSnapshot(chat()).context).toBeUndefined();
  });

  it('ChatsModel tells listeners when the figures change', () => {
    const store = new ChatsModel();
    store.load(chat([user()]));
    const seen: Array<number | undefined> = [];
    store.subscribe((state, change) => change.running && seen.push(state?.context?.usedTokens));
    store.apply('c1', { type: 'context', context: context(2_000) });
    store.apply('other', { type: 'context', context: context(3_000) });
    expect(seen).toEqual([2_000]);
  });
});
