/**
 * A debug session that ends on its own — its TTL, its adapter dying, the chat's kernel going
 * away — or from the card's Terminate button, ends between tool calls, so no new card says
 * so. This follower turns the session's latest card to `ended` (an `item-updated` event),
 * which drops its Terminate button and lets the pane switch JupyterLab's debugger off for
 * the notebook (its gutter markers go with it). Earlier cards stay as they were: they are
 * the record of each stop. (Issue #12.)
 */
import { updateToolCards, type CardChats } from '../../chats/tool-cards.js';
import type { DebugSession } from '../../dap/debug-session.js';
import type { DebugSessionManager } from '../../dap/session-manager.js';

/** What the follower needs of the chats: the latest items and an event to every pane. */
export type DebugCardChats = CardChats;

/** Follows `sessions`: each ended session's latest card becomes `ended`. Returns the subscription. */
export function followEndedDebugCards(sessions: Pick<DebugSessionManager, 'onDidChange'>, chats: DebugCardChats): { dispose(): void } {
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
  updateToolCards(chats, chatId, {
    match: (item) => item.display?.kind === 'debug' && item.display.sessionId === session.id,
    latestOnly: true,
    render: (item) => {
      if (item.display?.kind !== 'debug' || item.display.state === 'ended') return item.display!;
      const { frames: _frames, locals: _locals, breakpoints: _breakpoints, ...rest } = item.display;
      const end = session.ending;
      return { ...rest, state: 'ended', ...(end ? { reason: `ended: ${end.message}` } : {}) };
    }
  });
}
