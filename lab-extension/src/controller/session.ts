/**
 * The pane's side of the connection: restore the last chat on start, reopen the open chat
 * (or the one asked for) after every (re)connect, follow the server's events and chat list,
 * tell the person when the connection drops, and re-read the settings when they change.
 */
import type { HelloResult, ProviderStatus } from '@cellmate/protocol';
import { ErrorCodes } from '@cellmate/protocol';
import type { ISettingRegistry } from '@jupyterlab/settingregistry';
import { Signal } from '@lumino/signaling';

import { CellmateConnection, CellmateRequestError, IConnectionStatus, IncomingNotification } from '../connection';
import { sortChats } from '../model';
import { readSettings } from '../settings';
import type { ChatActions } from './chats';
import type { ModelActions } from './models';
import { NEW_CHAT, PaneState } from './pane-state';

/** Follows one pane's connection and settings until disposed. */
export class PaneSession {
  constructor(
    private readonly _pane: PaneState,
    private readonly _chats: ChatActions,
    private readonly _models: ModelActions
  ) {
    const pane = _pane;
    pane.settingsObject?.changed.connect(this._onSettingsChanged, this);
    pane.connection.connected.connect(this._onConnected, this);
    pane.connection.notified.connect(this._onNotified, this);
    pane.connection.statusChanged.connect(this._onStatus, this);
    pane.connection.problem.connect(this._onProblem, this);
    pane.store.subscribe((state, change) => {
      if (change.running) {
        pane.emitChanged();
      }
      if ((state?.chatId ?? null) !== pane.workers.chatId) {
        void pane.loadWorkers(state?.chatId ?? null);
      }
    });
  }

  /** Restores the last chat id and connects. */
  async start(): Promise<void> {
    let remembered: string | null = null;
    try {
      remembered = await this._pane.memory.load();
    } catch {
      // No memory: open the most recent chat.
    }
    // A New chat asked for in the meantime wins over the remembered one.
    this._pane.wanted ??= remembered;
    this._pane.connection.start();
  }

  /** Stops following the connection and the settings. */
  dispose(): void {
    Signal.clearData(this);
  }

  private async _onConnected(_: CellmateConnection, hello: HelloResult): Promise<void> {
    const pane = this._pane;
    pane.providers = hello.providers as ProviderStatus[];
    void this._models.refreshModels();
    const reconnect = this._wasConnected;
    this._wasConnected = true;
    pane.emitChanged();
    const generation = ++pane.generation;
    if (pane.wanted === NEW_CHAT) {
      pane.wanted = null;
      try {
        const list: unknown = await pane.connection.request('chat/list', {});
        pane.chats = Array.isArray(list) ? sortChats(list) : [];
      } catch {
        // The list also arrives with chat/listChanged once the chat exists.
      }
      await this._chats.newChat();
      return;
    }
    try {
      const list: unknown = await pane.connection.request('chat/list', {});
      pane.chats = Array.isArray(list) ? sortChats(list) : [];
      pane.emitChanged();
      const wanted = pane.chatId ?? pane.wanted;
      const target = (wanted && pane.chats.find((c) => c.id === wanted)?.id) || pane.chats[0]?.id || null;
      if (!target) {
        if (pane.store.state) {
          pane.store.clear();
        }
        return;
      }
      const chat = await pane.connection.request('chat/get', { chatId: target });
      if (generation !== pane.generation) {
        return;
      }
      if (!pane.load(chat)) {
        return;
      }
      if (reconnect) {
        pane.store.notice('info', pane.trans.__('Reconnected to the Cellmate server.'));
      }
      pane.emitChanged();
    } catch (error) {
      if (error instanceof CellmateRequestError && error.code === ErrorCodes.ChatNotFound) {
        pane.store.clear();
        return;
      }
      pane.fail(pane.trans.__('Could not load the chats'), error);
    }
  }

  private _onNotified(_: CellmateConnection, note: IncomingNotification): void {
    const pane = this._pane;
    if (note.method === 'chat/event') {
      if (note.params.event.type === 'worker-updated') {
        pane.workers.update(note.params.chatId, note.params.event.worker);
        return;
      }
      pane.store.apply(note.params.chatId, note.params.event);
      return;
    }
    if (note.method !== 'chat/listChanged') {
      return; // inline completions listen for their own deltas
    }
    pane.chats = sortChats(note.params.chats);
    const open = pane.store.state;
    if (open) {
      const summary = pane.chats.find((c) => c.id === open.chatId);
      if (summary) {
        pane.store.retitle(summary.title);
      } else {
        // The open chat was deleted (here or in another window).
        pane.forgetOpenChat();
      }
    }
    pane.emitChanged();
  }

  private _onStatus(_: CellmateConnection, status: IConnectionStatus): void {
    const pane = this._pane;
    if (status.state === 'reconnecting' && this._wasConnected && !this._dropNoticed) {
      this._dropNoticed = true;
      pane.store.notice(
        'warning',
        pane.trans.__('Lost the connection to the Cellmate server (%1). Reconnecting…', status.reason ?? '')
      );
    }
    if (status.state === 'connected') {
      this._dropNoticed = false;
    }
    pane.emitChanged();
  }

  private _onProblem(_: CellmateConnection, message: string): void {
    this._pane.problem(message);
  }

  private _onSettingsChanged(settings: ISettingRegistry.ISettings): void {
    this._pane.settings = readSettings(settings.composite as Record<string, unknown>);
    this._pane.emitChanged();
    void this._refreshProviders();
    void this._models.refreshModels();
  }

  /** Asks the server again which keys it has (the user may have just picked a provider). */
  private async _refreshProviders(): Promise<void> {
    const pane = this._pane;
    if (!pane.connected) {
      return;
    }
    try {
      const providers: unknown = await pane.connection.request('config/providers', {});
      if (Array.isArray(providers)) {
        pane.providers = providers as ProviderStatus[];
        pane.emitChanged();
      }
    } catch {
      // The list from hello stays; the banner may be stale until the next reconnect.
    }
  }

  private _wasConnected = false;
  private _dropNoticed = false;
}
