/**
 * What the pane does: opens chats, sends messages, aborts turns, follows the server's
 * events, and recovers the open chat after every reconnect. Widgets only render it.
 *
 * `CellmateController` is the one object widgets hold; each of its methods hands over to
 * the part that owns the concern (`controller/`: chats, history, cards, modes, models,
 * lookups, the session that follows the connection), all sharing one `PaneState`.
 */
import type {
  CellAssist,
  ChatMode,
  ChatSummary,
  CustomCommandInfo,
  InstructionFileInfo,
  McpServerStatus,
  MentionCandidate,
  ModelOption,
  ModelSettings,
  QuestionAnswer,
  ReviewScope,
  RewindPreview,
  RewindResult,
  SendContext,
  SkillInfo,
  TierModel,
  ToolMetrics,
  TranscriptItem,
  WorkerSummary
} from '@cellmate/protocol';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import type { IConnectionStatus } from './connection';
import { CardActions, ICardAnswer } from './controller/cards';
import { ChatActions } from './controller/chats';
import { HistoryActions } from './controller/history';
import { Lookups } from './controller/lookups';
import { ModeActions } from './controller/modes';
import { ModelActions } from './controller/models';
import { IPaneOptions, Notify, PaneState } from './controller/pane-state';
import { PaneSession } from './controller/session';
import type { ChatsModel } from './model';
import type { ICellmateSettings, ISetupProblem } from './settings';
import type { WorkersModel } from './workers';

export type { ICardAnswer, Notify };

/** Drives one pane: the widgets' one handle on chats, cards, modes and the connection. */
export class CellmateController implements IDisposable {
  /** The open chat (null state = none yet; one is created on the first send). */
  readonly store: ChatsModel;
  /** The open chat's background workers. */
  readonly workers: WorkersModel;

  constructor(options: CellmateController.IOptions) {
    const pane = new PaneState(options, () => this._changed.emit());
    this._pane = pane;
    this.store = pane.store;
    this.workers = pane.workers;
    this._chats = new ChatActions(pane);
    this._history = new HistoryActions(pane);
    this._cards = new CardActions(pane);
    this._modes = new ModeActions(pane);
    this._models = new ModelActions(pane);
    this._lookups = new Lookups(pane);
    this._session = new PaneSession(pane, this._chats, this._models);
  }

  /** Emitted when anything outside the transcript items changes. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get connectionStatus(): IConnectionStatus {
    return this._pane.connection.status;
  }

  /** Chats for the selector, most recent first. */
  get chats(): readonly ChatSummary[] {
    return this._pane.chats;
  }

  get settings(): ICellmateSettings {
    return this._pane.settings;
  }

  /** What keeps a turn from running, or null when the pane is ready. */
  get setup(): ISetupProblem | null {
    return this._pane.setup;
  }

  /**
   * True while the pane plays the offline demo: its turns run on the scripted provider's
   * built-in demo while the person's settings stay exactly as they were (nothing is
   * written); {@link leaveDemo} is the way back.
   */
  get demo(): boolean {
    return this._pane.demo;
  }

  /** True while a `chat/send` (or the chat it creates) is in flight. */
  get sending(): boolean {
    return this._pane.sending;
  }

  /** True while the open chat runs a turn. */
  get running(): boolean {
    return this._pane.running;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  // The session: start, reconnect.

  /** Restores the last chat id and connects. */
  start(): Promise<void> {
    return this._session.start();
  }

  /** Reconnects at once instead of waiting for the backoff. */
  reconnectNow(): void {
    this._pane.connection.reconnectNow();
  }

  // Chats (`controller/chats.ts`).

  /** True while an older page of the transcript is being fetched. */
  get loadingOlder(): boolean {
    return this._chats.loadingOlder;
  }

  /** Fetches the page of transcript items before the oldest one shown. */
  loadOlder(): Promise<void> {
    return this._chats.loadOlder();
  }

  /** Opens a chat by id (from the selector). */
  openChat(chatId: string): Promise<void> {
    return this._chats.openChat(chatId);
  }

  /** Creates a chat and opens it (on connect, when asked for while connecting). */
  newChat(): Promise<void> {
    return this._chats.newChat();
  }

  /** Sends a user message, creating a chat first when none is open; true once the turn started. */
  send(text: string, contextOverride?: SendContext): Promise<boolean> {
    return this._chats.send(text, contextOverride);
  }

  /** "Fix with Cellmate" / "Explain" on a notebook cell; true once the turn started. */
  assistCell(assist: CellAssist, notebookPath: string, error: string): Promise<boolean> {
    return this._chats.assistCell(assist, notebookPath, error);
  }

  /** Runs the open chat's last turn again, or with its user message replaced by `text`. */
  retry(text?: string): Promise<boolean> {
    return this._chats.retry(text);
  }

  /** Stops the open chat's running turn. */
  abort(): Promise<void> {
    return this._chats.abort();
  }

  /** Renames a chat; false when it failed (the user was told). */
  rename(chatId: string, title: string): Promise<boolean> {
    return this._chats.rename(chatId, title);
  }

  /** Deletes a chat; the next most recent one opens when it was the open one. */
  deleteChat(chatId: string): Promise<boolean> {
    return this._chats.deleteChat(chatId);
  }

  /** "Review changes" (MODE-4): a new Review chat over `scope`, opened once it started. */
  startReview(scope: ReviewScope): Promise<boolean> {
    return this._chats.startReview(scope);
  }

  /** Plays the offline demo (nothing written to the settings); true once its turn started. */
  useDemo(): Promise<boolean> {
    return this._chats.useDemo();
  }

  /** Ends the demo: the next turn uses the person's settings again. */
  leaveDemo(): void {
    this._chats.leaveDemo();
  }

  /** A line in the open transcript (a toast when no chat is open); never sent to the model. */
  notice(level: 'info' | 'error', text: string): void {
    this._pane.notice(level, text);
  }

  // The open chat's past (`controller/history.ts`).

  /** True while a `chat/compact` of the open chat is in flight. */
  get compacting(): boolean {
    return this._history.compacting;
  }

  /** Whether Compact can run now. */
  get canCompact(): boolean {
    return this._history.canCompact;
  }

  /** Compacts what the open chat sends the model (CTX-3); null when it did not run. */
  compact(): Promise<{ compacted: boolean; message: string } | null> {
    return this._history.compact();
  }

  /** The open chat's turns that changed files or notebooks (none while a turn runs). */
  checkpoints(): Promise<string[]> {
    return this._history.checkpoints();
  }

  /** What undoing a turn (`turn`) or rewinding to a message (`from`) would restore. */
  rewindPreview(itemId: string, scope: 'turn' | 'from'): Promise<RewindPreview> {
    return this._history.rewindPreview(itemId, scope);
  }

  /** Restores the checkpoint(s); with `conversation`, the messages from `itemId` on go too. */
  rewind(
    itemId: string,
    scope: 'turn' | 'from',
    options: { overwrite: boolean; conversation: boolean }
  ): Promise<RewindResult> {
    return this._history.rewind(itemId, scope, options);
  }

  /** Exports the open chat to Markdown and a notebook (`/export`). */
  exportChat(): Promise<void> {
    return this._history.exportChat();
  }

  // Cards (`controller/cards.ts`): a refusal comes back as `state: 'error'` for the card.

  /** Accepts or discards a staged edit of the open chat (its diff card). */
  resolveEdit(editId: string, action: 'accept' | 'discard'): Promise<ICardAnswer> {
    return this._cards.resolveEdit(editId, action);
  }

  /** Approves or rejects a pending plan of the open chat (MODE-3). */
  resolvePlan(planId: string, decision: 'approve' | 'reject', reason?: string): Promise<ICardAnswer> {
    return this._cards.resolvePlan(planId, decision, reason);
  }

  /** Approves a finding of the open chat's review. */
  approveReviewNode(nodeId: string): Promise<ICardAnswer> {
    return this._cards.approveReviewNode(nodeId);
  }

  /** Writes a `notebook_verify` run's kept outputs into one notebook of the open chat. */
  acceptVerifyOutputs(runId: string, path: string): Promise<ICardAnswer> {
    return this._cards.acceptVerifyOutputs(runId, path);
  }

  /** Approves or rejects a pending orchestration of the open chat (MODE-5). */
  resolveOrchestration(orchestrationId: string, decision: 'approve' | 'reject', reason?: string): Promise<ICardAnswer> {
    return this._cards.resolveOrchestration(orchestrationId, decision, reason);
  }

  /** Answers (or skips) a question card in the open chat; false when it failed. */
  answer(questionId: string, answer: QuestionAnswer): Promise<boolean> {
    return this._cards.answer(questionId, answer);
  }

  /** Ends the open chat's debug session (the debug card's Terminate); true when it ended. */
  terminateDebug(sessionId: string): Promise<boolean> {
    return this._cards.terminateDebug(sessionId);
  }

  // Mode and Auto (`controller/modes.ts`).

  /** The mode the composer shows (MODE-1/8). */
  get mode(): ChatMode {
    return this._modes.mode;
  }

  /** Switches the open chat's mode (or the next chat's); false when it failed. */
  setMode(mode: ChatMode): Promise<boolean> {
    return this._modes.setMode(mode);
  }

  /** Shift+Tab (MODE-8): the next mode a person may pick. */
  cycleMode(): Promise<boolean> {
    return this._modes.cycleMode();
  }

  /** Whether Auto approval is on (SIDE-1). */
  get auto(): boolean {
    return this._modes.auto;
  }

  /** Switches Auto approval for the open chat (or the next chat); false when it failed. */
  setAuto(auto: boolean): Promise<boolean> {
    return this._modes.setAuto(auto);
  }

  // Models (`controller/models.ts`).

  /** The models the header's picker offers. */
  get models(): readonly ModelOption[] {
    return this._models.models;
  }

  /** The model the open chat's turns run with (null: none configured). */
  get chatModel(): TierModel | null {
    return this._models.chatModel;
  }

  /** Whether the open chat follows the settings' main tier. */
  get followsSettings(): boolean {
    return this._models.followsSettings;
  }

  /** Asks the server which models the configured tiers offer. */
  refreshModels(): Promise<void> {
    return this._models.refreshModels();
  }

  /** Picks the open chat's model (`null`: follow the settings); false when it failed. */
  setChatModel(choice: TierModel | null): Promise<boolean> {
    return this._models.setChatModel(choice);
  }

  /** The configured provider and model, for `/model`. */
  modelLabel(): string {
    return this._models.modelLabel();
  }

  /** Changes the model setting (`/model NAME`). */
  setModel(name: string): Promise<void> {
    return this._models.setModel(name);
  }

  /** Whether inline completions are on. */
  get inlineCompletions(): boolean {
    return this._models.inlineCompletions;
  }

  /** Turns inline completions on or off in the settings. */
  setInlineCompletions(on: boolean): Promise<void> {
    return this._models.setInlineCompletions(on);
  }

  /** The model settings an inline completion sends (null: none configured). */
  inlineModel(): ModelSettings | null {
    return this._models.inlineModel();
  }

  // Lookups (`controller/lookups.ts`).

  /** `@` completion candidates for the composer; none when not connected. */
  complete(prefix: string): Promise<MentionCandidate[]> {
    return this._lookups.complete(prefix);
  }

  /** The instruction files the open chat's next turn reads (SKILL-1). */
  instructions(): Promise<InstructionFileInfo[]> {
    return this._lookups.instructions();
  }

  /** Custom slash commands; none while disconnected. */
  customCommands(): Promise<CustomCommandInfo[]> {
    return this._lookups.customCommands();
  }

  /** The message a custom command sends. */
  expandCommand(name: string, args: string): Promise<string> {
    return this._lookups.expandCommand(name, args);
  }

  /** Installed skills with their source and state (SKILL-2/3). */
  skills(): Promise<SkillInfo[]> {
    return this._lookups.skills();
  }

  /** Turns a skill on or off for the person; answers with the list afterwards. */
  setSkillEnabled(folder: string, enabled: boolean): Promise<SkillInfo[]> {
    return this._lookups.setSkillEnabled(folder, enabled);
  }

  /** The configured MCP servers and their state. */
  mcpServers(): Promise<McpServerStatus[]> {
    return this._lookups.mcpServers();
  }

  /** What is wrong with the MCP config files, one sentence each. */
  mcpConfigProblems(): Promise<string[]> {
    return this._lookups.mcpConfigProblems();
  }

  /** Per-tool metrics from the audit log (all chats, or one). */
  metrics(chatId?: string): Promise<ToolMetrics> {
    return this._lookups.metrics(chatId);
  }

  /** Kills a worker of the open chat (the workers list's Kill). */
  killWorker(workerId: string): Promise<{ killed: boolean; message: string }> {
    return this._lookups.killWorker(workerId);
  }

  /** A worker's transcript, read-only. */
  workerTranscript(workerId: string): Promise<{ worker: WorkerSummary; items: TranscriptItem[] }> {
    return this._lookups.workerTranscript(workerId);
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._session.dispose();
    Signal.clearData(this);
  }

  private readonly _pane: PaneState;
  private readonly _chats: ChatActions;
  private readonly _history: HistoryActions;
  private readonly _cards: CardActions;
  private readonly _modes: ModeActions;
  private readonly _models: ModelActions;
  private readonly _lookups: Lookups;
  private readonly _session: PaneSession;
  private _disposed = false;
  private readonly _changed = new Signal<this, void>(this);
}

export namespace CellmateController {
  export type IOptions = IPaneOptions;
}
