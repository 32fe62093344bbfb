/**
 * The pane's chats: open, create, send (creating a chat first), Fix/Explain on a cell,
 * retry or edit the last turn, stop, rename, delete, page back through a long transcript,
 * start a review chat, and the offline demo.
 */
import type { CellAssist, ReviewScope, SendContext } from '@cellmate/protocol';

import { isTranscriptItem, oldestServerItemId } from '../model';
import { NEW_CHAT, PaneState } from './pane-state';

/** What the pane does with its chats. */
export class ChatActions {
  constructor(private readonly _pane: PaneState) {}

  /** True while an older page of the transcript is being fetched. */
  get loadingOlder(): boolean {
    return this._loadingOlder;
  }

  /**
   * Fetches the page of items before the oldest one shown (`chat/items`), when the
   * server said there are older ones; one request at a time. The transcript calls this
   * when the user scrolls to its top.
   */
  async loadOlder(): Promise<void> {
    const pane = this._pane;
    const state = pane.store.state;
    const before = state ? oldestServerItemId(state) : undefined;
    if (!state || !before || state.olderCount <= 0 || this._loadingOlder) {
      return;
    }
    this._loadingOlder = true;
    pane.emitChanged();
    try {
      const page = await pane.connection.request('chat/items', { chatId: state.chatId, before });
      const items = Array.isArray(page?.items) ? page.items.filter(isTranscriptItem) : [];
      pane.store.prepend(state.chatId, before, { items, olderCount: page?.olderCount });
    } catch (error) {
      pane.fail(pane.trans.__('Could not load earlier messages'), error);
    } finally {
      this._loadingOlder = false;
      pane.emitChanged();
    }
  }

  /** Opens a chat by id (from the selector). */
  async openChat(chatId: string): Promise<void> {
    const pane = this._pane;
    const generation = ++pane.generation;
    pane.wanted = chatId;
    try {
      const chat = await pane.connection.request('chat/get', { chatId });
      if (generation === pane.generation) {
        pane.load(chat);
      }
    } catch (error) {
      if (generation === pane.generation) {
        pane.fail(pane.trans.__('Could not open the chat'), error);
      }
    }
  }

  /**
   * Creates a chat and opens it. Asked for while (re)connecting, the request is kept and
   * carried out on connect instead of restoring the last chat.
   */
  async newChat(): Promise<void> {
    const pane = this._pane;
    const generation = ++pane.generation;
    if (!pane.connected) {
      pane.wanted = NEW_CHAT;
      pane.store.clear();
      return;
    }
    try {
      const chat = await pane.connection.request('chat/create', {});
      if (generation === pane.generation && pane.load(chat)) {
        pane.addChat(chat);
      }
    } catch (error) {
      pane.fail(pane.trans.__('Could not create a chat'), error);
    }
  }

  /**
   * Sends a user message with the configured model, creating a chat first when none is
   * open. Resolves true once the server accepted the turn.
   */
  async send(text: string, contextOverride?: SendContext): Promise<boolean> {
    const pane = this._pane;
    const message = text.trim();
    if (!message || pane.sending || pane.running) {
      return false;
    }
    const model = pane.usableModel();
    if (!model) {
      return false;
    }
    pane.setSending(true);
    try {
      let chatId = pane.chatId;
      if (!chatId) {
        const chat = await pane.connection.request('chat/create', {});
        pane.generation++;
        if (!pane.load(chat)) {
          return false;
        }
        pane.addChat(chat);
        chatId = chat.id;
        if (pane.draftMode !== 'agent') {
          // The mode picked before the chat existed is its first turn's mode.
          await pane.connection.request('chat/set-mode', { chatId, mode: pane.draftMode });
        }
        pane.draftMode = 'agent';
        if (pane.draftAuto) {
          // Auto switched on before the chat existed applies to its first turn.
          await pane.connection.request('chat/set-auto', { chatId, auto: true });
        }
        pane.draftAuto = false;
        if (pane.draftModel) {
          // So does a model picked before it existed.
          await pane.connection.request('chat/set-model', { chatId, model: pane.draftModel, settings: model });
          pane.draftModel = null;
        }
      }
      const context = contextOverride ?? pane.context?.();
      await pane.connection.request('chat/send', {
        chatId,
        text: message,
        model,
        ...(context ? { context } : {})
      });
      return true;
    } catch (error) {
      pane.fail(pane.trans.__('Could not send the message'), error);
      return false;
    } finally {
      pane.setSending(false);
    }
  }

  /**
   * "Fix with Cellmate" / "Explain" on a notebook cell: a turn in the open chat (a new chat
   * when the open one is busy) whose message names the cell and its error; the companion
   * attaches the cell, its traceback, where its names come from and the kernel's facts,
   * and runs an Explain turn read-only. Resolves true once the turn started.
   */
  async assistCell(assist: CellAssist, notebookPath: string, error: string): Promise<boolean> {
    const pane = this._pane;
    if (pane.sending) {
      return false;
    }
    if (pane.running) {
      await this.newChat();
    }
    const n = assist.cell + 1;
    const text =
      assist.action === 'fix'
        ? pane.trans.__('Fix cell %1 of %2 (%3)', n, notebookPath, error)
        : pane.trans.__('Explain the error in cell %1 of %2 (%3)', n, notebookPath, error);
    return this.send(text, { notebookPath, selectedCells: [assist.cell], assist });
  }

  /**
   * Runs the open chat's last turn again (`chat/retry`), or with its user message
   * replaced by `text` (`chat/edit`). Resolves true once the server accepted it.
   */
  async retry(text?: string): Promise<boolean> {
    const pane = this._pane;
    const chatId = pane.chatId;
    const edited = text?.trim();
    if (!chatId || pane.sending || pane.running || (text !== undefined && !edited)) {
      return false;
    }
    const model = pane.usableModel();
    if (!model) {
      return false;
    }
    pane.setSending(true);
    try {
      if (edited !== undefined) {
        await pane.connection.request('chat/edit', { chatId, text: edited, model });
      } else {
        await pane.connection.request('chat/retry', { chatId, model });
      }
      return true;
    } catch (error) {
      pane.fail(
        edited !== undefined
          ? pane.trans.__('Could not resend the edited message')
          : pane.trans.__('Could not retry the turn'),
        error
      );
      return false;
    } finally {
      pane.setSending(false);
    }
  }

  /** Stops the open chat's running turn. */
  async abort(): Promise<void> {
    const pane = this._pane;
    const chatId = pane.chatId;
    if (!chatId) {
      return;
    }
    try {
      await pane.connection.request('chat/abort', { chatId });
    } catch (error) {
      pane.fail(pane.trans.__('Could not stop the turn'), error);
    }
  }

  /** Renames a chat; false when it failed (the user was told). */
  async rename(chatId: string, title: string): Promise<boolean> {
    const pane = this._pane;
    try {
      const summary = await pane.connection.request('chat/rename', { chatId, title });
      pane.mergeSummary(chatId, summary);
      if (pane.chatId === chatId) {
        pane.store.retitle(summary.title);
      }
      pane.emitChanged();
      return true;
    } catch (error) {
      pane.fail(pane.trans.__('Could not rename the chat'), error);
      return false;
    }
  }

  /**
   * Deletes a chat (the server aborts its turn first). When it was the open chat, the
   * next most recent one opens; with none left, the pane waits for the first message.
   */
  async deleteChat(chatId: string): Promise<boolean> {
    const pane = this._pane;
    // chat/listChanged may close the open chat before the response arrives.
    const wasOpen = pane.chatId === chatId;
    try {
      await pane.connection.request('chat/delete', { chatId });
    } catch (error) {
      pane.fail(pane.trans.__('Could not delete the chat'), error);
      return false;
    }
    pane.chats = pane.chats.filter((c) => c.id !== chatId);
    if (wasOpen && (!pane.store.state || pane.chatId === chatId)) {
      pane.forgetOpenChat();
      const next = pane.chats[0];
      if (next) {
        await this.openChat(next.id);
      }
    }
    pane.emitChanged();
    return true;
  }

  /**
   * "Review changes" (MODE-4): the companion starts a new chat in Review mode over the
   * workspace's git diff (or a notebook) and runs its first turn with the configured model;
   * the pane then opens that chat. False when it could not start (the user was told why).
   */
  async startReview(scope: ReviewScope): Promise<boolean> {
    const pane = this._pane;
    const model = pane.usableModel();
    if (!model) {
      return false;
    }
    try {
      const { chatId } = await pane.connection.request('review/start', { scope, model });
      await this.openChat(chatId);
      return true;
    } catch (error) {
      pane.fail(pane.trans.__('Could not start the review'), error);
      return false;
    }
  }

  /**
   * Plays the offline demo (no API key, nothing written to the settings): a new chat whose
   * first turn makes a table and a plot in the notebook's kernel and proposes a cell for
   * the open notebook (opened first when there is none). Resolves once the turn started.
   */
  async useDemo(): Promise<boolean> {
    const pane = this._pane;
    pane.demo = true;
    pane.emitChanged();
    try {
      await pane.prepareDemo?.();
    } catch (error) {
      // The demo still shows the table and the plot without a notebook.
      console.warn('Cellmate: could not open a notebook for the demo', error);
    }
    await this.newChat();
    return this.send(pane.trans.__('Show me what Cellmate can do'));
  }

  /** Ends the demo: the next turn uses the person's settings again. */
  leaveDemo(): void {
    if (!this._pane.demo) {
      return;
    }
    this._pane.demo = false;
    this._pane.emitChanged();
  }

  private _loadingOlder = false;
}
