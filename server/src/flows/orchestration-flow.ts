import type {
  ModelSettings,
  OrchestrationApprovalState,
  OrchestrationRun,
  OrchestrationStepState,
  OrchestrationTask
} from '@cellmate/protocol';
import type { Event } from 'vscode-jsonrpc/node.js';
import type { ChatService } from '../chats/chat-service.js';
import { updateToolCards } from '../ports/tool-cards.js';
import type { Logger } from '../config/logger.js';
import { newItemId } from '../base/ids.js';
import type { StoredOrchestration } from '../modes/orchestrate/orchestration-port.js';
import { formatDuration, orchestrationDisplay } from '../tools/propose_orchestration/propose_orchestration.js';
import { agentTurnExecutor, type OrchestrationExecutor } from './orchestration-executor.js';
import { runSteps } from './step-runner.js';
import { OrchestrationNotPendingError, type OrchestrationStore } from '../modes/orchestrate/orchestration-store.js';
import { sendWhenIdle } from './turn-queue.js';

const SYNTHESIS = '\u0000synthesis';

/** A task, or (without `task`) the synthesis. */
type OrchestrationStep = { key: string; depends_on: readonly string[]; task?: OrchestrationTask };

/** Options of {@link OrchestrationFlow}. */
export interface OrchestrationFlowOptions {
  store: OrchestrationStore;
  chats: ChatService;
  logger: Logger;
  /**
   * Where approved steps run. Default: {@link agentTurnExecutor} (Agent turns in the chat).
   * The workers service passes its own here — the one seam it needs.
   */
  executor?: OrchestrationExecutor;
  /** Every tool call the registry makes (`registry.onDidCall`): counted against `max_tool_calls` (all of the chat's while a run is on). */
  calls?: Event<{ chatId: string }>;
  /** Milliseconds in one budget minute (default 60,000; tests shorten it). */
  minuteMs?: number;
}

/**
 * What happens when the operator answers an orchestration (SPEC MODE-5): the durable state
 * changes (`OrchestrationStore`), every card of it in the chat shows it, and — on approval —
 * the chat switches to Agent and the tasks run in dependency order (as many at once as the
 * executor and `max_workers` allow; a task starts once every task it depends on is done),
 * then the synthesis step, within the budget (`max_minutes`, `max_tool_calls`: when one is
 * spent the running step is stopped and the rest skipped, with a notice). On rejection an
 * Orchestrate turn asks the agent to revise. Nothing here approves by itself: only
 * {@link answer} does, and only the operator's pane calls it (`orchestration/resolve`).
 */
export class OrchestrationFlow {
  private readonly subscriptions: Array<{ dispose(): void }> = [];
  private readonly running = new Map<string, Promise<void>>();
  private readonly aborts = new Set<AbortController>();
  private readonly counters = new Map<string, { count: number; onCall(): void }>();
  /** The orchestration whose run is on, by chat (one at a time per chat). */
  private readonly runs = new Map<string, string>();
  private readonly executor: OrchestrationExecutor;
  private readonly minuteMs: number;
  private disposed = false;

  constructor(private readonly options: OrchestrationFlowOptions) {
    this.executor = options.executor ?? agentTurnExecutor(options.chats);
    this.minuteMs = options.minuteMs ?? 60_000;
    this.subscriptions.push(options.store.onDidChange((o) => this.updateCards(o)));
    if (options.calls) this.subscriptions.push(options.calls((c) => this.counters.get(c.chatId)?.onCall()));
  }

  /**
   * The operator approves or rejects a pending orchestration. Returns at once; the work (or
   * the revision turn) starts in the background once the chat's current turn has ended.
   * @throws CellmateError ChatNotFound; OrchestrationNotPendingError when it is not pending
   */
  answer(
    chatId: string,
    id: string,
    decision: 'approve' | 'reject',
    model: ModelSettings,
    reason?: string,
    origin?: string
  ): { state: OrchestrationApprovalState; message: string } {
    this.options.chats.get(chatId, 1); // ChatNotFound first
    const runningId = this.runs.get(chatId);
    if (decision === 'approve' && runningId !== undefined && runningId !== id) {
      throw new OrchestrationNotPendingError(
        `Orchestration ${runningId} is still running in this chat: approve this one once it has finished, or press Stop to end it.`
      );
    }
    const o = this.options.store.decide(chatId, id, decision, reason);
    if (decision === 'approve') {
      this.options.chats.setMode(chatId, 'agent');
      this.track(chatId, this.runWork(o, model, origin));
      const n = o.tasks.length;
      return {
        state: o.approval,
        message: `Approved: the chat is in Agent mode; ${n} task${n === 1 ? '' : 's'} run in dependency order, then the synthesis.`
      };
    }
    const text = `I rejected the orchestration${o.reason ? ` (my reason: ${o.reason})` : ''}. Please revise it and propose it again with propose_orchestration.`;
    this.track(
      chatId,
      sendWhenIdle(this.options.chats, chatId, text, model, origin, () => !this.disposed).then(() => undefined)
    );
    return { state: o.approval, message: 'Rejected: the agent is asked to revise the orchestration.' };
  }

  /** Resolves when the chat's background orchestration work (if any) has finished (tests, shutdown). */
  async settled(chatId: string): Promise<void> {
    await this.running.get(chatId);
  }

  /** Stops every running orchestration (its running step is aborted) and stops listening. */
  dispose(): void {
    this.disposed = true;
    for (const a of this.aborts) a.abort();
    for (const s of this.subscriptions) s.dispose();
  }

  private track(chatId: string, work: Promise<void>): void {
    const done = work
      .catch((error: unknown) => {
        // e.g. the model settings are unusable: the operator must see why nothing runs.
        const message = error instanceof Error ? error.message : String(error);
        this.options.logger.warn(`orchestration work in chat ${chatId} stopped: ${message}`);
        this.notice(chatId, `The orchestration's next turn could not start: ${message}`);
      })
      .finally(() => {
        if (this.running.get(chatId) === done) this.running.delete(chatId);
      });
    this.running.set(chatId, done);
  }

  /** Runs the approved tasks in dependency order, then the synthesis, within the budget; records progress. */
  private async runWork(o: StoredOrchestration, model: ModelSettings, origin?: string): Promise<void> {
    const store = this.options.store;
    const run: OrchestrationRun = structuredClone(
      o.run ?? {
        state: 'running',
        tasks: Object.fromEntries(o.tasks.map((t) => [t.key, 'queued'])),
        synthesis: 'queued'
      }
    );
    const set = (key: string | null, state: OrchestrationStepState): void => {
      if (key === null) run.synthesis = state;
      else run.tasks[key] = state;
      store.setRun(o.chatId, o.id, run);
    };
    const abort = new AbortController();
    this.aborts.add(abort);
    let spent: string | undefined;
    const stop = (why: string): void => {
      spent ??= why;
      abort.abort();
    };
    const started = Date.now();
    const deadline = setTimeout(
      () => stop(`its time budget (${o.budget.max_minutes} min) is spent`),
      o.budget.max_minutes * this.minuteMs
    );
    const limit = o.budget.max_tool_calls;
    const counter = {
      count: 0,
      onCall: () => {
        if (limit !== undefined && ++counter.count >= limit) stop(`its tool-call budget (${limit} calls) is spent`);
      }
    };
    this.counters.set(o.chatId, counter);
    this.runs.set(o.chatId, o.id);
    // The synthesis is the last step: it depends on every task. Its key cannot be a task's (a task key starts with a letter or digit).
    const steps: OrchestrationStep[] = [
      ...o.tasks.map((task) => ({ key: task.key, depends_on: task.depends_on, task })),
      { key: SYNTHESIS, depends_on: o.tasks.map((t) => t.key) }
    ];
    let failure: string | undefined;
    try {
      const report = await runSteps({
        steps,
        width: Math.min(this.executor.concurrency(o), o.budget.max_workers),
        signal: abort.signal,
        run: (step, results) => {
          const context = { model, ...(origin !== undefined ? { origin } : {}), signal: abort.signal, results };
          return step.task ? this.executor.runTask(o, step.task, context) : this.executor.runSynthesis(o, context);
        },
        onState: (step, state) => set(step.task ? step.key : null, state)
      });
      const failed = report.failed;
      if (failed)
        failure = `${failed.step.task ? `task [${failed.step.key}]` : 'the synthesis'} did not finish: ${failed.outcome.reason ?? 'no reason given'}`;
    } finally {
      clearTimeout(deadline);
      this.aborts.delete(abort);
      if (this.counters.get(o.chatId) === counter) this.counters.delete(o.chatId);
      if (this.runs.get(o.chatId) === o.id) this.runs.delete(o.chatId);
    }
    if (this.disposed) return; // the next companion marks the run stopped when it loads it
    const why = spent ? `the run stopped: ${spent}` : failure;
    for (const t of o.tasks) if (run.tasks[t.key] === 'queued') run.tasks[t.key] = 'skipped';
    if (run.synthesis === 'queued' && why) run.synthesis = 'skipped';
    run.state = why ? 'stopped' : 'done';
    if (why) run.note = why.charAt(0).toUpperCase() + why.slice(1);
    store.setRun(o.chatId, o.id, run);
    const doneCount = o.tasks.filter((t) => run.tasks[t.key] === 'done').length;
    this.notice(
      o.chatId,
      why
        ? `Orchestration ${o.id} stopped (${doneCount}/${o.tasks.length} tasks done): ${why}. Send a message to continue by hand.`
        : `Orchestration ${o.id} finished: ${o.tasks.length} task${o.tasks.length === 1 ? '' : 's'} and the synthesis in ${formatDuration(Date.now() - started)}.`
    );
  }

  private notice(chatId: string, text: string): void {
    try {
      const turnId = this.options.chats.get(chatId, 1).items.at(-1)?.turnId ?? 'orchestration';
      this.options.chats.publish(chatId, {
        type: 'item-added',
        item: { kind: 'notice', id: newItemId(), time: new Date().toISOString(), turnId, level: 'info', text }
      });
    } catch {
      // the chat is gone
    }
  }

  /** Every card of the orchestration in its chat shows its current approval and run. */
  private updateCards(o: StoredOrchestration): void {
    const display = orchestrationDisplay(o);
    updateToolCards(this.options.chats, o.chatId, {
      match: (item) => item.display?.kind === 'orchestration' && item.display.orchestrationId === o.id,
      render: () => display
    });
  }
}
