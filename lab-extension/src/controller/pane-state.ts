/**
 * What every part of the pane's controller shares: the connection, the open chat's store,
 * the chat list, the settings, the drafts a chat not yet created starts with, and the few
 * steps all parts take (tell the person about a failure, open a chat snapshot, pick the
 * model settings for a turn). The parts (`chats.ts`, `cards.ts`, `modes.ts`, …) hold no
 * state of their own beyond their in-flight flags, so they always agree on what is open.
 */
import type {
  ChatMode,
  ChatSummary,
  ModelOption,
  ModelSettings,
  ProviderStatus,
  SendContext,
  TierModel
} from '@cellmate/protocol';
import type { ISettingRegistry } from '@jupyterlab/settingregistry';
import type { TranslationBundle } from '@jupyterlab/translation';

import type { CellmateConnection } from '../connection';
import { isWorkerSummary } from '../guards';
import type { IChatMemory } from '../memory';
import { ChatsModel, sanitizeChat, sortChats } from '../model';
import {
  DEFAULT_SETTINGS,
  ICellmateSettings,
  ISetupProblem,
  readSettings,
  setupProblem,
  toModelSettings
} from '../settings';
import { WorkersModel } from '../workers';

/** `wanted` marker: create a chat on connect rather than reopening one. */
export const NEW_CHAT = '\u0000new-chat';

/** How the controller tells the user about a failure outside the transcript. */
export type Notify = (level: 'info' | 'warning' | 'error', message: string) => void;

/** What the pane's controller is built from (the facade's options). */
export interface IPaneOptions {
  connection: CellmateConnection;
  memory: IChatMemory;
  notify: Notify;
  trans: TranslationBundle;
  /** The plugin's settings; null when the registry failed to load them. */
  settings?: ISettingRegistry.ISettings | null;
  /** The notebook the user looks at, sent with each message. */
  context?: () => SendContext | undefined;
  /** Before the demo's first turn: opens a notebook when none is (the demo works on one). */
  prepareDemo?: () => Promise<void>;
}

/** The state one pane's controller parts share. */
export class PaneState {
  /** The open chat (null state = none yet; one is created on the first send). */
  readonly store = new ChatsModel();
  /** The open chat's background workers. */
  readonly workers = new WorkersModel();
  readonly connection: CellmateConnection;
  readonly memory: IChatMemory;
  readonly notify: Notify;
  readonly trans: TranslationBundle;
  readonly settingsObject: ISettingRegistry.ISettings | null;
  readonly context: (() => SendContext | undefined) | undefined;
  readonly prepareDemo: (() => Promise<void>) | undefined;
  /** Tells the facade's `changed` listeners (widgets re-read what they show). */
  readonly emitChanged: () => void;

  settings: ICellmateSettings = DEFAULT_SETTINGS;
  /** True while the offline demo plays (turns run on the scripted provider's demo). */
  demo = false;
  providers: ProviderStatus[] | null = null;
  /** Chats for the selector, most recent first. */
  chats: ChatSummary[] = [];
  /** The chat to open on (re)connect: an id, {@link NEW_CHAT}, or null for the latest. */
  wanted: string | null = null;
  /** Bumped by every open; an answer for an older generation is stale and dropped. */
  generation = 0;
  /** True while a `chat/send` (or the chat it creates) is in flight. */
  sending = false;
  /** What the chat the next message creates starts with. */
  draftMode: ChatMode = 'agent';
  draftAuto = false;
  draftModel: TierModel | null = null;
  models: ModelOption[] = [];

  constructor(options: IPaneOptions, emitChanged: () => void) {
    this.connection = options.connection;
    this.memory = options.memory;
    this.notify = options.notify;
    this.trans = options.trans;
    this.settingsObject = options.settings ?? null;
    this.context = options.context;
    this.prepareDemo = options.prepareDemo;
    this.emitChanged = emitChanged;
    if (this.settingsObject) {
      this.settings = readSettings(this.settingsObject.composite);
    }
  }

  /** The open chat's id, or undefined with none open. */
  get chatId(): string | undefined {
    return this.store.state?.chatId;
  }

  /** True while the open chat runs a turn. */
  get running(): boolean {
    return this.store.state?.running ?? false;
  }

  get connected(): boolean {
    return this.connection.status.state === 'connected';
  }

  /** The settings turns run with: the person's, or the demo's while it plays. */
  get effectiveSettings(): ICellmateSettings {
    return this.demo ? { ...this.settings, provider: 'scripted', model: 'demo', scriptPath: '' } : this.settings;
  }

  /** What keeps a turn from running, or null when the pane is ready. */
  get setup(): ISetupProblem | null {
    return setupProblem(this.effectiveSettings, this.providers);
  }

  /** The model settings for a turn, or null after telling the user what is missing. */
  usableModel(): ModelSettings | null {
    const model = toModelSettings(this.effectiveSettings);
    const problem = this.setup;
    if (problem || !model) {
      this.notify('warning', problem?.message ?? this.trans.__('Cellmate is not configured'));
      return null;
    }
    return model;
  }

  /** Puts a summary the server answered with into the chat list, most recent first. */
  mergeSummary(chatId: string, summary: Partial<ChatSummary>): void {
    this.chats = sortChats(this.chats.map((c) => (c.id === chatId ? { ...c, ...summary } : c)));
  }

  addChat(chat: ChatSummary): void {
    if (!this.chats.some((c) => c.id === chat.id)) {
      const { id, title, mode, createdAt, updatedAt } = chat;
      this.chats = sortChats([{ id, title, mode, createdAt, updatedAt }, ...this.chats]);
    }
  }

  /** Opens a chat snapshot; false (and a notice) when it is not a chat. */
  load(value: unknown): boolean {
    const checked = sanitizeChat(value);
    if (!checked) {
      this.problem('the server sent a chat the pane cannot read');
      return false;
    }
    // Reopening the same chat (a reconnect) refreshes its workers; another chat loads them on the switch.
    const sameChat = this.workers.chatId === checked.chat.id;
    this.store.load(checked.chat);
    if (sameChat) {
      void this.loadWorkers(checked.chat.id);
    }
    this.wanted = checked.chat.id;
    void this.memory.save(checked.chat.id);
    if (checked.dropped) {
      this.store.notice(
        'warning',
        this.trans._n(
          '%1 transcript item of an unknown kind is not shown (is the pane older than the server?).',
          '%1 transcript items of an unknown kind are not shown (is the pane older than the server?).',
          checked.dropped
        )
      );
    }
    this.emitChanged();
    return true;
  }

  /** Closes the open chat and forgets it (it was deleted). */
  forgetOpenChat(): void {
    this.store.clear();
    this.wanted = null;
    void this.memory.save(null);
  }

  /** Loads the workers list of a chat (none for null). */
  async loadWorkers(chatId: string | null): Promise<void> {
    this.workers.reset(chatId);
    if (!chatId || !this.connected) {
      return;
    }
    try {
      const list: unknown = await this.connection.request('worker/list', { chatId });
      if (this.workers.chatId === chatId && Array.isArray(list)) {
        this.workers.reset(chatId, list.filter(isWorkerSummary));
      }
    } catch {
      // An older companion without workers: the list stays empty.
    }
  }

  /** A message from the server the pane ignored: a line in the pane, and one toast per burst. */
  problem(message: string): void {
    this.store.notice('warning', this.trans.__('Ignored a message from the server: %1', message));
    const now = Date.now();
    // One toast per burst: a misbehaving server should not bury the page in toasts.
    if (now - this._lastProblemToast > 10_000) {
      this._lastProblemToast = now;
      this.notify('warning', this.trans.__('Cellmate received a malformed message; see the pane.'));
    }
  }

  /** A line in the open transcript (a toast when no chat is open); never sent to the model. */
  notice(level: 'info' | 'error', text: string): void {
    if (this.store.state) {
      this.store.notice(level, text);
    } else {
      this.notify(level, text);
    }
  }

  /** Tells the person a request failed: a line in the transcript and a toast. */
  fail(what: string, error: unknown): void {
    const text = `${what}: ${errorMessage(error)}`;
    this.store.notice('error', text);
    this.notify('error', text);
  }

  setSending(sending: boolean): void {
    this.sending = sending;
    this.emitChanged();
  }

  private _lastProblemToast = 0;
}

/** The message of anything thrown. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
