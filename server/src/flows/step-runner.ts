import type { ModelSettings } from '@cellmate/protocol';
import type { ChatService } from '../chats/chat-service.js';
import { sendWhenIdle } from './turn-queue.js';

/** How one step ended. `summary`: what it reported, when the executor has it. */
export interface StepOutcome {
  ok: boolean;
  /** Why it did not finish (`its turn ended (error)`, `the chat left Agent mode`). */
  reason?: string;
  summary?: string;
  /** The step never started: it was no longer wanted once the chat was free (mode changed, run stopped). */
  skipped?: boolean;
  /** What the step threw, when it threw rather than ended (e.g. unusable model settings). */
  error?: unknown;
}

/** What every step gets. */
export interface StepContext {
  model: ModelSettings;
  /** The connection the operator approved from (its notebook focus applies to agent turns). */
  origin?: string;
  /** Aborted when the run is stopped (a budget is spent, the flow is disposed). */
  signal: AbortSignal;
  /** The outcomes of the steps done so far, by key (a step's dependencies are among them). */
  results: ReadonlyMap<string, StepOutcome>;
}

/** One approved step: a plan node or an orchestration task. */
export interface RunnableStep {
  readonly key: string;
  readonly depends_on: readonly string[];
}

export type StepState = 'running' | 'done' | 'stopped';

export interface StepRun<S extends RunnableStep> {
  /** In dependency order (`orderPlan`): with width 1 they run exactly in this order. */
  steps: readonly S[];
  /** How many steps may run at once (default 1). */
  width?: number;
  /** Once aborted, no further step starts; the running ones are left to end (their executor hears the same signal). */
  signal: AbortSignal;
  run(step: S, results: ReadonlyMap<string, StepOutcome>): Promise<StepOutcome>;
  /** Each step's progress, as it happens (cards and stored run state follow it). */
  onState?(step: S, state: StepState): void;
}

export interface StepRunReport<S extends RunnableStep> {
  results: Map<string, StepOutcome>;
  /** The first step that did not finish; the steps after it did not start. */
  failed?: { step: S; index: number; outcome: StepOutcome };
}

/**
 * Runs approved steps (SPEC MODE-3 plan nodes, MODE-5 orchestration tasks): a step starts once
 * every step it depends on is done, in the given order, up to `width` at once. The first step
 * that does not finish (or throws) stops the run: nothing more starts, the running ones are
 * awaited, and the report names the step. An aborted `signal` likewise starts nothing more.
 * A step depending on a key that is not done and never will be (a hand-edited file) is reported
 * as failed rather than waited for.
 */
export async function runSteps<S extends RunnableStep>(spec: StepRun<S>): Promise<StepRunReport<S>> {
  const width = Math.max(1, spec.width ?? 1);
  const results = new Map<string, StepOutcome>();
  const active = new Map<string, Promise<void>>();
  const pending = [...spec.steps];
  let failed: StepRunReport<S>['failed'];
  const fail = (step: S, outcome: StepOutcome): void => {
    failed ??= { step, index: spec.steps.indexOf(step), outcome };
  };
  while ((pending.length || active.size) && !failed && !spec.signal.aborted) {
    for (const step of [...pending]) {
      if (active.size >= width) break;
      if (!step.depends_on.every((d) => results.get(d)?.ok)) continue;
      pending.splice(pending.indexOf(step), 1);
      spec.onState?.(step, 'running');
      // A step that throws, even before its first await, is a step that did not finish.
      const outcome = new Promise<StepOutcome>((resolve) => resolve(spec.run(step, results))).catch(
        (error: unknown): StepOutcome => ({
          ok: false,
          reason: error instanceof Error ? error.message : String(error),
          error
        })
      );
      active.set(
        step.key,
        outcome.then((o) => {
          results.set(step.key, o);
          active.delete(step.key);
          spec.onState?.(step, o.ok ? 'done' : 'stopped');
          if (!o.ok) fail(step, o);
        })
      );
    }
    if (!active.size) {
      const stuck = pending[0];
      if (stuck)
        fail(stuck, {
          ok: false,
          reason: `it depends on ${stuck.depends_on
            .filter((d) => !results.get(d)?.ok)
            .map((d) => `[${d}]`)
            .join(', ')}, which never finished`
        });
      break;
    }
    await Promise.race(active.values());
  }
  await Promise.all(active.values());
  return { results, ...(failed ? { failed } : {}) };
}

/**
 * One step as an Agent turn in the chat: sent once the chat is free (a person's own turn goes
 * first) and while the chat is still in Agent mode; ends when that turn ends. Aborting
 * `context.signal` skips a step still waiting and — when `abortsTurn` — ends the step's own turn,
 * never a person's turn the step is waiting behind.
 */
export async function agentTurnStep(
  chats: ChatService,
  chatId: string,
  text: string,
  context: StepContext,
  abortsTurn = true
): Promise<StepOutcome> {
  let ours = false; // the chat's running turn is this step's (from its start to its end)
  const onAbort = (): void => {
    if (ours && abortsTurn) void chats.abort(chatId).catch(() => undefined);
  };
  context.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const ended = await sendWhenIdle(
      chats,
      chatId,
      text,
      context.model,
      context.origin,
      () => !context.signal.aborted && chats.get(chatId, 1).mode === 'agent',
      () => {
        ours = true;
        if (context.signal.aborted) onAbort(); // the run was stopped while the turn was starting
      }
    );
    ours = false;
    if (ended === 'stop') return { ok: true };
    if (ended === 'skipped')
      return {
        ok: false,
        skipped: true,
        reason: context.signal.aborted ? 'the run was stopped' : 'the chat left Agent mode'
      };
    return { ok: false, reason: `its turn ended (${ended})` };
  } finally {
    context.signal.removeEventListener('abort', onAbort);
  }
}
