/**
 * Auto approval's side of the gate (SIDE-1…3): its verdicts started early and kept per call,
 * the timeout that turns silence into `ask`, and the breaker that hands the rest of a turn
 * back to the person after repeated refusals (HARN-6). Which calls it may take is
 * `decide-call.ts`'s. The Approver owns one; the classifier comes with each call's context.
 */
import type { SidecarOutcome } from '@cellmate/protocol';
import type { AutoApprovalPort, SidecarAudit, SidecarRecord } from '../ports/gate-ports.js';
import type { ToolContext } from './define-tool.js';
import { Breaker } from './breaker.js';

/** How long the gate waits for a verdict before the call goes to the person (SIDE-3). */
export const DEFAULT_SIDECAR_TIMEOUT_MS = 5_000;
/** Refusals in a row that pause Auto for the rest of the turn. */
export const AUTO_PAUSE_STREAK = 3;
/** Refusals in one turn that pause Auto for the rest of it. */
export const AUTO_PAUSE_TOTAL = 5;

/** Reviews started early and not yet used are bounded. */
const MAX_TRACKED = 256;

/** Options of {@link AutoReviewer}. */
export interface AutoReviewerOptions {
  timeoutMs?: number;
  /** Whether a workspace's own files are trusted (its calls' writes outside it are never reviewed). */
  isWorkspaceTrusted?: (workspace: string) => boolean;
}

interface Pending {
  /** The record the review was started for: a different record at run time is judged afresh. */
  json: string;
  verdict: Promise<SidecarAudit>;
  stop: AbortController;
}

/** One gate's Auto reviews and breaker. */
export class AutoReviewer {
  private readonly pending = new Map<string, Pending>();
  private readonly breaker = new Breaker({ streak: AUTO_PAUSE_STREAK, total: AUTO_PAUSE_TOTAL });
  private readonly timeoutMs: number;

  constructor(private readonly options: AutoReviewerOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_SIDECAR_TIMEOUT_MS;
  }

  /** Whether the breaker paused Auto for the rest of this call's turn. */
  isPaused(ctx: ToolContext): boolean {
    return this.breaker.tally(ctx).tripped;
  }

  /** Whether the person trusts the workspace (without a trust source: not trusted). */
  trusts(workspace: string): boolean {
    return this.options.isWorkspaceTrusted?.(workspace) ?? false;
  }

  /**
   * Starts a review while the model is still streaming (SIDE-2), kept under the call's id
   * for {@link verdict}. Returns false when none was started.
   */
  start(ctx: ToolContext, record: SidecarRecord): boolean {
    if (!ctx.callId || !ctx.autoApproval) return false;
    const key = callKey(ctx);
    this.pending.get(key)?.stop.abort();
    const json = JSON.stringify(record);
    const stop = new AbortController();
    this.pending.set(key, {
      json,
      stop,
      verdict: this.consult(ctx.autoApproval, record, AbortSignal.any([ctx.signal, stop.signal]))
    });
    if (this.pending.size > MAX_TRACKED) this.dropOldest(this.pending, (p) => p.stop.abort());
    return true;
  }

  /** Drops a review started early that will not be used; true when there was one. */
  discard(ctx: ToolContext): boolean {
    const key = callKey(ctx);
    const early = ctx.callId ? this.pending.get(key) : undefined;
    if (!early) return false;
    early.stop.abort();
    this.pending.delete(key);
    return true;
  }

  /** Whether a review of this call is already under way (its card says "checking…"). */
  isStarted(ctx: ToolContext): boolean {
    return this.pending.has(callKey(ctx));
  }

  /**
   * The verdict for a call: the one started early when it judged the same record, else a
   * new one. Counts it for the breaker and, when the breaker trips, says so in the
   * transcript (`ctx.note`).
   */
  async verdict(ctx: ToolContext, record: SidecarRecord): Promise<SidecarAudit> {
    const key = callKey(ctx);
    const early = ctx.callId ? this.pending.get(key) : undefined;
    this.pending.delete(key);
    const json = JSON.stringify(record);
    let audit: SidecarAudit;
    if (early && early.json === json) audit = await early.verdict;
    else {
      early?.stop.abort();
      audit = await this.consult(ctx.autoApproval!, record, ctx.signal);
    }
    this.count(ctx, audit.outcome === 'allow' ? 'allow' : 'refused', audit.outcome);
    return audit;
  }

  /**
   * The person's own answer is feedback too: a denial counts as a refusal in the turn
   * (Auto on), so a reviewer that keeps handing over calls the person keeps refusing stops.
   */
  personDenied(ctx: ToolContext): void {
    if (ctx.autoApproval?.enabled()) this.count(ctx, 'refused', 'denied by the person');
  }

  /** Counts a verdict; a paused turn stays paused (nothing counts) until the next turn. */
  private count(ctx: ToolContext, kind: 'allow' | 'refused', last: SidecarOutcome | string): void {
    if (this.isPaused(ctx)) return;
    if (kind === 'allow') {
      this.breaker.pass(ctx);
      return;
    }
    const turn = this.breaker.refuse(ctx);
    if (turn.tripped) {
      const why =
        turn.streak >= AUTO_PAUSE_STREAK ? `${turn.streak} calls in a row` : `${turn.total} calls in this turn`;
      ctx.note?.(
        'warning',
        `Auto approval is paused for the rest of this turn: the reviewer did not clear ${why} (last: ${last}). You decide each call until the next message.`
      );
    }
  }

  /** Asks the classifier, bounded by the timeout; every failure is `ask` (SIDE-3). */
  private async consult(port: AutoApprovalPort, record: SidecarRecord, signal: AbortSignal): Promise<SidecarAudit> {
    const started = performance.now();
    const timeout = new AbortController();
    const both = AbortSignal.any([signal, timeout.signal]);
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => {
        timeout.abort(new Error(`the reviewer gave no verdict within ${this.timeoutMs} ms`));
        resolve('timeout');
      }, this.timeoutMs);
    });
    const latency = (): number => Math.round(performance.now() - started);
    try {
      const answer = await Promise.race([port.classify(record, both), expired]);
      if (answer === 'timeout')
        return {
          record,
          outcome: 'timeout',
          reason: `no verdict within ${this.timeoutMs} ms`,
          model: 'unknown',
          latencyMs: latency()
        };
      return {
        record,
        outcome: answer.outcome,
        reason: oneLine(answer.reason),
        model: answer.model,
        latencyMs: latency()
      };
    } catch (error) {
      return {
        record,
        outcome: 'error',
        reason: oneLine(`the reviewer failed: ${error instanceof Error ? error.message : String(error)}`),
        model: 'unknown',
        latencyMs: latency()
      };
    } finally {
      clearTimeout(timer);
    }
  }

  private dropOldest<V>(map: Map<string, V>, onDrop?: (value: V) => void): void {
    const first = map.keys().next();
    if (first.done) return;
    onDrop?.(map.get(first.value)!);
    map.delete(first.value);
  }
}

function callKey(ctx: ToolContext): string {
  return `${ctx.chatId}\u0000${ctx.callId ?? ''}`;
}

/** The reason shown on a card: one line, bounded. */
function oneLine(text: string): string {
  const line = (text.split('\n', 1)[0] ?? '').trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
