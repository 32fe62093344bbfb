import type { Chat, ChatEvent, TranscriptItem } from '@cellmate/protocol';

/**
 * Applies one chat event to a chat in place — the same fold the pane does on its copy.
 * Pure apart from mutating `chat`. Unknown item ids in updates/deltas are ignored.
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
      const index = chat.items.findIndex((item) => item.id === event.item.id);
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
    case 'context':
      chat.context = structuredClone(event.context);
      return;
    case 'worker-updated': // the worker's own transcript holds its items
      return;
    case 'text-delta': {
      const item = chat.items.find((i): i is Extract<TranscriptItem, { kind: 'assistant' }> => i.id === event.itemId && i.kind === 'assistant');
      if (item) item.text += event.delta;
      return;
    }
  }
}
