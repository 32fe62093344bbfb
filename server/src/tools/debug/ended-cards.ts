/**
 * A debug session that ends on its own — its TTL, its adapter dying, the chat's kernel going
 * away — or from the card's Terminate button, ends between tool calls, so no new card says
 * so. This follower turns the session's latest card to `ended` (an `item-updated` event),
 * which drops its Terminate button and lets the pane switch JupyterLab's debugger off for
 * the notebook (its gutter markers go with it). Earlier cards stay as they were: they are
 * the record of each stop. (Issue #12.)
 */
import type { ChatEvent, ToolCallItem } from '@cellmate/protocol';
import type { DebugSessionManager } from '../../dap/session-manager.js';

/** How many of a chat's latest items are searched for the session's card. */
const CARD_WINDOW = 500;

/** What the follower needs of the chats: the latest items and an event to every pane. */
export interface DebugCardChats {
  get(chatId: string, limit: number): { items: readonly unknown[] };
  publish(chatId: string, event: ChatEvent): void;
}

/** Follows `sessions`: each ended session's latest card becomes `ended`. Returns the subscription. */
export function followEndedDebugCards(sessions: Pick<DebugSessionManager, 'onDidChange'>, chats: DebugCardChats): { dispose(): void } {
  return sessions.onDidChange(({ chatId, session }) => {
    if (session.state !== 'ended') return;
    let items: readonly unknown[];
    try {
      items = chats.get(chatId, CARD_WINDOW).items;
    } catch {
      return; // the chat is gone
    }
    for (let i = items.length - 1; i >= 0; i--) {
      const item = items[i] as ToolCallItem;
      if (item.kind !== 'tool' || item.display?.kind !== 'debug' || item.display.sessionId !== session.id) continue;
      if (item.display.state === 'ended') return;
      const { frames: _frames, locals: _locals, breakpoints: _breakpoints, ...rest } = item.display;
      const end = session.ending;
      const updated: ToolCallItem = { ...item, display: { ...rest, state: 'ended', ...(end ? { reason: `ended: ${end.message}` } : {}) } };
      chats.publish(chatId, { type: 'item-updated', item: updated });
      return;
    }
  });
}
