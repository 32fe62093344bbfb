/**
 * What the pane does with the open chat's past: compact what the model is sent (CTX-3),
 * list the turns that changed files, preview and rewind them, export the chat.
 */
import type { RewindPreview, RewindResult } from '@cellmate/protocol';

import { PaneState } from './pane-state';

/** The open chat's compaction, checkpoints, rewind and export. */
export class HistoryActions {
  constructor(private readonly _pane: PaneState) {}

  /** True while a `chat/compact` of the open chat is in flight. */
  get compacting(): boolean {
    return this._compacting;
  }

  /** Whether Compact can run now: a chat is open, connected, and no turn, send or compaction is under way. */
  get canCompact(): boolean {
    const pane = this._pane;
    return !!pane.store.state && pane.connected && !pane.running && !pane.sending && !this._compacting;
  }

  /**
   * Compacts what the open chat sends the model (`chat/compact`, CTX-3) with the model
   * settings a turn would use; the compaction card arrives as an event. Resolves with the
   * server's answer, or null when it did not run (the user was told why).
   */
  async compact(): Promise<{ compacted: boolean; message: string } | null> {
    const pane = this._pane;
    const chatId = pane.chatId;
    if (!chatId || !this.canCompact) {
      return null;
    }
    const model = pane.usableModel();
    if (!model) {
      return null;
    }
    this._compacting = true;
    pane.emitChanged();
    try {
      const result = await pane.connection.request('chat/compact', { chatId, model });
      if (!result?.compacted) {
        // Nothing to compact, or the server refused: its message says which.
        pane.notify('info', result?.message || pane.trans.__('The conversation was not compacted.'));
      }
      return result;
    } catch (error) {
      pane.fail(pane.trans.__('Could not compact the conversation'), error);
      return null;
    } finally {
      this._compacting = false;
      pane.emitChanged();
    }
  }

  /** The open chat's turns that changed files or notebooks (none while a turn runs). */
  async checkpoints(): Promise<string[]> {
    const pane = this._pane;
    const chatId = pane.chatId;
    if (!chatId || pane.running || !pane.connected) {
      return [];
    }
    try {
      return (await pane.connection.request('chat/checkpoints', { chatId })).turns.map((t) => t.turnId);
    } catch {
      return [];
    }
  }

  /** What undoing a turn (`turn`) or rewinding to a message (`from`) would restore. */
  async rewindPreview(itemId: string, scope: 'turn' | 'from'): Promise<RewindPreview> {
    const chatId = this._openChatId();
    return this._pane.connection.request('chat/rewind-preview', { chatId, itemId, scope });
  }

  /** Restores the checkpoint(s); with `conversation`, the messages from `itemId` on go too. */
  async rewind(
    itemId: string,
    scope: 'turn' | 'from',
    options: { overwrite: boolean; conversation: boolean }
  ): Promise<RewindResult> {
    const chatId = this._openChatId();
    return this._pane.connection.request('chat/rewind', { chatId, itemId, scope, ...options });
  }

  /** Exports the open chat to Markdown and a notebook in the workspace's `exports/` (`/export`). */
  async exportChat(): Promise<void> {
    const pane = this._pane;
    const chatId = pane.chatId;
    if (!chatId) {
      pane.notice('error', pane.trans.__('There is no chat to export yet.'));
      return;
    }
    try {
      const r = await pane.connection.request('chat/export', { chatId });
      const figures = r.files.length ? pane.trans.__(' (%1 output files beside them)', r.files.length) : '';
      pane.notice('info', pane.trans.__('Exported to %1 and %2%3.', r.markdown, r.notebook, figures));
    } catch (error) {
      pane.fail(pane.trans.__('Could not export the chat'), error);
    }
  }

  /** The open chat's id; throws (the rewind dialog shows it) with none open. */
  private _openChatId(): string {
    const chatId = this._pane.chatId;
    if (!chatId) {
      throw new Error(this._pane.trans.__('No chat is open.'));
    }
    return chatId;
  }

  private _compacting = false;
}
