import type {
  Chat,
  ChatEvent,
  ChatMode,
  ChatItemsPage,
  ChatSummary,
  CheckpointSummary,
  MentionCandidate,
  ModelOption,
  ModelSettings,
  ProviderStatus,
  RewindParams,
  RewindPreview,
  RewindResult,
  SendContext,
  TierModel,
  UserItem
} from '@cellmate/protocol';
import type { LanguageModel } from 'ai';
import { Emitter, type Event } from 'vscode-jsonrpc/node.js';
import { isNudgeMessage, runTurn, type TurnResult } from '../agent/run-turn.js';
import { buildSystemPrompt } from '../agent/system-prompt.js';
import { InstructionsReader, type Instructions } from '../instructions/instructions.js';
import type { SkillLibrary } from '../skills/skill-library.js';
import { fixedTokens, type ContextManager } from '../agent/context-manager.js';
import { createRunContext, fastTierModel, type RunModels } from '../agent/run-context.js';
import { createSidecarClassifier } from '../agent/sidecar-classifier.js';
import { skillCatalog, turnSurface } from '../modes/turn-surface.js';
import { EXPLAIN_PROFILE, profileOf, type ModeProfile } from '../modes/profiles.js';
import { loadConfigFile } from '../config/config-file.js';
import type { Logger } from '../config/logger.js';
import { chatNotFound, nothingToRetry, turnRunning } from '../base/errors.js';
import { newChatId, newItemId, newTurnId } from '../base/ids.js';
import { createLanguageModel } from '../providers/create-model.js';
import { providerStatuses, resolveApiKey } from '../providers/credentials.js';
import { listModels } from '../providers/model-list.js';
import { applyChatModel, checkChoice, modelForTier, sameModel } from '../providers/tiers.js';
import type { Redactor } from '../security/redaction.js';
import type { ToolRegistry } from '../gate/registry.js';
import { summarize, type ChatRecord } from './chat-file.js';
import { exportStem, renderExport } from './chat-export.js';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ChatStore } from './chat-store.js';
import { previewRewind, rewindChat, type RewindChat } from './chat-rewind.js';
import type { CheckpointStore } from '../checkpoints/checkpoint-store.js';
import type { NotebookPort } from '../notebooks/pane-hub.js';
import { DEFAULT_CHAT_TITLE, titleFromMessage } from './title.js';

/** A chat event with the chat it belongs to (the `chat/event` notification's params). */
export interface ChatEventEnvelope {
  chatId: string;
  event: ChatEvent;
}

/** Options of {@link ChatService}. */
export interface ChatServiceOptions {
  workspace: string;
  store: ChatStore;
  registry: ToolRegistry;
  logger: Logger;
  env: NodeJS.ProcessEnv;
  maxSteps?: number;
  streamIdleTimeoutMs?: number;
  maxRetries?: number;
  /** Custom fetch for providers (tests). */
  fetch?: typeof globalThis.fetch;
  /** Known secret values, hidden in what the model's turn sees (absent in bare tests). */
  redactor?: Pick<Redactor, 'redact' | 'addConfig'>;
  /** Which connection a chat's turn runs for, so its evals use that window's notebook (EVAL-2). */
  turnFocus?: TurnFocus;
  /**
   * Expands `@` mentions and the pane's notebook context into the text the model receives
   * (`modelText`); `note` is the transcript's short "context attached" line.
   */
  expandContext?: (
    chatId: string,
    text: string,
    context: SendContext | undefined,
    origin: string | undefined
  ) => Promise<{ modelText: string; note?: string } | undefined>;
  /** `@` completion (`context/complete`); `origin` is the asking connection. */
  completeMention?: (
    chatId: string | undefined,
    prefix: string,
    origin: string | undefined
  ) => Promise<MentionCandidate[]>;
  /** The live state of the kernel(s) a chat used, for a compaction summary (CTX-3). */
  kernelState?: (chatId: string, signal: AbortSignal) => Promise<string | undefined>;
  /** Installed skills (SKILL-2): their catalog enters the prompt, `skill` loads one. */
  skills?: SkillLibrary;
  /** Called once a chat is deleted (its audit log, saved outputs and kernels go with it). */
  onDeleted?: (chatId: string) => void | Promise<void>;
  /** What each turn's writes replaced (the registry records them), for undo and rewind. */
  checkpoints?: CheckpointStore;
  /**
   * What is wrong with the person's settings files right now (a malformed policy or MCP
   * config), one actionable sentence each: a turn shows each as a warning in its chat once.
   */
  setupProblems?: () => Promise<readonly string[]>;
  /** Open notebooks a rewind restores through (the pane's shared model). */
  notebookPort?: NotebookPort;
}

/**
 * Which connection (an opaque key) each chat's turn runs for, so the turn's evals use the
 * notebook focused in that window (SPEC EVAL-2, `server/src/kernels/kernel-focus.ts`).
 */
export interface TurnFocus {
  bindTurn(chatId: string, connection: string): void;
}

/** A turn to start: {@link ChatService.send}. */
export interface SendRequest {
  chatId: string;
  /** The person's message as the transcript shows it. */
  text: string;
  /** The pane's model settings; the chat's own model, when the person picked one, replaces the main tier. */
  settings: ModelSettings;
  /** The notebook in focus and its selected cells (or a Fix/Explain); absent: the chat keeps its last focus. */
  context?: SendContext;
  /** The connection that asked: the turn's evals use that window's focused notebook. */
  origin?: string;
}

/** The last turn to run again: {@link ChatService.retry}. */
export interface RetryRequest {
  chatId: string;
  settings: ModelSettings;
  /** The edited message (`chat/edit`); absent: the last user message as it was (`chat/retry`). */
  text?: string;
  origin?: string;
}

/** Where `/export` writes, relative to the workspace. */
export const EXPORT_DIR = 'exports';

interface RunningTurn {
  turnId: string;
  controller: AbortController;
  done: Promise<TurnResult>;
}

/**
 * The chats and their turns: what the JSON-RPC handlers call. Events go to every
 * listener (all connections); a turn keeps running when the client that started it leaves.
 */
export class ChatService {
  private readonly running = new Map<string, RunningTurn>();
  private readonly eventEmitter = new Emitter<ChatEventEnvelope>();
  private readonly listEmitter = new Emitter<ChatSummary[]>();
  private disposed = false;
  private readonly instructionsReader: InstructionsReader;
  /** The file or notebook each chat's last send had in focus (instructions of its folders apply). */
  private readonly focus = new Map<string, string>();
  /** The setup problems each chat has been shown (see {@link ChatServiceOptions.setupProblems}). */
  private readonly shownProblems = new Map<string, Set<string>>();

  /** Every transcript event of every chat, in order. */
  readonly onEvent: Event<ChatEventEnvelope> = this.eventEmitter.event;
  /** The chat list changed (created, renamed, deleted, retitled, touched). */
  readonly onListChanged: Event<ChatSummary[]> = this.listEmitter.event;

  constructor(private readonly options: ChatServiceOptions) {
    this.instructionsReader = new InstructionsReader({ workspace: options.workspace, env: options.env });
  }

  /**
   * The instruction files in effect for a chat (its last focus) or for `focusPath` (the
   * pane's header chip); read again when a file changed.
   */
  instructions(chatId?: string, focusPath?: string): Instructions {
    return this.instructionsReader.read(focusPath ?? (chatId !== undefined ? this.focus.get(chatId) : undefined));
  }

  /**
   * A chat's turn surface and system prompt: the mode's surface (without `skill` while no
   * skill is offered), its prompt, the skill catalog (`skillCatalog`), then the instructions
   * of its focus.
   */
  private turnPrompt(
    chatId: string,
    mode: ChatMode | ModeProfile
  ): { surface: ReturnType<typeof turnSurface>; system: string } {
    const skills = skillCatalog(
      this.options.registry,
      typeof mode === 'string' ? profileOf(mode) : mode,
      this.options.skills?.catalogBlock()
    );
    const surface = turnSurface(this.options.registry, mode, skills.hide);
    const system = buildSystemPrompt({
      workspace: this.options.workspace,
      tools: surface.declared,
      modeBlock: surface.promptBlock,
      ...(skills.block ? { skillsBlock: skills.block } : {}),
      instructionsBlock: this.instructions(chatId).block
    });
    return { surface, system };
  }

  /** `@` completion candidates; none without a context service. */
  completeMention(chatId: string | undefined, prefix: string, origin?: string): Promise<MentionCandidate[]> {
    return this.options.completeMention?.(chatId, prefix, origin) ?? Promise.resolve([]);
  }

  /** Adds an event to a chat from outside a turn's loop (question cards). */
  publish(chatId: string, event: ChatEvent): void {
    this.emit(chatId, event);
  }

  /** Provider statuses (never keys). */
  async providers(signal?: AbortSignal): Promise<ProviderStatus[]> {
    return providerStatuses(this.options.env, await loadConfigFile(this.options.env, signal));
  }

  /** Summaries, most recently updated first. */
  list(): ChatSummary[] {
    return this.options.store
      .summaries()
      .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || a.id.localeCompare(b.id));
  }

  /** A new empty chat. */
  create(title?: string): Chat {
    const now = new Date().toISOString();
    const explicit = title?.trim();
    const record: ChatRecord = {
      chat: {
        id: newChatId(),
        title: explicit || DEFAULT_CHAT_TITLE,
        mode: 'agent',
        createdAt: now,
        updatedAt: now,
        items: [],
        running: false
      },
      titleSource: explicit ? 'user' : 'default',
      messages: []
    };
    this.options.store.create(record);
    this.listChanged();
    return structuredClone(record.chat);
  }

  /**
   * A chat with its latest `limit` items (all without a limit); `olderCount` says how
   * many come before them ({@link olderItems} pages back).
   */
  get(chatId: string, limit?: number): Chat {
    const { chat } = this.record(chatId);
    const { items, olderCount } = this.options.store.page(chatId, limit ?? chat.items.length);
    return {
      id: chat.id,
      title: chat.title,
      mode: chat.mode,
      ...(chat.auto !== undefined ? { auto: chat.auto } : {}),
      createdAt: chat.createdAt,
      updatedAt: chat.updatedAt,
      running: chat.running,
      items,
      olderCount,
      ...(chat.context ? { context: structuredClone(chat.context) } : {}),
      ...(chat.model ? { model: structuredClone(chat.model) } : {})
    };
  }

  /**
   * Up to `limit` items right before the item `before` (the pane scrolled back).
   * @throws CellmateError ChatNotFound or ItemNotFound
   */
  olderItems(chatId: string, before: string, limit: number): ChatItemsPage {
    this.record(chatId);
    return this.options.store.page(chatId, limit, before);
  }

  /** Renames a chat; a user title is never replaced by the first message. */
  rename(chatId: string, title: string): ChatSummary {
    const record = this.record(chatId);
    this.options.store.setTitle(chatId, title.trim() || DEFAULT_CHAT_TITLE, 'user');
    this.listChanged();
    return summarize(record.chat);
  }

  /**
   * Switches a chat's mode (MODE-1): journaled with the chat and shown to every pane
   * (`mode-changed`); a running turn keeps its profile, the next turn uses the new one.
   * Which modes a person may pick is the RPC's check (`SELECTABLE_MODES`); the system sets
   * any (plan approval returns to `agent`).
   * @throws CellmateError ChatNotFound
   */
  setMode(chatId: string, mode: ChatMode): ChatSummary {
    const record = this.record(chatId);
    profileOf(mode); // RangeError for a mode that does not exist
    if (record.chat.mode !== mode) {
      this.emit(chatId, { type: 'mode-changed', mode });
      this.listChanged();
    }
    return summarize(this.record(chatId).chat);
  }

  /**
   * Switches Auto approval (SIDE-1): journaled with the chat and shown to every pane
   * (`auto-changed`). A running turn reads it at each call that would ask, so switching it
   * off stops the reviewer at once.
   * @throws CellmateError ChatNotFound
   */
  setAuto(chatId: string, auto: boolean): ChatSummary {
    const record = this.record(chatId);
    if ((record.chat.auto ?? false) !== auto) {
      this.emit(chatId, { type: 'auto-changed', auto });
      this.listChanged();
    }
    return summarize(this.record(chatId).chat);
  }

  /**
   * Picks the model a chat's turns run with (the header's picker), journaled with the chat
   * and shown to every pane (`model-changed`); the next request uses it. `null`, or the
   * settings' own main model, goes back to following the settings.
   * @throws CellmateError ChatNotFound, or ProviderUnavailable for a choice the settings cannot run
   */
  setModel(chatId: string, choice: TierModel | null, settings: ModelSettings): { model: TierModel | null } {
    const record = this.record(chatId);
    let next: TierModel | null = null;
    if (choice && !sameModel(choice, modelForTier(settings, 'main'))) {
      checkChoice(choice, settings);
      next = {
        provider: choice.provider,
        model: choice.model.trim(),
        ...(choice.provider === 'openai-compatible' && choice.baseUrl
          ? { baseUrl: choice.baseUrl.trim().replace(/\/+$/, '') }
          : {})
      };
    }
    const current = record.chat.model ?? null;
    if (current === null ? next !== null : next === null || !sameModel(current, next))
      this.emit(chatId, { type: 'model-changed', model: next });
    return { model: next };
  }

  /** The models the picker offers for the tiers `settings` configures (`models/list`). */
  async models(settings: ModelSettings): Promise<ModelOption[]> {
    const config = await loadConfigFile(this.options.env);
    return listModels(settings, {
      env: this.options.env,
      config,
      ...(this.options.fetch ? { fetch: this.options.fetch } : {})
    });
  }

  /** Deletes a chat (aborting its turn first). */
  async delete(chatId: string): Promise<boolean> {
    const turn = this.running.get(chatId);
    if (turn) {
      turn.controller.abort();
      await turn.done;
    }
    const deleted = await this.options.store.delete(chatId);
    this.focus.delete(chatId);
    if (deleted) {
      this.listChanged();
      await Promise.resolve(this.options.onDeleted?.(chatId)).catch((error: unknown) =>
        this.options.logger.warn(`cleaning up after chat ${chatId}: ${String(error)}`)
      );
    }
    return deleted;
  }

  /**
   * Starts a turn and returns its id at once; progress arrives through `onEvent`.
   * @throws CellmateError ChatNotFound, TurnRunning or ProviderUnavailable
   */
  send(request: SendRequest): Promise<{ turnId: string }> {
    return this.startTurn(request);
  }

  /** {@link send}, with `prepare` run on the chat's record once the turn is sure to start (retry trims the old turn there). */
  private async startTurn(request: SendRequest, prepare?: (record: ChatRecord) => void): Promise<{ turnId: string }> {
    const { chatId, text, settings: tierSettings, context, origin } = request;
    let record = this.record(chatId);
    if (this.running.has(chatId)) throw turnRunning(chatId);
    // The chat's own model, when the person picked one, runs its turns; the fast tier stays the settings'.
    const settings = applyChatModel(tierSettings, record.chat.model);
    const config = await loadConfigFile(this.options.env);
    this.options.redactor?.addConfig(config); // keys added to the file since the start
    const model = await createLanguageModel(settings, {
      env: this.options.env,
      config,
      workspace: this.options.workspace,
      fetch: this.options.fetch
    });
    // `@` mentions and the pane's notebook context become a summary block for the model.
    const expanded = this.options.expandContext
      ? await this.options.expandContext(chatId, text, context, origin).catch(() => undefined)
      : undefined;
    // A broken settings file never stops a turn: it is reported, not thrown.
    const problems = (await this.options.setupProblems?.().catch(() => undefined)) ?? [];
    if (this.running.has(chatId)) throw turnRunning(chatId); // a concurrent send won the race during the await
    // The store may have dropped an idle chat from memory during the awaits: use its current record.
    record = this.record(chatId);
    if (origin !== undefined) this.options.turnFocus?.bindTurn(chatId, origin);
    if (context?.notebookPath) this.focus.set(chatId, context.notebookPath);
    else if (context) this.focus.delete(chatId); // the pane said: no notebook in focus now
    prepare?.(record);
    const secrets = (['openai', 'anthropic', 'openai-compatible'] as const)
      .map((kind) => resolveApiKey(kind, this.options.env, config).value)
      .filter((v): v is string => typeof v === 'string' && v.length >= 4);

    const turnId = newTurnId();
    const controller = new AbortController();
    const now = new Date().toISOString();
    const user: UserItem = {
      kind: 'user',
      id: newItemId(),
      time: now,
      turnId,
      text,
      ...(context?.assist && context.notebookPath
        ? { cellAssist: { notebookPath: context.notebookPath, assist: context.assist } }
        : {})
    };
    if (record.titleSource !== 'user' && record.chat.items.every((i) => i.kind !== 'user')) {
      this.options.store.setTitle(chatId, titleFromMessage(text), 'auto');
    }
    this.options.store.appendMessages(chatId, [{ role: 'user', content: expanded?.modelText ?? text }]);
    this.emit(chatId, { type: 'turn-started', turnId });
    this.emit(chatId, { type: 'item-added', item: user });
    if (expanded?.note)
      this.emit(chatId, {
        type: 'item-added',
        item: { kind: 'notice', id: newItemId(), time: now, turnId, level: 'info', text: expanded.note }
      });
    const shown = this.shownProblems.get(chatId) ?? new Set<string>();
    this.shownProblems.set(chatId, shown);
    for (const text of problems.filter((p) => !shown.has(p))) {
      shown.add(text);
      this.emit(chatId, {
        type: 'item-added',
        item: { kind: 'notice', id: newItemId(), time: now, turnId, level: 'warning', text }
      });
    }
    this.listChanged();

    // One profile per turn, from the chat's mode as it is now (a later switch applies to the next turn, MODE-1),
    // and one catalog from it: the system prompt lists exactly what every step declares (HARN-11).
    // "Explain" on a cell runs read-only whatever the mode: the surface has nothing that writes or runs.
    const { surface, system } = this.turnPrompt(
      chatId,
      context?.assist?.action === 'explain' ? EXPLAIN_PROFILE : record.chat.mode
    );
    const fast = await fastTierModel(settings, this.runModels(config));
    const window = await this.contextManager(
      chatId,
      settings,
      model,
      turnId,
      fixedTokens(system, surface.catalog.declared),
      config,
      fast
    );
    const done = runTurn(
      {
        chatId,
        turnId,
        workspace: this.options.workspace,
        model,
        settings,
        registry: this.options.registry,
        profile: surface.profile,
        ...(surface.nudge ? { nudge: surface.nudge } : {}),
        declared: surface.catalog.declared,
        system,
        context: window,
        history: record.messages,
        signal: controller.signal,
        // The Auto reviewer is a short request on the fast tier (SIDE-1), else the chat's own model.
        autoApproval: createSidecarClassifier({
          sidecarModel: () => fast ?? model,
          enabled: () => this.options.store.get(chatId)?.chat.auto === true
        }),
        maxSteps: this.options.maxSteps,
        idleTimeoutMs: this.options.streamIdleTimeoutMs,
        maxRetries: this.options.maxRetries,
        redact: (t) => {
          const keys = secrets.reduce((acc, s) => acc.split(s).join('[redacted]'), t);
          return this.options.redactor ? this.options.redactor.redact(keys) : keys;
        }
      },
      {
        emit: (event) => this.emit(chatId, event),
        appendMessages: (messages) => {
          if (this.disposed) return;
          this.options.store.appendMessages(chatId, messages);
        }
      }
    )
      .catch((error: unknown): TurnResult => {
        // runTurn reports its own failures; reaching this is a bug, but the chat must not stay "running".
        this.options.logger.error(`turn ${turnId} in chat ${chatId} crashed`, error);
        const message = `Internal error: the turn crashed (${error instanceof Error ? error.message : String(error)}). See the server log.`;
        if (this.options.store.get(chatId)?.chat.running)
          this.emit(chatId, { type: 'turn-ended', turnId, reason: 'error', error: message });
        return { reason: 'error', error: message };
      })
      .finally(() => {
        this.running.delete(chatId);
        this.listChanged(); // updatedAt moved
      });
    this.running.set(chatId, { turnId, controller, done });
    return { turnId };
  }

  /**
   * Runs the last turn again (`chat/retry`), or with its user message replaced by `text`
   * (`chat/edit`): once the model settings check out, the last user item and every item
   * after it leave the transcript (`items-removed`), the model messages from the last user
   * message on are dropped, and the message is sent as a new turn.
   * @throws CellmateError ChatNotFound, TurnRunning, NothingToRetry or ProviderUnavailable
   */
  async retry(request: RetryRequest): Promise<{ turnId: string }> {
    const { chatId, settings, text, origin } = request;
    const record = this.record(chatId);
    if (this.running.has(chatId)) throw turnRunning(chatId);
    const last = lastUserIndex(record.chat.items);
    if (last < 0) throw nothingToRetry(chatId);
    const lastUser = record.chat.items[last] as UserItem;
    const message = text ?? lastUser.text;
    // A Fix or Explain asks about its cell again, with the cell's facts as they are now; an Explain stays read-only.
    const context = lastUser.cellAssist
      ? { notebookPath: lastUser.cellAssist.notebookPath, assist: lastUser.cellAssist.assist }
      : undefined;
    return this.startTurn({ chatId, text: message, settings, context, origin }, (r) => {
      const at = lastUserIndex(r.chat.items);
      if (at >= 0) this.emit(chatId, { type: 'items-removed', itemIds: r.chat.items.slice(at).map((i) => i.id) });
      let m = r.messages.length - 1;
      while (m >= 0 && (r.messages[m]!.role !== 'user' || isNudgeMessage(r.messages[m]!))) m--; // a mode's nudge is not the person's message
      if (m >= 0) this.options.store.truncateMessages(chatId, m);
    });
  }

  /**
   * Compacts the conversation the model is sent (`chat/compact`: the Compact button,
   * `/compact`; CTX-3): old outputs pruned, earlier turns summarised by `settings`' model.
   * The transcript keeps everything; a compaction card says what changed.
   * @throws CellmateError ChatNotFound, TurnRunning or ProviderUnavailable
   */
  async compact(chatId: string, tierSettings: ModelSettings): Promise<{ compacted: boolean; message: string }> {
    const settings = applyChatModel(tierSettings, this.record(chatId).chat.model);
    if (this.running.has(chatId)) throw turnRunning(chatId);
    const config = await loadConfigFile(this.options.env);
    const model = await createLanguageModel(settings, {
      env: this.options.env,
      config,
      workspace: this.options.workspace,
      fetch: this.options.fetch
    });
    if (this.running.has(chatId)) throw turnRunning(chatId);
    const turnId = newTurnId();
    const controller = new AbortController();
    let finish!: (r: TurnResult) => void;
    const done = new Promise<TurnResult>((resolve) => (finish = resolve));
    // Held like a turn, so a send or a second compaction waits for this one to end.
    this.running.set(chatId, { turnId, controller, done });
    try {
      const record = this.record(chatId);
      const { surface, system } = this.turnPrompt(chatId, record.chat.mode);
      const manager = await this.contextManager(
        chatId,
        settings,
        model,
        turnId,
        fixedTokens(system, surface.catalog.declared),
        config
      );
      const item = await manager.compact(record.messages, 'manual', controller.signal);
      if (!item)
        return {
          compacted: false,
          message: 'Nothing to compact yet: the conversation has no old outputs or earlier turns to summarise.'
        };
      return {
        compacted: true,
        message: `Compacted: ${item.prunedOutputs} old output${item.prunedOutputs === 1 ? '' : 's'} pruned, ${item.summarizedMessages} message${item.summarizedMessages === 1 ? '' : 's'} summarised (about ${item.tokensBefore} → ${item.tokensAfter} tokens).`
      };
    } finally {
      this.running.delete(chatId);
      finish({ reason: 'stop' });
    }
  }

  /** Where this chat's models come from (a fast tier that cannot run is logged here). */
  private runModels(config: Awaited<ReturnType<typeof loadConfigFile>>): RunModels {
    return {
      env: this.options.env,
      config,
      workspace: this.options.workspace,
      logger: this.options.logger,
      ...(this.options.fetch ? { fetch: this.options.fetch } : {})
    };
  }

  /** A turn's context manager (CTX-1/3): the model's facts, and the chat's compaction state through the store. */
  private contextManager(
    chatId: string,
    settings: ModelSettings,
    model: LanguageModel,
    turnId: string,
    fixed: number,
    config: Awaited<ReturnType<typeof loadConfigFile>>,
    fast?: LanguageModel
  ): Promise<ContextManager> {
    const kernelState = this.options.kernelState;
    return createRunContext(this.runModels(config), {
      conversationId: chatId,
      records: this.options.store,
      emit: (event) => this.emit(chatId, event),
      settings,
      model,
      turnId,
      fixedTokens: fixed,
      ...(fast ? { fast } : {}),
      ...(kernelState ? { kernelState: (signal: AbortSignal) => kernelState(chatId, signal) } : {})
    });
  }

  /**
   * Writes the chat to `exports/<title>-<time>.md` and `.ipynb` in the workspace, with its
   * figures in `<title>-<time>_files/` (the `/export` command). The person asks for it, so it
   * is the companion's own write, not a tool call: fixed names inside the workspace, never
   * replacing a file (the time stamp makes each export new).
   * @throws CellmateError ChatNotFound
   */
  async exportChat(chatId: string): Promise<{ markdown: string; notebook: string; files: string[] }> {
    this.record(chatId);
    const chat = this.get(chatId);
    const at = new Date();
    const stem = exportStem(chat.title, at);
    const dir = path.join(this.options.workspace, EXPORT_DIR);
    const rendered = renderExport(chat, stem, at.toISOString());
    await mkdir(dir, { recursive: true });
    const write = (rel: string, content: string | Buffer): Promise<void> =>
      writeFile(path.join(dir, rel), content, { flag: 'wx' });
    for (const a of rendered.assets) {
      await mkdir(path.dirname(path.join(dir, a.path)), { recursive: true });
      await write(a.path, a.encoding === 'base64' ? Buffer.from(a.content, 'base64') : a.content);
    }
    await write(`${stem}.md`, rendered.markdown);
    await write(`${stem}.ipynb`, rendered.notebook);
    return {
      markdown: `${EXPORT_DIR}/${stem}.md`,
      notebook: `${EXPORT_DIR}/${stem}.ipynb`,
      files: rendered.assets.map((a) => `${EXPORT_DIR}/${a.path}`)
    };
  }

  /** The chats whose turn is running now. */
  runningChats(): string[] {
    return [...this.running.keys()];
  }

  /** Aborts the running turn of a chat; resolves once it has ended. */
  async abort(chatId: string): Promise<boolean> {
    this.record(chatId);
    const turn = this.running.get(chatId);
    if (!turn) return false;
    turn.controller.abort();
    await turn.done;
    return true;
  }

  /** Resolves when the chat's running turn (if any) ends. */
  async waitForTurn(chatId: string): Promise<TurnResult | undefined> {
    return this.running.get(chatId)?.done;
  }

  /**
   * Stops listening to running turns and saves every chat as it is: a chat saved mid-turn
   * gets the "interrupted" notice when the next server loads it.
   */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    for (const turn of this.running.values()) turn.controller.abort(new Error('server shutting down'));
    await this.options.store.dispose();
    this.eventEmitter.dispose();
    this.listEmitter.dispose();
  }

  /** The chat's turns that changed files or notebooks (`chat/checkpoints`). */
  checkpoints(chatId: string): { turns: CheckpointSummary[] } {
    this.record(chatId);
    return { turns: this.options.checkpoints?.list(chatId) ?? [] };
  }

  /** What a rewind would restore (`chat/rewind-preview`); nothing is written. */
  rewindPreview(params: RewindParams): Promise<RewindPreview> {
    this.record(params.chatId);
    return previewRewind(this.rewindChat(), this.rewindOptions(), params);
  }

  /** Restores a turn's (or every turn from a message on) checkpoints (`chat/rewind`). */
  rewind(params: RewindParams & { overwrite?: boolean; conversation?: boolean }): Promise<RewindResult> {
    this.record(params.chatId);
    return rewindChat(this.rewindChat(), this.rewindOptions(), params);
  }

  private rewindOptions() {
    if (!this.options.checkpoints) throw new Error('This server keeps no checkpoints.');
    return {
      workspace: this.options.workspace,
      store: this.options.checkpoints,
      ...(this.options.notebookPort ? { port: this.options.notebookPort } : {})
    };
  }

  private rewindChat(): RewindChat {
    return {
      items: (chatId) => this.record(chatId).chat.items,
      running: (chatId) => this.running.has(chatId),
      notice: (chatId, turnId, text) =>
        this.emit(chatId, {
          type: 'item-added',
          item: { kind: 'notice', id: newItemId(), time: new Date().toISOString(), turnId, level: 'info', text }
        }),
      cut: (chatId, itemIds, userIndex) => {
        const record = this.record(chatId);
        // The model messages of the removed turns: from the person's userIndex-th message on (a mode's nudge is not theirs).
        const people = record.messages.flatMap((m, i) => (m.role === 'user' && !isNudgeMessage(m) ? [i] : []));
        const users = record.chat.items.filter((i) => i.kind === 'user').length;
        if (people.length !== users || userIndex >= people.length) return false;
        this.emit(chatId, { type: 'items-removed', itemIds });
        this.options.store.truncateMessages(chatId, people[userIndex]!);
        return true;
      }
    };
  }

  private record(chatId: string): ChatRecord {
    const record = typeof chatId === 'string' ? this.options.store.get(chatId) : undefined;
    if (!record) throw chatNotFound(String(chatId));
    return record;
  }

  private emit(chatId: string, original: ChatEvent): void {
    if (this.disposed) return;
    // Listeners serialise later; never hand them an object the turn may still mutate.
    const event = structuredClone(original);
    const record = this.options.store.get(chatId);
    if (!record) return;
    if (event.type === 'worker-updated') {
      // A worker's state is the workers' own (server/src/workers/); the chat file does not keep it.
      this.eventEmitter.fire({ chatId, event });
      return;
    }
    if (event.type === 'tool-progress') {
      // Progress is for the panes watching now; the chat file keeps only the result.
      if (record.chat.running) this.eventEmitter.fire({ chatId, event });
      return;
    }
    // Journaled before any pane hears of it: what a pane saw survives a crash (chat-journal.md).
    this.options.store.applyEvent(chatId, event);
    this.eventEmitter.fire({ chatId, event });
  }

  private listChanged(): void {
    if (!this.disposed) this.listEmitter.fire(this.list());
  }
}

function lastUserIndex(items: readonly Chat['items'][number][]): number {
  for (let i = items.length - 1; i >= 0; i--) if (items[i]!.kind === 'user') return i;
  return -1;
}
