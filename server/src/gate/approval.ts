/**
 * Carries out a verdict that asks (HARN-6, SIDE-1…3): the Auto reviewer when the decision
 * lets it take the call, then — unless it cleared it — the person's approval card, and what
 * their answer means. Which calls ask, and which the reviewer may see, is
 * `decide-call.ts`'s; the registry owns one Approver and carries its outcome out.
 */
import type { ApprovalPreview } from '@cellmate/protocol';
import type { ApprovalPort, PolicyPort, SidecarAudit, SidecarRecord } from '../ports/gate-ports.js';
import type { PolicyRule } from '../policy/policy.js';
import type { Redactor } from '../security/redaction.js';
import { AutoReviewer, type AutoReviewerOptions } from './auto-review.js';
import { describeAlways, describeSubject } from './call-subjects.js';
import type { ToolContext, ToolDefinition } from './define-tool.js';
import { buildSidecarRecord } from './sidecar-record.js';
import { decideAnswer, type AnswerVerdict, type AskVerdict, type JudgedCall } from './decide-call.js';

/** One call that asks, as the registry judged it. */
export interface AskedCall {
  definition: ToolDefinition;
  /** The validated arguments (a preview reads them). */
  args: unknown;
  /** The arguments as the caller sent them (the card and the Auto record show these). */
  rawArgs: unknown;
  ctx: ToolContext;
  /** The surface's name, the record's `mode`. */
  mode: string;
  judged: NonNullable<JudgedCall['policy']>;
}

/** What asking adds to the call's audit line: the Auto review and the person's wait. */
export interface AskNote {
  sidecar?: SidecarAudit;
  waitMs: number;
}

/** How an ask ended: the person's answer, or the Auto reviewer's pass. */
export type AskOutcome =
  | AnswerVerdict
  | { kind: 'run'; decision: 'auto-approved'; reach: AskVerdict['reach']; remember: readonly PolicyRule[] };

/** The clients an Approver is given. */
export interface ApproverOptions {
  /** Who approves; without one, an ask is denied (fail-closed). */
  approvals?: ApprovalPort;
  /** Where an "Always" answer's rules are remembered. */
  policy?: PolicyPort;
  redactor?: Pick<Redactor, 'redactDeep'>;
  autoReview?: AutoReviewerOptions;
}

/** Asks the Auto reviewer and the person about calls the decision says ask. */
export class Approver {
  /** The Auto reviews and their breaker (the decision reads whether Auto is paused for a turn). */
  readonly auto: AutoReviewer;

  constructor(private readonly options: ApproverOptions = {}) {
    this.auto = new AutoReviewer(options.autoReview);
  }

  /** Asks about one call; the person's wait and the Auto review go into `note`. */
  async ask(call: AskedCall, ask: AskVerdict, note: AskNote): Promise<AskOutcome> {
    const { definition, rawArgs, ctx } = call;
    const name = definition.name;
    const chosen = ask.judgedAs;
    const approvals = this.options.approvals;
    const reviewable = ask.autoReview.eligible;
    const preview =
      (approvals || reviewable) && chosen.tool === name
        ? await definition.preview?.(call.args, ctx).catch(() => undefined)
        : undefined;
    if (reviewable) {
      if (!this.auto.isStarted(ctx)) ctx.review?.({ state: 'checking' });
      const audit = await this.auto.verdict(ctx, this.record(call, ask, preview));
      note.sidecar = audit;
      if (audit.outcome === 'allow') {
        ctx.review?.({ state: 'auto-approved', reason: audit.reason });
        return { kind: 'run', decision: 'auto-approved', reach: ask.reach, remember: [] };
      }
      ctx.review?.({ state: 'asked', outcome: audit.outcome, reason: audit.reason });
    } else if (this.auto.discard(ctx)) {
      // Reviewed early, but Auto was switched off or paused before the call ran: its card must not stay "checking…".
      ctx.review?.({ state: 'asked', outcome: 'ask', reason: 'Auto approval is off or paused for this turn' });
    }
    const reason = note.sidecar
      ? `${ask.reason}; the Auto reviewer did not clear it (${note.sidecar.outcome}: ${note.sidecar.reason})`
      : ask.reason;
    const asked = performance.now();
    // The card shows the wait apart from the run; the pane hears when it starts and ends.
    ctx.progress?.({ waiting: true });
    const answer = approvals
      ? await approvals.requestApproval(
          {
            chatId: ctx.chatId,
            turnId: ctx.turnId,
            actor: ctx.actor,
            tool: chosen.tool,
            args: chosen.tool === name ? rawArgs : { subject: ask.subject, via: { tool: name, args: rawArgs } },
            subject: describeSubject(chosen.kind, ask.subject),
            pattern: ask.always.map((r) => r.pattern).join(', '),
            allows: describeAlways(chosen, ask.always),
            ...(preview ? { preview } : {}),
            reason,
            ...(ctx.worker ? { worker: { id: ctx.worker.id, label: ctx.worker.label } } : {})
          },
          ctx.signal
        )
      : ({ decision: 'unavailable' } as const);
    note.waitMs += performance.now() - asked;
    ctx.progress?.({ waiting: false, waitedMs: Math.round(note.waitMs) });
    const settled = decideAnswer(ask, answer, name);
    if (settled.kind === 'run') for (const rule of settled.remember) this.options.policy?.remember(rule);
    // A call the reviewer already refused counted then; one it never saw (the floor) counts now.
    if (settled.kind === 'refuse' && settled.decision === 'denied-by-person' && !note.sidecar)
      this.auto.personDenied(ctx);
    return settled;
  }

  /**
   * Starts the Auto review of a call that will ask, while the model is still streaming
   * (SIDE-2). Returns false when the decision keeps it from the reviewer or none started.
   */
  async startReview(call: AskedCall, ask: AskVerdict): Promise<boolean> {
    if (!ask.autoReview.eligible) return false;
    const preview =
      ask.judgedAs.tool === call.definition.name
        ? await call.definition.preview?.(call.args, call.ctx).catch(() => undefined)
        : undefined;
    return this.auto.start(call.ctx, this.record(call, ask, preview));
  }

  /** The record the Auto reviewer is sent, with known secrets hidden (SIDE-1). */
  private record(call: AskedCall, ask: AskVerdict, preview: ApprovalPreview | undefined): SidecarRecord {
    const record = buildSidecarRecord({
      tool: call.definition.name,
      judgements: call.judged.judgements,
      chosen: ask.judgedAs,
      args: call.rawArgs,
      actor: call.ctx.actor,
      mode: call.mode,
      workspace: call.ctx.workspace,
      ...(preview ? { preview } : {}),
      rules: call.judged.rules,
      asks: ask.reason
    });
    return this.options.redactor ? this.options.redactor.redactDeep(record) : record;
  }
}
