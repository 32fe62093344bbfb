/**
 * Pure chat state for the Cellmate pane: how server events change what the pane shows.
 *
 * No DOM, no JupyterLab, no Lumino: this module runs in Node under vitest. Widgets
 * observe a {@link ChatsModel} and re-render only the items a change names.
 *
 * Ordering rules (the server sends events in order on one socket, but a reconnect can
 * replay or race them):
 * - A snapshot (`chat/get`) replaces the server's items. Events received before the
 *   snapshot's response are already in it; events after it apply on top.
 * - An item never goes backwards: a finished tool call is not set back to `running`, a
 *   final assistant text is not set back to streaming, and a streaming text is not
 *   replaced by a shorter prefix of itself (a duplicate `item-added` after deltas).
 * - A `text-delta` for an item the pane does not know yet is kept and applied when the
 *   item arrives; a delta for a final assistant item is dropped (the final text wins).
 * - A long transcript arrives as its latest page (`olderCount` says how many items come
 *   before it); older pages (`chat/items`) are put in front when the user scrolls up. A
 *   reconnect's snapshot keeps the older pages already shown when it overlaps them.
 */
import {
  chatModeOf,
  type AssistantItem,
  type Chat,
  type ChatEvent,
  type ChatMode,
  type ChatSummary,
  type ContextStatus,
  type NoticeItem,
  type TierModel,
  type TranscriptItem,
  type TurnEndReason
} from '@cellmate/protocol';

import { isChatSummary } from './guards';

export { isChatEvent, isChatSummary, isTranscriptItem, sanitizeChat } from './guards';

/** Ids of items the pane adds itself (reconnect notices, malformed-message notices). */
export const LOCAL_ID_PREFIX = 'local:';

/** What the pane knows about the open chat. Treat as immutable; reducers return copies. */
export interface ChatState {
  readonly chatId: string;
  readonly title: string;
  /** The chat's mode (MODE-1); the header and the composer's mode selector show it. */
  readonly mode: ChatMode;
  /** Auto approval is on (SIDE-1); the composer's Auto switch shows it. */
  readonly auto: boolean;
  readonly items: readonly TranscriptItem[];
  readonly running: boolean;
  /** The running turn, when known. */
  readonly turnId: string | null;
  /** Deltas for items not seen yet, by item id. */
  readonly pendingDeltas: ReadonlyMap<string, string>;
  /** The last output line of running tool calls (`tool-progress`), by item id. */
  readonly progress?: ReadonlyMap<string, string>;
  /** How many server items come before the first one shown (load them with `chat/items`). */
  readonly olderCount: number;
  /** The last turn this pane saw end (`data-last-turn` on the panel: tests wait on it). */
  readonly lastEndedTurnId?: string;
  /** The context meter's figures (CTX-1); absent until the chat's first request. */
  readonly context?: ContextStatus;
  /** The model the person picked for this chat (the header's picker); absent: the settings' main tier. */
  readonly model?: TierModel;
}

/** What one reducer step changed, so a view can update just that. */
export interface ChatChange {
  /** Items added or replaced (ids). */
  readonly updated: readonly string[];
  /** True when items were inserted, removed or reordered. */
  readonly structure: boolean;
  /** True when something outside the items changed: `running`, `turnId`, the mode, the context figures. */
  readonly running: boolean;
}

const NO_CHANGE: ChatChange = { updated: [], structure: false, running: false };

/** The result of applying something to a state. */
export interface Step {
  readonly state: ChatState;
  readonly change: ChatChange;
}

/** A fresh state for a chat snapshot. */
export function fromSnapshot(chat: Chat): ChatState {
  return {
    chatId: chat.id,
    title: chat.title,
    mode: chatModeOf(chat.mode) ?? 'agent',
    auto: chat.auto === true,
    items: dedupe(chat.items),
    running: chat.running,
    turnId: chat.running ? lastTurnId(chat.items) : null,
    pendingDeltas: new Map(),
    olderCount: olderCountOf(chat.olderCount),
    ...(chat.context ? { context: chat.context } : {}),
    ...(chat.model ? { model: chat.model } : {})
  };
}

/**
 * Replaces the server's part of `state` with a new snapshot of the same chat, keeping
 * the pane's own local notices in time order.
 */
export function applySnapshot(state: ChatState, chat: Chat): Step {
  let fresh = fromSnapshot(chat);
  const same = state.chatId === chat.id;
  if (same && fresh.items.length > 0) {
    // Keep the older pages already shown when the new page overlaps them.
    const server = state.items.filter((i) => !isLocal(i));
    const at = server.findIndex((i) => i.id === fresh.items[0].id);
    if (at > 0) {
      fresh = { ...fresh, items: dedupe([...server.slice(0, at), ...fresh.items]), olderCount: state.olderCount };
    }
  }
  const local = same ? state.items.filter(isLocal) : [];
  const items = local.length ? mergeByTime(fresh.items, local) : fresh.items;
  return {
    state: { ...fresh, items },
    change: { updated: items.map((i) => i.id), structure: true, running: true }
  };
}

/** Applies one server event. Unknown or malformed events leave the state unchanged. */
export function applyEvent(state: ChatState, event: ChatEvent): Step {
  switch (event.type) {
    case 'turn-started':
      return {
        state: { ...state, running: true, turnId: event.turnId },
        change: { ...NO_CHANGE, running: true }
      };
    case 'item-added':
    case 'item-updated':
      return upsertItem(state, event.item);
    case 'text-delta':
      return applyDelta(state, event.itemId, event.delta);
    case 'turn-ended':
      return endTurn(state, event.turnId, event.reason, event.error);
    case 'items-removed':
      return removeItems(state, event.itemIds);
    case 'tool-progress':
      return applyProgress(state, event.itemId, event.lastLine);
    case 'mode-changed': {
      const mode = chatModeOf(event.mode);
      return mode && mode !== state.mode
        ? { state: { ...state, mode }, change: { ...NO_CHANGE, running: true } }
        : { state, change: NO_CHANGE };
    }
    case 'auto-changed':
      return typeof event.auto === 'boolean' && event.auto !== state.auto
        ? { state: { ...state, auto: event.auto }, change: { ...NO_CHANGE, running: true } }
        : { state, change: NO_CHANGE };
    case 'context':
      return { state: { ...state, context: event.context }, change: { ...NO_CHANGE, running: true } };
    case 'model-changed': {
      const { model: _previous, ...rest } = state;
      return { state: event.model ? { ...rest, model: event.model } : rest, change: { ...NO_CHANGE, running: true } };
    }
    default:
      return { state, change: NO_CHANGE };
  }
}

/** The id of the oldest server item shown (the `before` cursor of `chat/items`). */
export function oldestServerItemId(state: ChatState): string | undefined {
  return state.items.find((i) => !isLocal(i))?.id;
}

/**
 * Puts an older page (`chat/items` before `before`) in front of the transcript. A page
 * for another cursor (the transcript changed meanwhile) is ignored.
 */
export function prependOlder(
  state: ChatState,
  before: string,
  page: { items: readonly TranscriptItem[]; olderCount?: number }
): Step {
  if (oldestServerItemId(state) !== before) {
    return { state, change: NO_CHANGE };
  }
  const items = dedupe([...page.items, ...state.items]);
  return {
    state: { ...state, items, olderCount: olderCountOf(page.olderCount) },
    change: { updated: page.items.map((i) => i.id), structure: true, running: false }
  };
}

/** Appends a notice the pane made itself (never sent to the server or the model). */
export function addLocalNotice(
  state: ChatState,
  level: NoticeItem['level'],
  text: string,
  now: Date = new Date()
): Step {
  localCounter += 1;
  const item: NoticeItem = {
    kind: 'notice',
    id: `${LOCAL_ID_PREFIX}${localCounter}`,
    time: now.toISOString(),
    turnId: state.turnId ?? '',
    level,
    text
  };
  return {
    state: { ...state, items: [...state.items, item] },
    change: { updated: [item.id], structure: true, running: false }
  };
}
let localCounter = 0;

/** True for items the pane made itself. */
export function isLocal(item: TranscriptItem): boolean {
  return item.id.startsWith(LOCAL_ID_PREFIX);
}

// ---------------------------------------------------------------------------------------
// Reducer steps

function upsertItem(state: ChatState, incoming: TranscriptItem): Step {
  const index = state.items.findIndex((i) => i.id === incoming.id);
  let item = incoming;
  let pendingDeltas = state.pendingDeltas;
  if (pendingDeltas.has(item.id)) {
    const pending = pendingDeltas.get(item.id) ?? '';
    pendingDeltas = without(pendingDeltas, item.id);
    if (item.kind === 'assistant' && item.streaming) {
      item = { ...item, text: item.text + pending };
    }
  }
  if (index < 0) {
    return {
      state: { ...state, items: [...state.items, item], pendingDeltas },
      change: { updated: [item.id], structure: true, running: false }
    };
  }
  const merged = mergeItem(state.items[index], item);
  if (merged === state.items[index]) {
    return { state: { ...state, pendingDeltas }, change: NO_CHANGE };
  }
  const items = state.items.slice();
  items[index] = merged;
  return {
    state: { ...state, items, pendingDeltas },
    change: { updated: [item.id], structure: false, running: false }
  };
}

/**
 * Chooses between the pane's copy of an item and an incoming copy of the same id.
 * Returns `current` (same object) when the incoming copy is stale.
 */
export function mergeItem(current: TranscriptItem, incoming: TranscriptItem): TranscriptItem {
  if (current.kind !== incoming.kind) {
    return incoming;
  }
  if (progress(incoming) < progress(current) || sameItem(current, incoming)) {
    return current;
  }
  if (current.kind === 'assistant' && incoming.kind === 'assistant' && incoming.streaming) {
    // A duplicate add/update while streaming may predate deltas already applied.
    if (current.text.length > incoming.text.length && current.text.startsWith(incoming.text)) {
      return current;
    }
  }
  return incoming;
}

/** True when two copies say the same (a replayed event): no re-render needed. */
function sameItem(a: TranscriptItem, b: TranscriptItem): boolean {
  if (a === b) {
    return true;
  }
  try {
    return JSON.stringify(a) === JSON.stringify(b);
  } catch {
    return false;
  }
}

/** 0 while an item can still change, 1 once it is final. */
function progress(item: TranscriptItem): number {
  switch (item.kind) {
    case 'assistant':
      return item.streaming ? 0 : 1;
    case 'tool':
      return item.status === 'running' ? 0 : 1;
    default:
      return 0;
  }
}

/** Keeps the last output line of a running tool call; anything else is ignored. */
function applyProgress(state: ChatState, itemId: string, lastLine: string | undefined): Step {
  const item = state.items.find((i) => i.id === itemId);
  if (
    lastLine === undefined ||
    item?.kind !== 'tool' ||
    item.status !== 'running' ||
    state.progress?.get(itemId) === lastLine
  ) {
    return { state, change: NO_CHANGE };
  }
  const progress = new Map(state.progress ?? []);
  progress.set(itemId, lastLine);
  return { state: { ...state, progress }, change: { updated: [itemId], structure: false, running: false } };
}

/** Takes items out (a retried or edited turn); the pane's own notices stay. */
function removeItems(state: ChatState, itemIds: readonly string[]): Step {
  const gone = new Set(itemIds);
  const items = state.items.filter((i) => !gone.has(i.id));
  if (items.length === state.items.length) {
    return { state, change: NO_CHANGE };
  }
  return { state: { ...state, items }, change: { updated: [], structure: true, running: false } };
}

function applyDelta(state: ChatState, itemId: string, delta: string): Step {
  if (typeof delta !== 'string' || delta === '') {
    return { state, change: NO_CHANGE };
  }
  const index = state.items.findIndex((i) => i.id === itemId);
  if (index < 0) {
    const pendingDeltas = new Map(state.pendingDeltas);
    pendingDeltas.set(itemId, (pendingDeltas.get(itemId) ?? '') + delta);
    return { state: { ...state, pendingDeltas }, change: NO_CHANGE };
  }
  const current = state.items[index];
  if (current.kind !== 'assistant' || !current.streaming) {
    return { state, change: NO_CHANGE };
  }
  const items = state.items.slice();
  const next: AssistantItem = { ...current, text: current.text + delta };
  items[index] = next;
  return {
    state: { ...state, items },
    change: { updated: [itemId], structure: false, running: false }
  };
}

function endTurn(state: ChatState, turnId: string, reason: TurnEndReason, error: string | undefined): Step {
  if (state.turnId !== null && state.turnId !== turnId) {
    // The end of an older turn (replayed after a reconnect): the running turn goes on.
    return settleTurn(state, turnId);
  }
  const settled = settleTurn(state, turnId);
  let next: ChatState = { ...settled.state, running: false, turnId: null, lastEndedTurnId: turnId };
  const updated = [...settled.change.updated];
  let structure = false;
  if (reason === 'error' && error && !hasErrorNotice(next, turnId)) {
    const step = addLocalNotice(next, 'error', error);
    next = step.state;
    updated.push(...step.change.updated);
    structure = true;
  }
  return { state: next, change: { updated, structure, running: true } };
}

/**
 * A turn that ended has nothing streaming or running any more. The server normally
 * says so itself; this keeps a card from spinning forever if an update was lost.
 */
function settleTurn(state: ChatState, turnId: string): Step {
  const updated: string[] = [];
  const items = state.items.map((item) => {
    if (item.turnId !== turnId) {
      return item;
    }
    if (item.kind === 'assistant' && item.streaming) {
      updated.push(item.id);
      return { ...item, streaming: false };
    }
    if (item.kind === 'tool' && item.status === 'running') {
      updated.push(item.id);
      return { ...item, status: 'aborted' as const };
    }
    return item;
  });
  if (!updated.length) {
    return { state, change: NO_CHANGE };
  }
  return { state: { ...state, items }, change: { updated, structure: false, running: false } };
}

function hasErrorNotice(state: ChatState, turnId: string): boolean {
  return state.items.some((i) => i.kind === 'notice' && i.level === 'error' && i.turnId === turnId);
}

// ---------------------------------------------------------------------------------------
// Helpers

function olderCountOf(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : 0;
}

function lastTurnId(items: readonly TranscriptItem[]): string | null {
  return items.length ? items[items.length - 1].turnId : null;
}

function dedupe(items: readonly TranscriptItem[]): TranscriptItem[] {
  const seen = new Map<string, number>();
  const out: TranscriptItem[] = [];
  for (const item of items) {
    const at = seen.get(item.id);
    if (at === undefined) {
      seen.set(item.id, out.length);
      out.push(item);
    } else {
      out[at] = mergeItem(out[at], item);
    }
  }
  return out;
}

function mergeByTime(server: readonly TranscriptItem[], local: readonly TranscriptItem[]): TranscriptItem[] {
  const out: TranscriptItem[] = [];
  let l = 0;
  for (const item of server) {
    while (l < local.length && local[l].time < item.time) {
      out.push(local[l++]);
    }
    out.push(item);
  }
  return out.concat(local.slice(l));
}

function without<K, V>(map: ReadonlyMap<K, V>, key: K): ReadonlyMap<K, V> {
  const copy = new Map(map);
  copy.delete(key);
  return copy;
}

// ---------------------------------------------------------------------------------------
// Chat list

/** Chats for the selector, most recently updated first; ties keep creation order. */
export function sortChats(chats: readonly ChatSummary[]): ChatSummary[] {
  return chats
    .filter(isChatSummary)
    .slice()
    .sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
}

// ---------------------------------------------------------------------------------------
// An observable holder, for the widgets

/** Listener called after each change with the new state. */
export type ChatListener = (state: ChatState | null, change: ChatChange) => void;

/** Holds the open chat's state and tells listeners what changed. */
export class ChatsModel {
  private _state: ChatState | null = null;
  private readonly _listeners = new Set<ChatListener>();

  /** The open chat, or null when none is open. */
  get state(): ChatState | null {
    return this._state;
  }

  /** Subscribes; returns an unsubscribe function. */
  subscribe(listener: ChatListener): () => void {
    this._listeners.add(listener);
    return () => this._listeners.delete(listener);
  }

  /** Opens a chat from a snapshot, or refreshes the open one (after a reconnect). */
  load(chat: Chat): void {
    const step =
      this._state && this._state.chatId === chat.id
        ? applySnapshot(this._state, chat)
        : { state: fromSnapshot(chat), change: FULL_CHANGE };
    this._commit(step.state, { ...step.change, structure: true, running: true });
  }

  /** Puts an older page in front of the open chat's transcript (see {@link prependOlder}). */
  prepend(chatId: string, before: string, page: { items: readonly TranscriptItem[]; olderCount?: number }): void {
    if (this._state && this._state.chatId === chatId) {
      this._step(prependOlder(this._state, before, page));
    }
  }

  /** Closes the open chat. */
  clear(): void {
    this._commit(null, FULL_CHANGE);
  }

  /** Applies an event if it is for the open chat; returns whether it was. */
  apply(chatId: string, event: ChatEvent): boolean {
    if (!this._state || this._state.chatId !== chatId) {
      return false;
    }
    this._step(applyEvent(this._state, event));
    return true;
  }

  /** Adds a local notice to the open chat (no-op when none is open). */
  notice(level: NoticeItem['level'], text: string): void {
    if (this._state) {
      this._step(addLocalNotice(this._state, level, text));
    }
  }

  /** Sets the title (chat renamed elsewhere). */
  retitle(title: string): void {
    if (this._state && this._state.title !== title) {
      this._commit({ ...this._state, title }, { ...NO_CHANGE, running: true });
    }
  }

  private _step(step: Step): void {
    if (step.state !== this._state) {
      this._commit(step.state, step.change);
    }
  }

  private _commit(state: ChatState | null, change: ChatChange): void {
    this._state = state;
    for (const listener of [...this._listeners]) {
      listener(state, change);
    }
  }
}

const FULL_CHANGE: ChatChange = { updated: [], structure: true, running: true };
