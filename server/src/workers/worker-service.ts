/**
 * Background workers (SPEC VIBE-1…3, HARN-10). A worker is a sub-agent
 * run with a parent chat: the same turn loop as the chat (`agent/run-turn.ts`) with its own
 * history (`worker-store.ts`: a journal of its own, linked to the parent), its labelled
 * brief (`brief.ts`), its own surface (the spawning turn's profile narrowed:
 * `worker-surface.ts`), a budget (steps, tool calls, time), a model per tier
 * (`worker-config.ts`; default the spawning turn's model) and a private kernel of its own
 * unless it shares the chat's. Runs are not awaited by anyone: they go on beside the
 * chat's turn, and several workers run at once.
 *
 * A run is kept inside its model's window as a chat's turn is (CTX-1/3, `agent/run-context.ts`
 * over the worker's own transcript: windowed view, usage, compaction cards, an overflow
 * compacted and retried once), and its prompt carries what its chat's does (SKILL-1/2): the
 * instructions of the chat's focus, read when the run starts, and the skill catalog when
 * `skill` is on the worker's surface.
 *
 * Every call a worker's run makes carries `ctx.worker` (approval cards and the audit log
 * name it) and the parent's `chatId` (its cards appear in the chat the person watches).
 * Killing aborts the run and shuts its private kernel down; deleting the chat kills its
 * workers and deletes their transcripts; a companion restart marks running ones
 * `interrupted`.
 */
import { modelForTier } from '../providers/tiers.js';
import type { ChatEvent, ChatMode, NoticeItem, TranscriptItem, UserItem, WorkerSummary } from '@cellmate/protocol';
import type { LanguageModel } from 'ai';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { runTurn, type TurnResult } from '../agent/run-turn.js';
import { fixedTokens, type ContextManager } from '../agent/context-manager.js';
import { createRunContext } from '../agent/run-context.js';
import { buildSystemPrompt } from '../agent/system-prompt.js';
import { loadConfigFile } from '../config/config-file.js';
import type { Logger } from '../config/logger.js';
import { CellmateError } from '../base/errors.js';
import { newItemId, newTurnId } from '../base/ids.js';
import { profileOf } from '../modes/profiles.js';
import { skillCatalog } from '../modes/turn-surface.js';
import { createLanguageModel } from '../providers/create-model.js';
import { createSidecarClassifier } from '../agent/sidecar-classifier.js';
import { surfaceCatalog } from '../gate/catalog.js';
import type { ToolContext } from '../gate/define-tool.js';
import { ToolInputError } from '../base/tool-errors.js';
import type { ToolRegistry } from '../gate/registry.js';
import type { SkillLibrary } from '../skills/skill-library.js';
import type { SpawnRequest, WaitOutcome, WorkerPort } from '../tools/vibe_spawn/worker-port.js';
import { assembleBrief } from './brief.js';
import { loadWorkerConfig, type WorkerBudget, type WorkerConfig } from './worker-config.js';
import { summarizeWorker, type WorkerRecord, type WorkerStore } from './worker-store.js';
import { liveWorkerProfile, workerProfile } from './worker-surface.js';

/** The answer format when `vibe_spawn` names none. */
export const DEFAULT_OUTPUT_FORMAT =
  'A short report in plain text: what you did, what you found (with file paths and line numbers where they matter), and anything left undone.';
/** Characters of a run's final text kept as its result. */
export const MAX_RESULT_CHARS = 2_000;
/** How often item changes of a running worker go to the panes (state changes go at once). */
const UPDATE_INTERVAL_MS = 250;
/** How long a kill waits for the aborted run to wind down. */
const KILL_WAIT_MS = 10_000;

export interface WorkerServiceOptions {
  workspace: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  store: WorkerStore;
  /** The registry worker runs call (the one their tools are registered in). */
  registry: () => ToolRegistry;
  /** Private kernels by owner: a killed worker's are shut down. */
  kernels?: { releaseChat(owner: string): Promise<number[]> };
  /** The parent chat's mode; undefined when there is no such chat. */
  chatMode(chatId: string): ChatMode | undefined;
  /** Whether the parent chat has Auto approval on (SIDE-1): a worker's calls are reviewed like the chat's own. */
  chatAuto?(chatId: string): boolean;
  /** Sends a `worker-updated` event to the parent chat's panes (`ChatService.publish`). */
  publish(chatId: string, event: ChatEvent): void;
  /** Custom fetch for providers (tests). */
  fetch?: typeof globalThis.fetch;
  /** Hides secrets in what the run shows (provider errors). */
  redact?: (text: string) => string;
  /** The workers settings (default: the home config file's `workers`, read per spawn). */
  config?: () => Promise<WorkerConfig>;
  /** The instructions block (SKILL-1) of the parent chat's focus, as its own turns get it. */
  instructions?(chatId: string): string | undefined;
  /** Installed skills (SKILL-2): their catalog enters a run's prompt when `skill` is on its surface. */
  skills?: Pick<SkillLibrary, 'catalogBlock'>;
  /**
   * The live state a compaction summary carries (CTX-3): the kernel of `kernelOwner` (the
   * worker's own, or the chat's when it shares) and what else of the chat is open.
   */
  kernelState?(chatId: string, kernelOwner: string, signal: AbortSignal): Promise<string | undefined>;
}

type StopReason = 'killed' | 'budget-calls' | 'budget-time' | 'disposing';

interface LiveWorker {
  controller: AbortController;
  /** The chain of runs (follow-ups queued by vibe_send run after the current one). */
  run: Promise<void>;
  stop?: StopReason;
  queued: string[];
  model: LanguageModel;
  budget: WorkerBudget;
  updateTimer?: NodeJS.Timeout;
}

/** The workers of every chat (see the module comment). */
export class WorkerService implements WorkerPort {
  private readonly live = new Map<string, LiveWorker>();
  private disposed = false;

  constructor(private readonly options: WorkerServiceOptions) {}

  // ---- the vibe_* port ---------------------------------------------------------------

  async spawn(ctx: ToolContext, request: SpawnRequest): Promise<WorkerSummary> {
    if (ctx.worker)
      throw new ToolInputError(
        `Workers cannot start workers (worker ${ctx.worker.id} asked). Do the task yourself, or report back what should be split.`
      );
    const parentMode = this.options.chatMode(ctx.chatId);
    if (parentMode === undefined)
      throw new ToolInputError(`Chat ${ctx.chatId} does not exist, so no worker can be started for it.`);
    const config = await this.config();
    this.checkRunning(config, 'spawn');
    // Without a tier of its own in the config, a fast worker runs the turn's fast tier (the settings' `fast`).
    const settings =
      config.tiers[request.tier] ??
      (ctx.modelSettings && request.tier === 'fast' ? modelForTier(ctx.modelSettings, 'fast') : ctx.modelSettings);
    if (!settings) {
      throw new ToolInputError(
        `No model for the "${request.tier}" tier: this call has no turn whose model the worker could use. Set "workers": {"tiers": {"${request.tier}": {"provider": …, "model": …}}} in the companion's config file.`
      );
    }
    const model = await this.model(settings);
    const now = new Date().toISOString();
    const record: WorkerRecord = {
      id: `w-${randomUUID().replace(/-/g, '').slice(0, 8)}`,
      chatId: ctx.chatId,
      label: request.label,
      tier: request.tier,
      state: 'running',
      createdAt: now,
      startedAt: now,
      settings,
      sharesKernel: request.shareKernel,
      toolCalls: 0,
      surface: workerProfile(ctx.profile ?? profileOf(parentMode), request.access),
      parentMode
    };
    this.options.store.transcripts.create({
      chat: {
        id: record.id,
        title: record.label,
        mode: parentMode,
        createdAt: now,
        updatedAt: now,
        items: [],
        running: false
      },
      titleSource: 'user',
      messages: []
    });
    const brief = assembleBrief({
      task: request.brief,
      sources: request.context.map((c) => ({ kind: c.from, text: c.text, ...(c.origin ? { origin: c.origin } : {}) })),
      outputFormat: request.outputFormat ?? DEFAULT_OUTPUT_FORMAT
    });
    this.startRun(record, model, config.budget, brief);
    return this.summary(record.id);
  }

  async send(ctx: ToolContext, workerId: string, message: string): Promise<WorkerSummary> {
    const record = this.own(ctx.chatId, workerId);
    if (record.state === 'killed')
      throw new ToolInputError(
        `Worker ${workerId} "${record.label}" was killed and cannot be resumed. Start a new one with vibe_spawn.`
      );
    const text = `## Follow-up (from the main agent)\n${message.trim()}`;
    const live = this.live.get(workerId);
    if (live && record.state === 'running') {
      live.queued.push(text); // taken up right after the current run
      return this.summary(workerId);
    }
    // A finished worker's new run counts against the running limit and against what is
    // left of its budget, like a spawn: a follow-up is not a way past either.
    const config = await this.config();
    this.checkRunning(config, 'send to');
    const spent = budgetSpent(record, config.budget);
    if (spent)
      throw new ToolInputError(
        `Worker ${workerId} "${record.label}" has used up its budget (${spent}); a follow-up cannot run. Start a new worker with vibe_spawn for more work.`
      );
    this.startRun(record, await this.model(record.settings), config.budget, text);
    return this.summary(workerId);
  }

  /** @throws ToolInputError when `workers.maxRunning` workers run already */
  private checkRunning(config: WorkerConfig, verb: string): void {
    const running = [...this.live.keys()]
      .map((id) => this.options.store.get(id))
      .filter((r): r is WorkerRecord => r?.state === 'running');
    if (running.length >= config.maxRunning) {
      throw new ToolInputError(
        `${running.length} workers are running already, the limit (workers.maxRunning = ${config.maxRunning}): ${running.map((r) => `${r.id} "${r.label}"`).join(', ')}. Wait for one with vibe_wait or stop one with vibe_kill, then ${verb} again.`
      );
    }
  }

  async wait(ctx: ToolContext, workerId: string, timeoutMs: number): Promise<WaitOutcome> {
    const record = this.own(ctx.chatId, workerId);
    if (ctx.actor === 'kernel' && !ctx.worker && record.sharesKernel && record.state === 'running') {
      // The cell waiting here holds the very kernel the worker's cells queue for: neither could go on.
      throw new ToolInputError(
        `Worker ${workerId} "${record.label}" shares this chat's kernel, where this cell runs: its cells wait for this cell to end, so waiting for it here would never finish. Call vibe_wait outside a cell, or spawn workers a cell waits for with share_kernel false.`
      );
    }
    const deadline = Date.now() + timeoutMs;
    const timer = new AbortController();
    const stop = AbortSignal.any([ctx.signal, timer.signal]);
    try {
      // A follow-up queued by vibe_send starts a new run as the previous one ends: wait for the chain.
      for (
        let live = this.live.get(workerId);
        live && this.options.store.get(workerId)?.state === 'running';
        live = this.live.get(workerId)
      ) {
        const left = deadline - Date.now();
        if (left <= 0 || stop.aborted) break;
        await Promise.race([live.run, sleep(left, undefined, { signal: stop }).catch(() => undefined)]);
      }
    } finally {
      timer.abort();
    }
    const worker = this.summary(workerId);
    return { worker, finished: worker.state !== 'running' };
  }

  async kill(
    ctx: Pick<ToolContext, 'chatId'>,
    workerId: string
  ): Promise<{ worker: WorkerSummary; killed: boolean; kernelPids: number[] }> {
    const record = this.own(ctx.chatId, workerId);
    return this.stop(record);
  }

  list(chatId: string): WorkerSummary[] {
    return this.options.store.ofChat(chatId).map((r) => summarizeWorker(r));
  }

  // ---- the pane and the companion ------------------------------------------------------

  /** One worker and its transcript (read-only in the pane). @throws ToolInputError when it is not this chat's */
  transcript(chatId: string, workerId: string, limit = 500): { worker: WorkerSummary; items: TranscriptItem[] } {
    this.own(chatId, workerId);
    return { worker: this.summary(workerId), items: this.options.store.transcripts.page(workerId, limit).items };
  }

  /** Owners of private kernels that must stay (workers not killed and not sharing), for kernel retention. */
  kernelOwners(): string[] {
    return this.options.store
      .all()
      .filter((r) => !r.sharesKernel && r.state !== 'killed')
      .map((r) => r.id);
  }

  /** The chat was deleted: its workers are killed (kernels shut down) and forgotten. Returns their ids. */
  async removeChat(chatId: string): Promise<string[]> {
    const records = this.options.store.ofChat(chatId);
    await Promise.all(records.map((r) => this.stop(r, false)));
    const ids = records.map((r) => r.id);
    await this.options.store.remove(ids);
    return ids;
  }

  /** Stops every run (they are `interrupted`: the companion is going away) and closes the store. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const runs = [...this.live.values()].map((live) => {
      live.stop ??= 'disposing';
      live.queued = [];
      live.controller.abort(new Error('companion shutting down'));
      return live.run;
    });
    await Promise.race([Promise.all(runs), sleep(KILL_WAIT_MS)]);
    await this.options.store.dispose();
  }

  // ---- runs ------------------------------------------------------------------------------

  private startRun(record: WorkerRecord, model: LanguageModel, budget: WorkerBudget, userText: string): void {
    const { store } = this.options;
    const now = new Date().toISOString();
    const current: WorkerRecord = { ...record, state: 'running', startedAt: now };
    delete current.endedAt;
    store.put(current);
    const controller = new AbortController();
    const live: LiveWorker = this.live.get(record.id) ?? {
      controller,
      run: Promise.resolve(),
      queued: [],
      model,
      budget
    };
    live.controller = controller;
    live.model = model;
    live.budget = budget;
    delete live.stop;
    this.live.set(record.id, live);
    live.run = this.runOnce(current, live, userText).catch((error: unknown) => {
      this.options.logger.error(`worker ${record.id} crashed`, error);
      this.end(
        record.id,
        'failed',
        `Internal error: the worker's run crashed (${error instanceof Error ? error.message : String(error)}). See the server log.`
      );
    });
    this.publishNow(record.id);
  }

  private async runOnce(record: WorkerRecord, live: LiveWorker, userText: string): Promise<void> {
    const { store, registry: registryOf, workspace } = this.options;
    const registry = registryOf();
    const turnId = newTurnId();
    // Never more than the chat has now (worker-surface.ts): re-read at every call of the run.
    const profile = liveWorkerProfile(record.surface, () =>
      workerProfile(profileOf(this.options.chatMode(record.chatId) ?? 'plan'))
    );
    const skills = skillCatalog(registry, profile, this.options.skills?.catalogBlock());
    const catalog = surfaceCatalog(registry, profile, skills.hide);
    const instructionsBlock = this.options.instructions?.(record.chatId);
    const system = buildSystemPrompt({
      workspace,
      tools: catalog.declaredTools,
      modeBlock: workerPromptBlock({ label: record.label, surface: { ...profile } }),
      ...(skills.block ? { skillsBlock: skills.block } : {}),
      ...(instructionsBlock ? { instructionsBlock } : {})
    });
    const emit = (event: ChatEvent): void => {
      store.transcripts.applyEvent(record.id, event);
      if (event.type === 'item-added' && event.item.kind === 'tool') {
        const r = store.get(record.id);
        const total = (r?.toolCalls ?? 0) + 1;
        if (r) store.put({ ...r, toolCalls: total });
        if (total > live.budget.maxToolCalls) this.abortRun(live, 'budget-calls');
      }
      if (event.type === 'item-added' || event.type === 'item-updated') this.publishSoon(record.id, live);
    };
    const context = await this.contextManager(record, live.model, turnId, fixedTokens(system, catalog.declared), emit);
    const user: UserItem = { kind: 'user', id: newItemId(), time: new Date().toISOString(), turnId, text: userText };
    store.transcripts.applyEvent(record.id, { type: 'turn-started', turnId });
    store.transcripts.applyEvent(record.id, { type: 'item-added', item: user });
    store.transcripts.appendMessages(record.id, [{ role: 'user', content: userText }]);
    const started = Date.now();
    const timer = setTimeout(
      () => this.abortRun(live, 'budget-time'),
      Math.max(0, live.budget.maxMs - (record.msUsed ?? 0))
    );
    timer.unref();
    let result: TurnResult;
    try {
      result = await runTurn(
        {
          chatId: record.chatId,
          turnId,
          workspace,
          model: live.model,
          settings: record.settings,
          registry,
          declared: catalog.declared,
          profile,
          system,
          context,
          history: store.transcripts.get(record.id)?.messages ?? [],
          signal: live.controller.signal,
          maxSteps: live.budget.maxSteps,
          maxRetries: 2,
          worker: { id: record.id, label: record.label, sharesKernel: record.sharesKernel },
          ...(this.options.redact ? { redact: this.options.redact } : {}),
          ...(this.options.chatAuto
            ? {
                autoApproval: createSidecarClassifier({
                  sidecarModel: () => live.model,
                  enabled: () => this.options.chatAuto?.(record.chatId) === true
                })
              }
            : {})
        },
        {
          emit,
          appendMessages: (messages) => store.transcripts.appendMessages(record.id, messages)
        }
      );
    } finally {
      clearTimeout(timer);
      const r = store.get(record.id);
      if (r) store.put({ ...r, msUsed: (r.msUsed ?? 0) + (Date.now() - started) });
    }
    this.finishRun(record, live, turnId, result);
  }

  /**
   * The run's context manager (CTX-1/3), as a chat's turn gets one, over the worker's own
   * transcript: its compaction cards and meter are journaled there and shown in its view.
   */
  private async contextManager(
    record: WorkerRecord,
    model: LanguageModel,
    turnId: string,
    fixed: number,
    emit: (event: ChatEvent) => void
  ): Promise<ContextManager> {
    const { store, kernelState } = this.options;
    const models = {
      env: this.options.env,
      config: await loadConfigFile(this.options.env),
      workspace: this.options.workspace,
      logger: this.options.logger,
      ...(this.options.fetch ? { fetch: this.options.fetch } : {})
    };
    const kernelOwner = record.sharesKernel ? record.chatId : record.id;
    return createRunContext(models, {
      conversationId: record.id,
      records: store.transcripts,
      emit,
      settings: record.settings,
      model,
      turnId,
      fixedTokens: fixed,
      ...(kernelState ? { kernelState: (signal: AbortSignal) => kernelState(record.chatId, kernelOwner, signal) } : {})
    });
  }

  private abortRun(live: LiveWorker, why: StopReason): void {
    live.stop ??= why;
    live.controller.abort(new Error(why));
  }

  private finishRun(record: WorkerRecord, live: LiveWorker, turnId: string, result: TurnResult): void {
    const items = this.options.store.transcripts.get(record.id)?.chat.items ?? [];
    const text = items
      .filter((i): i is Extract<TranscriptItem, { kind: 'assistant' }> => i.kind === 'assistant' && i.turnId === turnId)
      .map((i) => i.text.trim())
      .filter(Boolean)
      .at(-1);
    const budget = live.budget;
    const tail = text ? ` Its last text:\n${text}` : '';
    let state: WorkerRecord['state'];
    let lastResult: string;
    switch (live.stop) {
      case 'killed':
        state = 'killed';
        lastResult = text ?? 'Killed before it finished.';
        break;
      case 'disposing':
        state = 'interrupted';
        lastResult = `Interrupted: the companion stopped while this worker ran.${tail}`;
        break;
      case 'budget-calls':
        state = 'failed';
        lastResult = `Stopped: the worker used up its budget of ${budget.maxToolCalls} tool calls (workers.maxToolCalls).${tail}`;
        break;
      case 'budget-time':
        state = 'failed';
        lastResult = `Stopped: the worker ran past its budget of ${Math.round(budget.maxMs / 1000)} s (workers.maxMinutes).${tail}`;
        break;
      default:
        if (result.reason === 'stop') {
          state = 'done';
          lastResult = text ?? '(the worker finished without a final text)';
        } else if (result.reason === 'max-steps') {
          state = 'failed';
          lastResult = `Stopped: the worker used up its budget of ${budget.maxSteps} model steps (workers.maxSteps).${tail}`;
        } else {
          state = 'failed';
          lastResult = `Failed: ${result.error ?? result.reason}.${tail}`;
        }
    }
    if (live.stop === 'budget-calls' || live.stop === 'budget-time') {
      const notice: NoticeItem = {
        kind: 'notice',
        id: newItemId(),
        time: new Date().toISOString(),
        turnId,
        level: 'warning',
        text: lastResult.split('\n')[0]!
      };
      this.options.store.transcripts.applyEvent(record.id, { type: 'item-added', item: notice });
    }
    const next = live.queued.shift();
    if (next !== undefined && (state === 'done' || state === 'failed') && !this.disposed) {
      const r = this.options.store.get(record.id);
      if (r) this.options.store.put({ ...r, lastResult: cut(lastResult) });
      // The follow-up's run replaces live.run; waiters loop on the chain (see wait()).
      const rest = live.queued.splice(0);
      this.startRun(this.options.store.get(record.id)!, live.model, budget, [next, ...rest].join('\n\n'));
      return;
    }
    this.end(record.id, state, lastResult);
  }

  private end(workerId: string, state: WorkerRecord['state'], lastResult: string): void {
    const r = this.options.store.get(workerId);
    const live = this.live.get(workerId);
    if (live?.updateTimer) clearTimeout(live.updateTimer);
    this.live.delete(workerId);
    if (!r) return; // removed with its chat
    // A kill already recorded `killed` (and when); the run's end only adds its last text.
    const final = r.state === 'killed' ? 'killed' : state;
    this.options.store.put({
      ...r,
      state: final,
      endedAt: r.state === 'killed' && r.endedAt ? r.endedAt : new Date().toISOString(),
      lastResult: cut(lastResult)
    });
    this.publishNow(workerId);
  }

  /** Kills a worker: aborts its run, shuts its private kernel, marks it `killed`. */
  private async stop(
    record: WorkerRecord,
    publish = true
  ): Promise<{ worker: WorkerSummary; killed: boolean; kernelPids: number[] }> {
    const live = this.live.get(record.id);
    const killed = record.state !== 'killed' && record.state !== 'interrupted';
    if (record.state !== 'killed') {
      this.options.store.put({
        ...record,
        state: 'killed',
        endedAt: record.state === 'running' || !record.endedAt ? new Date().toISOString() : record.endedAt
      });
      if (publish) this.publishNow(record.id);
    }
    if (live) {
      live.queued = [];
      this.abortRun(live, 'killed');
    }
    // The kernel goes first: a cell blocked in the kernel ends with it, and the run winds down.
    const kernelPids = record.sharesKernel
      ? []
      : await (this.options.kernels?.releaseChat(record.id) ?? Promise.resolve([]));
    if (live) await Promise.race([live.run, sleep(KILL_WAIT_MS)]);
    return { worker: this.summary(record.id), killed, kernelPids };
  }

  // ---- helpers ---------------------------------------------------------------------------

  /** The worker, if it belongs to `chatId`. @throws ToolInputError otherwise */
  private own(chatId: string, workerId: string): WorkerRecord {
    const record = this.options.store.get(workerId);
    if (!record || record.chatId !== chatId) {
      const here = this.options.store.ofChat(chatId).map((r) => `${r.id} "${r.label}"`);
      throw new ToolInputError(
        `Unknown worker "${workerId}" in this chat. ${here.length ? `Its workers: ${here.join(', ')}.` : 'This chat has no workers; start one with vibe_spawn.'}`
      );
    }
    return record;
  }

  private summary(workerId: string): WorkerSummary {
    return summarizeWorker(this.options.store.get(workerId)!);
  }

  private async config(): Promise<WorkerConfig> {
    const config = await (this.options.config ?? (() => loadWorkerConfig(this.options.env)))();
    if (config.problem) this.options.logger.warn(config.problem);
    return config;
  }

  private async model(settings: WorkerRecord['settings']): Promise<LanguageModel> {
    try {
      const config = await loadConfigFile(this.options.env);
      return await createLanguageModel(settings, {
        env: this.options.env,
        config,
        workspace: this.options.workspace,
        ...(this.options.fetch ? { fetch: this.options.fetch } : {})
      });
    } catch (error) {
      if (error instanceof CellmateError)
        throw new ToolInputError(
          `The worker's model (${settings.provider}/${settings.model}) is unusable: ${error.message}`
        );
      throw error;
    }
  }

  private publishNow(workerId: string): void {
    const r = this.options.store.get(workerId);
    if (r && !this.disposed) this.options.publish(r.chatId, { type: 'worker-updated', worker: summarizeWorker(r) });
  }

  private publishSoon(workerId: string, live: LiveWorker): void {
    if (live.updateTimer) return;
    live.updateTimer = setTimeout(() => {
      delete live.updateTimer;
      this.publishNow(workerId);
    }, UPDATE_INTERVAL_MS);
    live.updateTimer.unref();
  }
}

/** The worker's block of its system prompt (HARN-10: who it is, where its result goes). Pure. */
export function workerPromptBlock(record: Pick<WorkerRecord, 'label' | 'surface'>): string {
  return [
    `## Background worker "${record.label}"`,
    'You are a background worker started by the main agent of a Cellmate chat. You work alone on the task in the first message; nobody reads your intermediate text.',
    'Your final message is your result: the main agent receives it as it is, so give it in exactly the output format the task asks for.',
    'You cannot start workers. Calls that need approval ask the user, naming you.',
    ...(record.surface.maxTier === 'read'
      ? ['Your surface is read-only: you can look, not change anything; say what should change instead.']
      : [])
  ].join('\n');
}

/** What of a worker's budget is used up over all its runs, or undefined while some is left. */
function budgetSpent(record: WorkerRecord, budget: WorkerBudget): string | undefined {
  if (record.toolCalls >= budget.maxToolCalls)
    return `${record.toolCalls} of ${budget.maxToolCalls} tool calls, workers.maxToolCalls`;
  if ((record.msUsed ?? 0) >= budget.maxMs)
    return `${Math.round((record.msUsed ?? 0) / 1000)} of ${Math.round(budget.maxMs / 1000)} s, workers.maxMinutes`;
  return undefined;
}

function cut(text: string): string {
  return text.length > MAX_RESULT_CHARS
    ? `${text.slice(0, MAX_RESULT_CHARS)}… (${text.length - MAX_RESULT_CHARS} more characters in the worker's transcript)`
    : text;
}
