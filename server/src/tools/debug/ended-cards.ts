/**
 * A debug session that ends on its own — its TTL, its adapter dying, the chat's kernel going
 * away — or from the card's Terminate button, ends between tool calls, so no new card says
 * so. This follower turns the session's latest card to `ended` (an `item-updated` event),
 * which drops its Terminate button and lets the pane switch JupyterLab's debugger off for
 * the notebook (its gutter markers go with it). Earlier cards keep what they showed — the
 * record of each stop — and are marked `sessionEnded`, so none of them keeps a live
 * Terminate for a session that is gone.
 */
import type { ToolCallItem } from '@cellmate/protocol';
import { updateToolCards, type CardChats } from '../../ports/tool-cards.js';
import type { DebugSession } from '../../dap/debug-session.js';
import type { DebugSessionManager } from '../../dap/session-manager.js';

/** What the follower needs of the chats: the latest items and an event to every pane. */
export type DebugCardChats = CardChats;

/** Follows `sessions`: each ended session's latest card becomes `ended`. Returns the subscription. */
export function followEndedDebugCards(
  sessions: Pick<DebugSessionManager, 'onDidChange'>,
  chats: DebugCardChats
): { dispose(): void } {
  let disposed = false;
  const subscription = sessions.onDidChange(({ chatId, session }) => {
    if (session.state !== 'ended') return;
    // After the adapter is left: a pane that re-reads the kernel's debugger state before
    // that would see the stopped cell, and JupyterLab's debugger would attach again.
    void session.whenCleanedUp().then(() => {
      if (!disposed) markEnded(chats, chatId, session);
    });
  });
  return {
    dispose() {
      disposed = true;
      subscription.dispose();
    }
  };
}

function markEnded(chats: DebugCardChats, chatId: string, session: DebugSession): void {
  const ofSession = (item: ToolCallItem): boolean =>
    item.display?.kind === 'debug' && item.display.sessionId === session.id;
  let latest: string | undefined;
  updateToolCards(chats, chatId, {
    match: ofSession,
    latestOnly: true,
    render: (item) => ((latest = item.id), item.display!)
  });
  updateToolCards(chats, chatId, {
    match: ofSession,
    render: (item) => {
      if (item.display?.kind !== 'debug' || item.display.state === 'ended') return item.display!;
      if (item.id !== latest) return { ...item.display, sessionEnded: true };
      const {
        frames: _frames,
        locals: _locals,
        breakpoints: _breakpoints,
        sessionEnded: _ended,
        ...rest
      } = item.display;
      const end = session.ending;
      return { ...rest, state: 'ended', ...(end ? { reason: `ended: ${end.message}` } : {}) };
    }
  });
}
