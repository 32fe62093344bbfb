/**
 * How the open chat works: its mode (Agent, Plan, …: MODE-1/8) and Auto approval (SIDE-1).
 * With no chat open, both are drafts the chat the next message creates starts with.
 */
import type { ChatMode } from '@cellmate/protocol';
import { SELECTABLE_MODES } from '@cellmate/protocol';

import { PaneState } from './pane-state';

/** The open chat's mode and Auto switch. */
export class ModeActions {
  constructor(private readonly _pane: PaneState) {}

  /** The mode the composer shows (MODE-1/8): the open chat's, or the one a new chat will start in. */
  get mode(): ChatMode {
    return this._pane.store.state?.mode ?? this._pane.draftMode;
  }

  /**
   * Switches the open chat's mode (`chat/set-mode`; applies from its next turn). With no
   * chat open, the chat the next message creates starts in it. False when it failed (the
   * user was told).
   */
  async setMode(mode: ChatMode): Promise<boolean> {
    const pane = this._pane;
    const chatId = pane.chatId;
    if (!chatId) {
      pane.draftMode = mode;
      pane.emitChanged();
      return true;
    }
    try {
      pane.mergeSummary(chatId, await pane.connection.request('chat/set-mode', { chatId, mode }));
      pane.emitChanged();
      return true;
    } catch (error) {
      pane.fail(pane.trans.__('Could not switch the mode'), error);
      pane.emitChanged(); // the selector goes back to the chat's mode
      return false;
    }
  }

  /** Shift+Tab (MODE-8): the next mode a person may pick, after the current one. */
  cycleMode(): Promise<boolean> {
    const at = SELECTABLE_MODES.indexOf(this.mode);
    return this.setMode(SELECTABLE_MODES[(at + 1) % SELECTABLE_MODES.length]);
  }

  /** Whether Auto approval is on for the open chat (SIDE-1), or for the chat the next message creates. */
  get auto(): boolean {
    return this._pane.store.state?.auto ?? this._pane.draftAuto;
  }

  /**
   * Switches Auto approval for the open chat (`chat/set-auto`; the composer's switch,
   * `/auto`). With no chat open, the chat the next message creates starts with it. False
   * when it failed (the person was told).
   */
  async setAuto(auto: boolean): Promise<boolean> {
    const pane = this._pane;
    const chatId = pane.chatId;
    if (!chatId) {
      pane.draftAuto = auto;
      pane.emitChanged();
      return true;
    }
    try {
      pane.mergeSummary(chatId, await pane.connection.request('chat/set-auto', { chatId, auto }));
      pane.emitChanged();
      return true;
    } catch (error) {
      pane.fail(pane.trans.__('Could not switch Auto approval'), error);
      pane.emitChanged(); // the switch goes back to the chat's state
      return false;
    }
  }
}
