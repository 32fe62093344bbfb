import type { Chat, ChatEvent, TranscriptItem } from '@cellmate/protocol';

/**
 * Applies one chat event to a chat in place — the same fold the pane does on its copy.
 * Pure apart from mutating `chat`. Unknown item ids in updates/deltas are ignored. Finding
 * an item by id costs O(1) (see {@link itemIndexOf}), so an event's cost does not grow
 * with the transcript.
 */
export function applyChatEvent(chat: Chat, event: ChatEvent): void {
  switch (event.type) {
    case 'turn-started':
      chat.running = true;
      return;
    case 'turn-ended':
      chat.running = false;
      return;
    case 'item-added':
      chat.items.push(structuredClone(event.item));
      return;
    case 'item-updated': {
      const index = itemIndexOf(chat, event.item.id);
      if (index >= 0) chat.items[index] = structuredClone(event.item);
      return;
    }
    case 'items-removed': {
      const gone = new Set(event.itemIds);
      chat.items = chat.items.filter((item) => !gone.has(item.id));
      return;
    }
    case 'mode-changed':
      chat.mode = event.mode;
      return;
    case 'auto-changed':
      chat.auto = event.auto;
      return;
    case 'model-changed':
      if (event.model) chat.model = structuredClone(event.model);
      else delete chat.model;
      return;
    case 'context':
      chat.context = structuredClone(event.context);
      return;
    case 'worker-updated': // the worker's own transcript holds its items
      return;
    case 'text-delta': {
      const item = chat.items[itemIndexOf(chat, event.itemId)];
      if (item?.kind === 'assistant') item.text += event.delta;
      return;
    }
  }
}

interface ItemIndex {
  /** The array indexed: a chat whose `items` was replaced is indexed afresh. */
  items: readonly TranscriptItem[];
  /** How many leading items are indexed; items pushed since are indexed on the next lookup. */
  length: number;
  positions: Map<string, number>;
}

const indexes = new WeakMap<Chat, ItemIndex>();

/**
 * The position of the first item `id` in `chat.items`, or -1 — what `findIndex` answers,
 * in amortised O(1) for ids that are there. The index lives beside the chat (never
 * serialised) and is checked against the array on every lookup: items pushed by anyone are
 * indexed as they are met; a replaced or shorter array, or an entry that no longer holds
 * the id it was indexed under, rebuilds it. A miss is confirmed by a linear search (misses
 * are rare: an update for an item that was removed), so an item put in place by direct
 * assignment is still found.
 */
export function itemIndexOf(chat: Chat, id: string): number {
  let index = indexes.get(chat);
  if (!index || index.items !== chat.items || chat.items.length < index.length) index = reindex(chat);
  extend(index);
  const at = index.positions.get(id);
  if (at !== undefined && chat.items[at]?.id === id) return at;
  const found = chat.items.findIndex((item) => item.id === id);
  if (found >= 0) extend(reindex(chat));
  return found;
}

function reindex(chat: Chat): ItemIndex {
  const index: ItemIndex = { items: chat.items, length: 0, positions: new Map() };
  indexes.set(chat, index);
  return index;
}

function extend(index: ItemIndex): void {
  const { items, positions } = index;
  for (let i = index.length; i < items.length; i++) if (!positions.has(items[i]!.id)) positions.set(items[i]!.id, i);
  index.length = items.length;
}
