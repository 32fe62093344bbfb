/**
 * What the pane does: opens chats, sends messages, aborts turns, follows the server's
 * events, and recovers the open chat after every reconnect. Widgets only render it.
 */
import type {
  CellAssist,
  ChatMode,
  ChatSummary,
  HelloResult,
  CustomCommandInfo,
  InstructionFileInfo,
  McpServerStatus,
  SkillInfo,
  MentionCandidate,
  ModelOption,
  ModelSettings,
  ProviderStatus,
  TierModel,
  QuestionAnswer,
  ReviewScope,
  RewindPreview,
  RewindResult,
  SendContext,
  ToolMetrics,
  TranscriptItem,
  WorkerSummary
} from '@cellmate/protocol';
import { ErrorCodes, SELECTABLE_MODES } from '@cellmate/protocol';
import type { ISettingRegistry } from '@jupyterlab/settingregistry';
import type { TranslationBundle } from '@jupyterlab/translation';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import {
  CellmateConnection,
  CellmateRequestError,
  IConnectionStatus,
  IncomingNotification
} from './connection';
import { isTierModel, isWorkerSummary } from './guards';
import { IChatMemory } from './memory';
import { ChatsModel, isTranscriptItem, oldestServerItemId, sanitizeChat, sortChats } from './model';
import {
  DEFAULT_SETTINGS,
  ICellmateSettings,
  ISetupProblem,
  readSettings,
  setupProblem,
  toModelSettings
} from './settings';
import { WorkersModel } from './workers';

/** How the controller tells the user about a failure outside the transcript. */
/** `_wanted` marker: create a chat on connect rather than reopening one. */
const NEW_CHAT = '\u0000new-chat';

export type Notify = (level: 'info' | 'warning' | 'error', message: string) => void;

/** Drives one pane. */
export class CellmateController implements IDisposable {
  /** The open chat (null state = none yet; one is created on the first send). */
  readonly store = new ChatsModel();
  /** The open chat's background workers. */
  readonly workers = new WorkersModel();

  constructor(options: CellmateController.IOptions) {
    this._connection = options.connection;
    this._memory = options.memory;
    this._notify = options.notify;
    this._trans = options.trans;
    this._settingsObject = options.settings ?? null;
    this._context = options.context;
    this._prepareDemo = options.prepareDemo;
    if (this._settingsObject) {
      this._settings = readSettings(this._settingsObject.composite);
      this._settingsObject.changed.connect(this._onSettingsChanged, this);
    }
    this._connection.connected.connect(this._onConnected, this);
    this._connection.notified.connect(this._onNotified, this);
    this._connection.statusChanged.connect(this._onStatus, this);
    this._connection.problem.connect(this._onProblem, this);
    this.store.subscribe((state, change) => {
      if (change.running) {
        this._changed.emit();
      }
      if ((state?.chatId ?? null) !== this.workers.chatId) {
        void this._loadWorkers(state?.chatId ?? null);
      }
    });
  }

  /** Emitted when anything outside the transcript items changes. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get connectionStatus(): IConnectionStatus {
    return this._connection.status;
  }

  /** Chats for the selector, most recent first. */
  get chats(): readonly ChatSummary[] {
    return this._chats;
  }

  get settings(): ICellmateSettings {
    return this._settings;
  }

  /** What keeps a turn from running, or null when the pane is ready. */
  get setup(): ISetupProblem | null {
    return setupProblem(this._effectiveSettings, this._providers);
  }

  /**
   * True while the pane plays the offline demo: its turns run on the scripted provider's
   * built-in demo while the person's settings stay exactly as they were (nothing is
   * written); {@link leaveDemo} is the way back.
   */
  get demo(): boolean {
    return this._demo;
  }

  /** The settings turns run with: the person's, or the demo's while it plays. */
  private get _effectiveSettings(): ICellmateSettings {
    return this._demo ? { ...this._settings, provider: 'scripted', model: 'demo', scriptPath: '' } : this._settings;
  }

  /** True while a `chat/send` (or the chat it creates) is in flight. */
  get sending(): boolean {
    return this._sending;
  }

  /** True while the open chat runs a turn. */
  get running(): boolean {
    return this.store.state?.running ?? false;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** Restores the last chat id and connects. */
  async start(): Promise<void> {
    let remembered: string | null = null;
    try {
      remembered = await this._memory.load();
    } catch {
      // No memory: open the most recent chat.
    }
    // A New chat asked for in the meantime wins over the remembered one.
    this._wanted ??= remembered;
    this._connection.start();
  }

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
    const state = this.store.state;
    const before = state ? oldestServerItemId(state) : undefined;
    if (!state || !before || state.olderCount <= 0 || this._loadingOlder) {
      return;
    }
    this._loadingOlder = true;
    this._changed.emit();
    try {
      const page = await this._connection.request('chat/items', { chatId: state.chatId, before });
      const items = Array.isArray(page?.items) ? page.items.filter(isTranscriptItem) : [];
      this.store.prepend(state.chatId, before, { items, olderCount: page?.olderCount });
    } catch (error) {
      this._fail(this._trans.__('Could not load earlier messages'), error);
    } finally {
      this._loadingOlder = false;
      this._changed.emit();
    }
  }

  /** Opens a chat by id (from the selector). */
  async openChat(chatId: string): Promise<void> {
    const generation = ++this._generation;
    this._wanted = chatId;
    try {
      const chat = await this._connection.request('chat/get', { chatId });
      if (generation === this._generation) {
        this._load(chat);
      }
    } catch (error) {
      if (generation === this._generation) {
        this._fail(this._trans.__('Could not open the chat'), error);
      }
    }
  }

  /**
   * Creates a chat and opens it. Asked for while (re)connecting, the request is kept and
   * carried out on connect instead of restoring the last chat.
   */
  async newChat(): Promise<void> {
    const generation = ++this._generation;
    if (this._connection.status.state !== 'connected') {
      this._wanted = NEW_CHAT;
      this.store.clear();
      return;
    }
    try {
      const chat = await this._connection.request('chat/create', {});
      if (generation === this._generation && this._load(chat)) {
        this._addChat(chat);
      }
    } catch (error) {
      this._fail(this._trans.__('Could not create a chat'), error);
    }
  }

  /**
   * Sends a user message with the configured model, creating a chat first when none is
   * open. Resolves true once the server accepted the turn.
   */
  async send(text: string, contextOverride?: SendContext): Promise<boolean> {
    const message = text.trim();
    if (!message || this._sending || this.running) {
      return false;
    }
    const model = this._usableModel();
    if (!model) {
      return false;
    }
    this._setSending(true);
    try {
      let chatId = this.store.state?.chatId;
      if (!chatId) {
        const chat = await this._connection.request('chat/create', {});
        this._generation++;
        if (!this._load(chat)) {
          return false;
        }
        this._addChat(chat);
        chatId = chat.id;
        if (this._draftMode !== 'chat') {
          // The mode picked before the chat existed is its first turn's mode.
          await this._connection.request('chat/set-mode', { chatId, mode: this._draftMode });
        }
        this._draftMode = 'chat';
        if (this._draftAuto) {
          // Auto switched on before the chat existed applies to its first turn.
          await this._connection.request('chat/set-auto', { chatId, auto: true });
        }
        this._draftAuto = false;
        if (this._draftModel) {
          // So does a model picked before it existed.
          await this._connection.request('chat/set-model', { chatId, model: this._draftModel, settings: model });
          this._draftModel = null;
        }
      }
      const context = contextOverride ?? this._context?.();
      await this._connection.request('chat/send', {
        chatId,
        text: message,
        model,
        ...(context ? { context } : {})
      });
      return true;
    } catch (error) {
      this._fail(this._trans.__('Could not send the message'), error);
      return false;
    } finally {
      this._setSending(false);
    }
  }

  /**
   * "Fix with Cellmate" / "Explain" on a notebook cell: a turn in the open chat (a new chat
   * when the open one is busy) whose message names the cell and its error; the companion
   * attaches the cell, its traceback, where its names come from and the kernel's facts,
   * and runs an Explain turn read-only. Resolves true once the turn started.
   */
  async assistCell(assist: CellAssist, notebookPath: string, error: string): Promise<boolean> {
    if (this._sending) {
      return false;
    }
    if (this.running) {
      await this.newChat();
    }
    const n = assist.cell + 1;
    const text = assist.action === 'fix'
      ? this._trans.__('Fix cell %1 of %2 (%3)', n, notebookPath, error)
      : this._trans.__('Explain the error in cell %1 of %2 (%3)', n, notebookPath, error);
    return this.send(text, { notebookPath, selectedCells: [assist.cell], assist });
  }

  /** The mode the composer shows (MODE-1/8): the open chat's, or the one a new chat will start in. */
  get mode(): ChatMode {
    return this.store.state?.mode ?? this._draftMode;
  }

  /**
   * Switches the open chat's mode (`chat/set-mode`; applies from its next turn). With no
   * chat open, the chat the next message creates starts in it. False when it failed (the
   * user was told).
   */
  async setMode(mode: ChatMode): Promise<boolean> {
    const chatId = this.store.state?.chatId;
    if (!chatId) {
      this._draftMode = mode;
      this._changed.emit();
      return true;
    }
    try {
      const summary = await this._connection.request('chat/set-mode', { chatId, mode });
      this._chats = sortChats(this._chats.map(c => (c.id === chatId ? { ...c, ...summary } : c)));
      this._changed.emit();
      return true;
    } catch (error) {
      this._fail(this._trans.__('Could not switch the mode'), error);
      this._changed.emit(); // the selector goes back to the chat's mode
      return false;
    }
  }

  /** The models the header's picker offers (`models/list` for the configured tiers). */
  get models(): readonly ModelOption[] {
    return this._models;
  }

  /** The model the open chat's turns run with: its own pick, else the settings' main tier (null: none configured). */
  get chatModel(): TierModel | null {
    const picked = this.store.state ? this.store.state.model : this._draftModel;
    if (picked) {
      return picked;
    }
    const main = toModelSettings(this._settings);
    return main ? { provider: main.provider, model: main.model, ...(main.baseUrl ? { baseUrl: main.baseUrl } : {}) } : null;
  }

  /** Whether the open chat follows the settings' main tier (no model of its own). */
  get followsSettings(): boolean {
    return !(this.store.state ? this.store.state.model : this._draftModel);
  }

  /** Asks the server which models the configured tiers offer; the picker shows them. */
  async refreshModels(): Promise<void> {
    const model = toModelSettings(this._settings);
    if (!model || this._connection.status.state !== 'connected') {
      this._models = [];
      this._changed.emit();
      return;
    }
    try {
      const { models } = await this._connection.request('models/list', { model });
      this._models = Array.isArray(models) ? models.filter(isTierModel) : [];
    } catch {
      this._models = []; // the picker still shows the settings' own model
    }
    this._changed.emit();
  }

  /**
   * Picks the open chat's model (the header's picker; `null`: follow the settings again).
   * Stored with the chat, so its next request uses it, in every window and after a reload.
   * With no chat open, the chat the next message creates gets it. False when it failed.
   */
  async setChatModel(choice: TierModel | null): Promise<boolean> {
    const settings = toModelSettings(this._settings);
    const chatId = this.store.state?.chatId;
    if (!chatId || !settings) {
      this._draftModel = choice;
      this._changed.emit();
      return true;
    }
    try {
      await this._connection.request('chat/set-model', { chatId, model: choice, settings });
      return true;
    } catch (error) {
      this._fail(this._trans.__('Could not switch the model'), error);
      this._changed.emit(); // the picker goes back to the chat's model
      return false;
    }
  }

  /** Whether inline completions are on (Settings → Cellmate, or the pane's toggle). */
  get inlineCompletions(): boolean {
    return this._settings.inlineCompletions;
  }

  /** Turns inline completions on or off in the settings (the pane's toggle). */
  async setInlineCompletions(on: boolean): Promise<void> {
    if (!this._settingsObject) {
      this._notify('error', this._trans.__('The Cellmate settings are not available'));
      return;
    }
    try {
      await this._settingsObject.set('inlineCompletions', on);
    } catch (error) {
      this._fail(this._trans.__('Could not change the Cellmate settings'), error);
    }
  }

  /** The model settings an inline completion sends (null: none configured). */
  inlineModel(): ModelSettings | null {
    return this._settings.inlineCompletions ? toModelSettings(this._settings) : null;
  }

  /** Whether Auto approval is on for the open chat (SIDE-1), or for the chat the next message creates. */
  get auto(): boolean {
    return this.store.state?.auto ?? this._draftAuto;
  }

  /**
   * Switches Auto approval for the open chat (`chat/set-auto`; the composer's switch,
   * `/auto`). With no chat open, the chat the next message creates starts with it. False
   * when it failed (the person was told).
   */
  async setAuto(auto: boolean): Promise<boolean> {
    const chatId = this.store.state?.chatId;
    if (!chatId) {
      this._draftAuto = auto;
      this._changed.emit();
      return true;
    }
    try {
      const summary = await this._connection.request('chat/set-auto', { chatId, auto });
      this._chats = sortChats(this._chats.map(c => (c.id === chatId ? { ...c, ...summary } : c)));
      this._changed.emit();
      return true;
    } catch (error) {
      this._fail(this._trans.__('Could not switch Auto approval'), error);
      this._changed.emit(); // the switch goes back to the chat's state
      return false;
    }
  }

  /** Shift+Tab (MODE-8): the next mode a person may pick, after the current one. */
  cycleMode(): Promise<boolean> {
    const at = SELECTABLE_MODES.indexOf(this.mode);
    return this.setMode(SELECTABLE_MODES[(at + 1) % SELECTABLE_MODES.length]);
  }

  /** The model settings for a turn, or null after telling the user what is missing. */
  private _usableModel(): ModelSettings | null {
    const model = toModelSettings(this._effectiveSettings);
    const problem = this.setup;
    if (problem || !model) {
      this._notify('warning', problem?.message ?? this._trans.__('Cellmate is not configured'));
      return null;
    }
    return model;
  }

  /**
   * Runs the open chat's last turn again (`chat/retry`), or with its user message
   * replaced by `text` (`chat/edit`). Resolves true once the server accepted it.
   */
  async retry(text?: string): Promise<boolean> {
    const chatId = this.store.state?.chatId;
    const edited = text?.trim();
    if (!chatId || this._sending || this.running || (text !== undefined && !edited)) {
      return false;
    }
    const model = this._usableModel();
    if (!model) {
      return false;
    }
    this._setSending(true);
    try {
      if (edited !== undefined) {
        await this._connection.request('chat/edit', { chatId, text: edited, model });
      } else {
        await this._connection.request('chat/retry', { chatId, model });
      }
      return true;
    } catch (error) {
      this._fail(
        edited !== undefined
          ? this._trans.__('Could not resend the edited message')
          : this._trans.__('Could not retry the turn'),
        error
      );
      return false;
    } finally {
      this._setSending(false);
    }
  }

  /** True while a `chat/compact` of the open chat is in flight. */
  get compacting(): boolean {
    return this._compacting;
  }

  /** Whether Compact can run now: a chat is open, connected, and no turn, send or compaction is under way. */
  get canCompact(): boolean {
    return (
      !!this.store.state &&
      this._connection.status.state === 'connected' &&
      !this.running &&
      !this._sending &&
      !this._compacting
    );
  }

  /**
   * Compacts what the open chat sends the model (`chat/compact`, CTX-3) with the model
   * settings a turn would use; the compaction card arrives as an event. Resolves with the
   * server's answer, or null when it did not run (the user was told why).
   */
  async compact(): Promise<{ compacted: boolean; message: string } | null> {
    const chatId = this.store.state?.chatId;
    if (!chatId || !this.canCompact) {
      return null;
    }
    const model = this._usableModel();
    if (!model) {
      return null;
    }
    this._compacting = true;
    this._changed.emit();
    try {
      const result = await this._connection.request('chat/compact', { chatId, model });
      if (!result?.compacted) {
        // Nothing to compact, or the server refused: its message says which.
        this._notify('info', result?.message || this._trans.__('The conversation was not compacted.'));
      }
      return result;
    } catch (error) {
      this._fail(this._trans.__('Could not compact the conversation'), error);
      return null;
    } finally {
      this._compacting = false;
      this._changed.emit();
    }
  }

  /** Renames a chat; false when it failed (the user was told). */
  async rename(chatId: string, title: string): Promise<boolean> {
    try {
      const summary = await this._connection.request('chat/rename', { chatId, title });
      this._chats = sortChats(this._chats.map(c => (c.id === chatId ? { ...c, ...summary } : c)));
      if (this.store.state?.chatId === chatId) {
        this.store.retitle(summary.title);
      }
      this._changed.emit();
      return true;
    } catch (error) {
      this._fail(this._trans.__('Could not rename the chat'), error);
      return false;
    }
  }

  /**
   * Deletes a chat (the server aborts its turn first). When it was the open chat, the
   * next most recent one opens; with none left, the pane waits for the first message.
   */
  async deleteChat(chatId: string): Promise<boolean> {
    // chat/listChanged may close the open chat before the response arrives.
    const wasOpen = this.store.state?.chatId === chatId;
    try {
      await this._connection.request('chat/delete', { chatId });
    } catch (error) {
      this._fail(this._trans.__('Could not delete the chat'), error);
      return false;
    }
    this._chats = this._chats.filter(c => c.id !== chatId);
    if (wasOpen && (!this.store.state || this.store.state.chatId === chatId)) {
      this.store.clear();
      this._wanted = null;
      void this._memory.save(null);
      const next = this._chats[0];
      if (next) {
        await this.openChat(next.id);
      }
    }
    this._changed.emit();
    return true;
  }

  /** Stops the open chat's running turn. */
  async abort(): Promise<void> {
    const chatId = this.store.state?.chatId;
    if (!chatId) {
      return;
    }
    try {
      await this._connection.request('chat/abort', { chatId });
    } catch (error) {
      this._fail(this._trans.__('Could not stop the turn'), error);
    }
  }

  /** The open chat's turns that changed files or notebooks (none while a turn runs). */
  async checkpoints(): Promise<string[]> {
    const chatId = this.store.state?.chatId;
    if (!chatId || this.running || this._connection.status.state !== 'connected') {
      return [];
    }
    try {
      return (await this._connection.request('chat/checkpoints', { chatId })).turns.map(t => t.turnId);
    } catch {
      return [];
    }
  }

  /** What undoing a turn (`turn`) or rewinding to a message (`from`) would restore. */
  async rewindPreview(itemId: string, scope: 'turn' | 'from'): Promise<RewindPreview> {
    const chatId = this.store.state?.chatId;
    if (!chatId) {
      throw new Error(this._trans.__('No chat is open.'));
    }
    return this._connection.request('chat/rewind-preview', { chatId, itemId, scope });
  }

  /** Restores the checkpoint(s); with `conversation`, the messages from `itemId` on go too. */
  async rewind(itemId: string, scope: 'turn' | 'from', options: { overwrite: boolean; conversation: boolean }): Promise<RewindResult> {
    const chatId = this.store.state?.chatId;
    if (!chatId) {
      throw new Error(this._trans.__('No chat is open.'));
    }
    return this._connection.request('chat/rewind', { chatId, itemId, scope, ...options });
  }

  /**
   * Accepts or discards a staged edit of the open chat (its diff card). A refusal (a file
   * changed since staging, expired, already resolved) comes back as `state: 'error'` with
   * the server's message, for the card to show.
   */
  async resolveEdit(editId: string, action: 'accept' | 'discard'): Promise<{ state: string; message: string }> {
    const chatId = this.store.state?.chatId;
    if (!chatId) {
      return { state: 'error', message: this._trans.__('No chat is open.') };
    }
    try {
      return await this._connection.request('edit/resolve', { chatId, editId, action });
    } catch (error) {
      return { state: 'error', message: error instanceof Error ? error.message : String(error) };
    }
  }

  /**
   * Approves or rejects a pending plan of the open chat (its plan card, MODE-3). Approving
   * runs the plan's steps with the configured model, so it needs one like sending does. A
   * refusal (not pending any more) comes back as `state: 'error'` for the card to show.
   */
  async resolvePlan(planId: string, decision: 'approve' | 'reject', reason?: string): Promise<{ state: string; message: string }> {
    const chatId = this.store.state?.chatId;
    if (!chatId) {
      return { state: 'error', message: this._trans.__('No chat is open.') };
    }
    const model = this._usableModel();
    if (!model) {
      return { state: 'error', message: this._trans.__('Configure a model first: approving runs the plan.') };
    }
    try {
      return await this._connection.request('plan/resolve', { chatId, planId, decision, model, ...(reason ? { reason } : {}) });
    } catch (error) {
      return { state: 'error', message: error instanceof Error ? error.message : String(error) };
    }
  }

  /**
   * "Review changes" (MODE-4): the companion starts a new chat in Review mode over the
   * workspace's git diff (or a notebook) and runs its first turn with the configured model;
   * the pane then opens that chat. False when it could not start (the user was told why).
   */
  async startReview(scope: ReviewScope): Promise<boolean> {
    const model = this._usableModel();
    if (!model) {
      return false;
    }
    try {
      const { chatId } = await this._connection.request('review/start', { scope, model });
      await this.openChat(chatId);
      return true;
    } catch (error) {
      this._fail(this._trans.__('Could not start the review'), error);
      return false;
    }
  }

  /**
   * The person approves a finding of the open chat's review (its Approve button): a peer
   * approval. A refusal (the person wrote it, unknown finding) comes back as `state: 'error'`.
   */
  async approveReviewNode(nodeId: string): Promise<{ state: string; message: string }> {
    const chatId = this.store.state?.chatId;
    if (!chatId) {
      return { state: 'error', message: this._trans.__('No chat is open.') };
    }
    try {
      return await this._connection.request('review/approve', { chatId, nodeId });
    } catch (error) {
      return { state: 'error', message: error instanceof Error ? error.message : String(error) };
    }
  }

  /**
   * Writes a `notebook_verify` run's kept outputs into one notebook of the open chat (the
   * verify card's "Accept new outputs"). A refusal (the run's copy is gone, the cells were
   * edited since) comes back as `state: 'error'` for the card to show.
   */
  async acceptVerifyOutputs(runId: string, path: string): Promise<{ state: string; message: string }> {
    const chatId = this.store.state?.chatId;
    if (!chatId) {
      return { state: 'error', message: this._trans.__('No chat is open.') };
    }
    try {
      return await this._connection.request('verify/accept', { chatId, runId, path });
    } catch (error) {
      return { state: 'error', message: error instanceof Error ? error.message : String(error) };
    }
  }

  /**
   * Approves or rejects a pending orchestration of the open chat (its card, MODE-5). Only
   * this pane's connection (a person's: `interactive` in hello) can; approving runs the
   * tasks with the configured model, so it needs one like sending does. A refusal comes back
   * as `state: 'error'` for the card to show.
   */
  async resolveOrchestration(orchestrationId: string, decision: 'approve' | 'reject', reason?: string): Promise<{ state: string; message: string }> {
    const chatId = this.store.state?.chatId;
    if (!chatId) {
      return { state: 'error', message: this._trans.__('No chat is open.') };
    }
    const model = this._usableModel();
    if (!model) {
      return { state: 'error', message: this._trans.__('Configure a model first: approving runs the tasks.') };
    }
    try {
      return await this._connection.request('orchestration/resolve', { chatId, orchestrationId, decision, model, ...(reason ? { reason } : {}) });
    } catch (error) {
      return { state: 'error', message: error instanceof Error ? error.message : String(error) };
    }
  }

  /** Ends the open chat's debug session `sessionId` (the debug card's Terminate); true when it ended. */
  async terminateDebug(sessionId: string): Promise<boolean> {
    const chatId = this.store.state?.chatId;
    if (!chatId) {
      return false;
    }
    try {
      return (await this._connection.request('debug/terminate', { chatId, sessionId })).terminated;
    } catch (error) {
      this._fail(this._trans.__('Could not end the debug session'), error);
      throw error;
    }
  }

  /** Answers (or skips) a question card in the open chat; false when it failed. */
  async answer(questionId: string, answer: QuestionAnswer): Promise<boolean> {
    const chatId = this.store.state?.chatId;
    if (!chatId) {
      return false;
    }
    try {
      await this._connection.request('chat/answer', { chatId, questionId, answer });
      return true;
    } catch (error) {
      this._fail(this._trans.__('Could not answer the question'), error);
      return false;
    }
  }

  /** Per-tool metrics from the audit log (all chats, or one). */
  /** `@` completion candidates for the composer; none when not connected. */
  async complete(prefix: string): Promise<MentionCandidate[]> {
    const chatId = this.store.state?.chatId;
    try {
      const r = await this._connection.request('context/complete', chatId ? { chatId, prefix } : { prefix });
      return Array.isArray(r?.items) ? r.items : [];
    } catch {
      return [];
    }
  }

  metrics(chatId?: string): Promise<ToolMetrics> {
    return this._connection.request('audit/metrics', chatId ? { chatId } : {});
  }

  /** Kills a worker of the open chat (the workers list's Kill). */
  killWorker(workerId: string): Promise<{ killed: boolean; message: string }> {
    return this._connection.request('worker/kill', { chatId: this.workers.chatId ?? '', workerId });
  }

  /** A worker's transcript, read-only. */
  workerTranscript(workerId: string): Promise<{ worker: WorkerSummary; items: TranscriptItem[] }> {
    return this._connection.request('worker/get', { chatId: this.workers.chatId ?? '', workerId });
  }

  /**
   * The instruction files the open chat's next turn reads, for the focused notebook (SKILL-1);
   * none while disconnected.
   */
  async instructions(): Promise<InstructionFileInfo[]> {
    if (this.connectionStatus.state !== 'connected') {
      return [];
    }
    const chatId = this.store.state?.chatId;
    const notebookPath = this._context?.()?.notebookPath;
    try {
      const r = await this._connection.request('instructions/list', { ...(chatId ? { chatId } : {}), ...(notebookPath ? { notebookPath } : {}) });
      return r.files;
    } catch {
      return [];
    }
  }

  /** A line in the open transcript (a toast when no chat is open); never sent to the model. */
  notice(level: 'info' | 'error', text: string): void {
    if (this.store.state) {
      this.store.notice(level, text);
    } else {
      this._notify(level, text);
    }
  }

  /** The configured provider and model, for `/model`. */
  modelLabel(): string {
    return `${this._settings.provider} · ${this._settings.model || this._trans.__('(the provider’s default)')}`;
  }

  /** Changes the model setting (`/model NAME`); the next turn uses it. */
  async setModel(name: string): Promise<void> {
    if (!this._settingsObject) {
      this._notify('error', this._trans.__('The Cellmate settings are not available'));
      return;
    }
    try {
      await this._settingsObject.set('model', name);
      this.notice('info', this._trans.__('Model: %1', this.modelLabel()));
    } catch (error) {
      this._fail(this._trans.__('Could not change the model'), error);
    }
  }

  /** Exports the open chat to Markdown and a notebook in the workspace's `exports/` (`/export`). */
  async exportChat(): Promise<void> {
    const chatId = this.store.state?.chatId;
    if (!chatId) {
      this.notice('error', this._trans.__('There is no chat to export yet.'));
      return;
    }
    try {
      const r = await this._connection.request('chat/export', { chatId });
      const figures = r.files.length ? this._trans.__(' (%1 output files beside them)', r.files.length) : '';
      this.notice('info', this._trans.__('Exported to %1 and %2%3.', r.markdown, r.notebook, figures));
    } catch (error) {
      this._fail(this._trans.__('Could not export the chat'), error);
    }
  }

  /** Custom slash commands (`.cellmate/commands/*.md`, `~/.cellmate/commands/*.md`); none while disconnected. */
  async customCommands(): Promise<CustomCommandInfo[]> {
    if (this.connectionStatus.state !== 'connected') {
      return [];
    }
    return this._connection.request('commands/list', {});
  }

  /** The message a custom command sends. */
  async expandCommand(name: string, args: string): Promise<string> {
    return (await this._connection.request('commands/expand', { name, arguments: args })).text;
  }

  /** Installed skills with their source and state (SKILL-2/3). */
  skills(): Promise<SkillInfo[]> {
    return this._connection.request('skills/list', {});
  }

  /** Turns a skill on or off for the person; answers with the list afterwards. */
  setSkillEnabled(folder: string, enabled: boolean): Promise<SkillInfo[]> {
    return this._connection.request('skills/set-enabled', { folder, enabled });
  }

  /** The configured MCP servers and their state. */
  mcpServers(): Promise<McpServerStatus[]> {
    return this._connection.request('mcp/servers', {});
  }

  /**
   * Plays the offline demo (no API key, nothing written to the settings): a new chat whose
   * first turn makes a table and a plot in the notebook's kernel and proposes a cell for
   * the open notebook (opened first when there is none). Resolves once the turn started.
   */
  async useDemo(): Promise<boolean> {
    this._demo = true;
    this._changed.emit();
    try {
      await this._prepareDemo?.();
    } catch (error) {
      // The demo still shows the table and the plot without a notebook.
      console.warn('Cellmate: could not open a notebook for the demo', error);
    }
    await this.newChat();
    return this.send(this._trans.__('Show me what Cellmate can do'));
  }

  /** Ends the demo: the next turn uses the person's settings again. */
  leaveDemo(): void {
    if (!this._demo) {
      return;
    }
    this._demo = false;
    this._changed.emit();
  }

  /** Reconnects at once instead of waiting for the backoff. */
  reconnectNow(): void {
    this._connection.reconnectNow();
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._settingsObject?.changed.disconnect(this._onSettingsChanged, this);
    Signal.clearData(this);
  }

  // -------------------------------------------------------------------------------------

  private async _onConnected(_: CellmateConnection, hello: HelloResult): Promise<void> {
    this._providers = hello.providers as ProviderStatus[];
    void this.refreshModels();
    const reconnect = this._wasConnected;
    this._wasConnected = true;
    this._changed.emit();
    const generation = ++this._generation;
    if (this._wanted === NEW_CHAT) {
      this._wanted = null;
      try {
        const list: unknown = await this._connection.request('chat/list', {});
        this._chats = Array.isArray(list) ? sortChats(list) : [];
      } catch {
        // The list also arrives with chat/listChanged once the chat exists.
      }
      await this.newChat();
      return;
    }
    try {
      const list: unknown = await this._connection.request('chat/list', {});
      this._chats = Array.isArray(list) ? sortChats(list) : [];
      this._changed.emit();
      const wanted = this.store.state?.chatId ?? this._wanted;
      const target =
        (wanted && this._chats.find(c => c.id === wanted)?.id) || this._chats[0]?.id || null;
      if (!target) {
        if (this.store.state) {
          this.store.clear();
        }
        return;
      }
      const chat = await this._connection.request('chat/get', { chatId: target });
      if (generation !== this._generation) {
        return;
      }
      if (!this._load(chat)) {
        return;
      }
      if (reconnect) {
        this.store.notice('info', this._trans.__('Reconnected to the Cellmate server.'));
      }
      this._changed.emit();
    } catch (error) {
      if (error instanceof CellmateRequestError && error.code === ErrorCodes.ChatNotFound) {
        this.store.clear();
        return;
      }
      this._fail(this._trans.__('Could not load the chats'), error);
    }
  }

  private _onNotified(_: CellmateConnection, note: IncomingNotification): void {
    if (note.method === 'chat/event') {
      if (note.params.event.type === 'worker-updated') {
        this.workers.update(note.params.chatId, note.params.event.worker);
        return;
      }
      this.store.apply(note.params.chatId, note.params.event);
      return;
    }
    if (note.method !== 'chat/listChanged') {
      return; // inline completions listen for their own deltas
    }
    this._chats = sortChats(note.params.chats);
    const open = this.store.state;
    if (open) {
      const summary = this._chats.find(c => c.id === open.chatId);
      if (summary) {
        this.store.retitle(summary.title);
      } else {
        // The open chat was deleted (here or in another window).
        this.store.clear();
        this._wanted = null;
        void this._memory.save(null);
      }
    }
    this._changed.emit();
  }

  private _onStatus(_: CellmateConnection, status: IConnectionStatus): void {
    if (status.state === 'reconnecting' && this._wasConnected && !this._dropNoticed) {
      this._dropNoticed = true;
      this.store.notice(
        'warning',
        this._trans.__('Lost the connection to the Cellmate server (%1). Reconnecting…', status.reason ?? '')
      );
    }
    if (status.state === 'connected') {
      this._dropNoticed = false;
    }
    this._changed.emit();
  }

  private _onProblem(_: CellmateConnection, message: string): void {
    this.store.notice('warning', this._trans.__('Ignored a message from the server: %1', message));
    const now = Date.now();
    // One toast per burst: a misbehaving server should not bury the page in toasts.
    if (now - this._lastProblemToast > 10_000) {
      this._lastProblemToast = now;
      this._notify('warning', this._trans.__('Cellmate received a malformed message; see the pane.'));
    }
  }

  private _onSettingsChanged(settings: ISettingRegistry.ISettings): void {
    this._settings = readSettings(settings.composite as Record<string, unknown>);
    this._changed.emit();
    void this._refreshProviders();
    void this.refreshModels();
  }

  /** Asks the server again which keys it has (the user may have just picked a provider). */
  private async _refreshProviders(): Promise<void> {
    if (this._connection.status.state !== 'connected') {
      return;
    }
    try {
      const providers: unknown = await this._connection.request('config/providers', {});
      if (Array.isArray(providers)) {
        this._providers = providers as ProviderStatus[];
        this._changed.emit();
      }
    } catch {
      // The list from hello stays; the banner may be stale until the next reconnect.
    }
  }

  /** Loads the workers list of a chat (none for null). */
  private async _loadWorkers(chatId: string | null): Promise<void> {
    this.workers.reset(chatId);
    if (!chatId || this._connection.status.state !== 'connected') {
      return;
    }
    try {
      const list: unknown = await this._connection.request('worker/list', { chatId });
      if (this.workers.chatId === chatId && Array.isArray(list)) {
        this.workers.reset(chatId, list.filter(isWorkerSummary));
      }
    } catch {
      // An older companion without workers: the list stays empty.
    }
  }

  /** Opens a chat snapshot; false (and a notice) when it is not a chat. */
  private _load(value: unknown): boolean {
    const checked = sanitizeChat(value);
    if (!checked) {
      this._onProblem(this._connection, 'the server sent a chat the pane cannot read');
      return false;
    }
    // Reopening the same chat (a reconnect) refreshes its workers; another chat loads them on the switch.
    const sameChat = this.workers.chatId === checked.chat.id;
    this.store.load(checked.chat);
    if (sameChat) {
      void this._loadWorkers(checked.chat.id);
    }
    this._wanted = checked.chat.id;
    void this._memory.save(checked.chat.id);
    if (checked.dropped) {
      this.store.notice(
        'warning',
        this._trans._n(
          '%1 transcript item of an unknown kind is not shown (is the pane older than the server?).',
          '%1 transcript items of an unknown kind are not shown (is the pane older than the server?).',
          checked.dropped
        )
      );
    }
    this._changed.emit();
    return true;
  }

  private _addChat(chat: ChatSummary): void {
    if (!this._chats.some(c => c.id === chat.id)) {
      const { id, title, mode, createdAt, updatedAt } = chat;
      this._chats = sortChats([{ id, title, mode, createdAt, updatedAt }, ...this._chats]);
    }
  }

  private _setSending(sending: boolean): void {
    this._sending = sending;
    this._changed.emit();
  }

  private _fail(what: string, error: unknown): void {
    const detail = error instanceof Error ? error.message : String(error);
    const text = `${what}: ${detail}`;
    this.store.notice('error', text);
    this._notify('error', text);
  }

  private readonly _context: (() => SendContext | undefined) | undefined;
  private readonly _connection: CellmateConnection;
  private readonly _memory: IChatMemory;
  private readonly _notify: Notify;
  private readonly _trans: TranslationBundle;
  private readonly _settingsObject: ISettingRegistry.ISettings | null;
  private _settings: ICellmateSettings = DEFAULT_SETTINGS;
  private _demo = false;
  private readonly _prepareDemo: (() => Promise<void>) | undefined;
  private _providers: ProviderStatus[] | null = null;
  private _chats: ChatSummary[] = [];
  /** The chat to open on (re)connect: an id, {@link NEW_CHAT}, or null for the latest. */
  private _wanted: string | null = null;
  private _generation = 0;
  private _sending = false;
  private _compacting = false;
  private _draftMode: ChatMode = 'chat';
  private _draftAuto = false;
  private _draftModel: TierModel | null = null;
  private _models: ModelOption[] = [];
  private _loadingOlder = false;
  private _wasConnected = false;
  private _dropNoticed = false;
  private _lastProblemToast = 0;
  private _disposed = false;
  private readonly _changed = new Signal<this, void>(this);
}

export namespace CellmateController {
  export interface IOptions {
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
}
