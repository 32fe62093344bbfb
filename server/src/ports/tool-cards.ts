/**
 * Re-rendering a chat's tool cards after the thing they show changed between tool calls —
 * a plan's approval (MODE-3), a review's findings (MODE-4), an orchestration's run (MODE-5),
 * a debug session that ended: each changed card goes to every pane as an
 * `item-updated` event, which the chat store also keeps.
 */
import type { ChatEvent, ToolCallDisplay, ToolCallItem } from '@cellmate/protocol';

/** How many of a chat's latest items are searched for the cards. */
export const CARD_WINDOW = 500;

/** What updating cards needs of the chats: the latest items and an event to every pane. */
export interface CardChats {
  get(chatId: string, limit: number): { items: readonly unknown[] };
  publish(chatId: string, event: ChatEvent): void;
}

export interface CardUpdate {
  /** The cards to update. */
  match(item: ToolCallItem): boolean;
  /** What a card shows now; a display equal to the card's own publishes nothing. */
  render(item: ToolCallItem): ToolCallDisplay;
  /** Only the newest matching card (the others are the record of earlier moments). */
  latestOnly?: boolean;
  /** The chat could not be read (a deleted chat is the usual reason); nothing is updated. */
  onUnreadable?(error: unknown): void;
}

/** Updates the matching cards among the chat's latest {@link CARD_WINDOW} items. */
export function updateToolCards(chats: CardChats, chatId: string, update: CardUpdate): void {
  let items: readonly unknown[];
  try {
    items = chats.get(chatId, CARD_WINDOW).items;
  } catch (error) {
    update.onUnreadable?.(error);
    return;
  }
  const cards = items.filter(
    (i): i is ToolCallItem => (i as ToolCallItem).kind === 'tool' && update.match(i as ToolCallItem)
  );
  for (const card of update.latestOnly ? cards.slice(-1) : cards) {
    const display = update.render(card);
    if (JSON.stringify(display) === JSON.stringify(card.display)) continue;
    chats.publish(chatId, { type: 'item-updated', item: { ...card, display } });
  }
}
