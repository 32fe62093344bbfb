/**
 * The approval walk as one pure decision (HARN-6, TIER-2, MODE-6, SIDE-1), after codex's
 * `assess_command_safety`: what the gate found about a call, who makes it and the floor go
 * in; a verdict comes out — run it, ask about it, or refuse it. No I/O, no awaits, no
 * state: the registry judges the call first (paths through confinement, the rules read
 * once) and carries the verdict out afterwards (the card, the Auto review, the audit line,
 * the breaker).
 */
import type { ToolActor } from '@cellmate/protocol';
import type { ApprovalDecision, AuditDecision } from '../ports/gate-ports.js';
import type { ActionClass, CapabilityProfile, ToolTier } from '../ports/vocabulary.js';
import type { PolicyDecision, PolicyRule } from '../policy/policy.js';
import { PINNED_TOOLS, surfaceRefusal } from '../policy/profile.js';
import { rulesForAlways, type Judgement, type PathReach } from './call-subjects.js';
import type { ToolDefinition } from './define-tool.js';
import { outsideWorkspaceWords } from './sidecar-record.js';

/** The tool called, as the gate sees it. */
export interface GateTool {
  name: string;
  tier: ToolTier;
  actionClasses: readonly ActionClass[];
  /** What the tool calls its dangerous-command floor on a card (`dangerous command` when absent). */
  dangerLabel?: string;
}

/** Default action classes by tier. */
export function actionClassesOf(definition: Pick<ToolDefinition, 'tier' | 'actionClasses'>): readonly ActionClass[] {
  if (definition.actionClasses) return definition.actionClasses;
  return definition.tier === 'read' ? ['read'] : definition.tier === 'write' ? ['write-file'] : ['run-process'];
}

/** A definition with its action classes filled in, as surfaces and the gate judge it. */
export function withClasses<T extends ToolDefinition>(definition: T): T & { actionClasses: readonly ActionClass[] } {
  return { ...definition, actionClasses: actionClassesOf(definition) };
}

/** What judging the call found. */
export interface JudgedCall {
  tool: GateTool;
  /**
   * The policy's look at the call: the rules read for it, every judgement (the tool's own
   * and what it also acts as), the strictest one and its decision. Absent when there is no
   * policy gate (tests, embedding) or the tool is pinned and was not judged.
   */
  policy?: {
    rules: readonly PolicyRule[];
    judgements: readonly Judgement[];
    chosen: Judgement;
    decision: PolicyDecision;
  };
}

/** Who makes the call, and on which surface (the chat's mode or a sub-agent's profile). */
export interface CallActor {
  kind: ToolActor;
  profile: CapabilityProfile;
}

/** What no rule lowers: the workspace the call runs in and whether the person trusts it. */
export interface CallFloor {
  workspace: string;
  /** Whether the person trusts the workspace; an untrusted one's writes outside it are never auto-reviewed. */
  workspaceTrusted: boolean;
}

/** Whether the Auto reviewer could take a call that asks: switched on for the chat, and not paused for this turn. */
export interface AutoReviewState {
  enabled: boolean;
  paused: boolean;
}

/** Why the Auto reviewer never sees a call that asks. */
export type NotReviewed = 'off' | 'paused' | 'danger' | 'actor' | 'untrusted-outside';

/** Let the call run; `reach` says how far it may walk into files (absent: no path gate). */
export interface RunVerdict {
  kind: 'run';
  decision: Extract<
    AuditDecision,
    'pinned' | 'unchecked' | 'allowed-by-rule' | 'allowed-by-default' | 'approved-by-action'
  >;
  reach?: { kind: PathReach; tier: ToolTier };
}

/** Ask the person (after the Auto reviewer, when it may take the call). */
export interface AskVerdict {
  kind: 'ask';
  /** Why it asks, in words (the card and the Auto record). */
  reason: string;
  /** The judgement that asks (a cell's `os.system` asks as `shell`). */
  judgedAs: Judgement;
  /** The subject a rule would match. */
  subject: string;
  /** The rules an "Always" answer adds, one per subject that asked. */
  always: PolicyRule[];
  /** How far an approved call may walk into files. */
  reach: { kind: 'answered'; tier: ToolTier };
  autoReview: { eligible: true } | { eligible: false; why: NotReviewed };
}

/** Do not run the call; `message` is what the model is told. Every refusal counts towards the breaker. */
export interface RefuseVerdict {
  kind: 'refuse';
  decision: Extract<AuditDecision, 'refused-surface' | 'denied-by-rule' | 'denied-by-default'>;
  message: string;
}

export type CallVerdict = RunVerdict | AskVerdict | RefuseVerdict;

/**
 * Whether the tool is on the caller's surface (TIER-2, MODE-2/6/7). Part of
 * {@link decideCall}; the registry also asks it first, so a call off the surface is refused
 * before its arguments are read or its paths resolved.
 */
export function decideSurface(tool: GateTool, actor: CallActor): RefuseVerdict | undefined {
  const refusal = surfaceRefusal(tool, actor.profile);
  return refusal === undefined ? undefined : { kind: 'refuse', decision: 'refused-surface', message: refusal };
}

/**
 * The verdict for one call. In order: off the surface → refuse; pinned → run; no policy →
 * run; a deny (rule or tier default) → refuse; an allow without the dangerous-command floor
 * → run; the person's own click without the floor → run (it is the approval); everything
 * else — an ask, or the floor over an allow — asks.
 */
export function decideCall(judged: JudgedCall, actor: CallActor, floor: CallFloor, auto: AutoReviewState): CallVerdict {
  const { tool } = judged;
  const offSurface = decideSurface(tool, actor);
  if (offSurface) return offSurface;
  if (PINNED_TOOLS.has(tool.name)) return { kind: 'run', decision: 'pinned' };
  if (!judged.policy) return { kind: 'run', decision: 'unchecked' };
  const { rules, judgements, chosen, decision } = judged.policy;
  const danger = chosen.danger;
  // A path gate judges files as the tool itself unless another judgement (shell for a cell) asked.
  const tier = chosen.tool === tool.name ? chosen.tier : tool.tier;
  const via = viaText(tool, chosen);
  if (decision.action === 'deny') {
    const why =
      decision.source === 'rule'
        ? `the policy rule ${JSON.stringify(decision.rule)}`
        : `the default for ${chosen.tier}-tier tools`;
    return {
      kind: 'refuse',
      decision: decision.source === 'rule' ? 'denied-by-rule' : 'denied-by-default',
      message: `Denied: ${chosen.tool} on ${JSON.stringify(decision.subject)}${via} is denied by ${why}. Do not retry it; choose another approach or ask the user.`
    };
  }
  if (decision.action === 'allow' && !danger) {
    return {
      kind: 'run',
      decision: decision.source === 'rule' ? 'allowed-by-rule' : 'allowed-by-default',
      reach: { kind: 'rules', tier }
    };
  }
  // A card's button (actor `user`) is its own approval; a deny above and the floor still hold.
  if (actor.kind === 'user' && !danger)
    return { kind: 'run', decision: 'approved-by-action', reach: { kind: 'answered', tier } };
  return {
    kind: 'ask',
    reason: askReason(tool, chosen, decision, via),
    judgedAs: chosen,
    subject: decision.subject,
    always: rulesForAlways(rules, chosen),
    reach: { kind: 'answered', tier },
    autoReview: autoReviewOf(chosen, judgements, actor, floor, auto)
  };
}

/**
 * The Auto reviewer sees calls that ask by policy only (SIDE-1): never a deny (refused
 * before), never the floor, never a person's or an MCP client's call, not while paused for
 * the turn, and never an untrusted workspace's write or run that names places outside it.
 */
function autoReviewOf(
  chosen: Judgement,
  judgements: readonly Judgement[],
  actor: CallActor,
  floor: CallFloor,
  auto: AutoReviewState
): AskVerdict['autoReview'] {
  const never = (why: NotReviewed): AskVerdict['autoReview'] => ({ eligible: false, why });
  if (chosen.danger) return never('danger');
  if (!auto.enabled) return never('off');
  if (actor.kind !== 'model' && actor.kind !== 'kernel') return never('actor');
  if (auto.paused) return never('paused');
  if (
    chosen.tier !== 'read' &&
    !floor.workspaceTrusted &&
    outsideWorkspaceWords(judgements, floor.workspace).length > 0
  )
    return never('untrusted-outside');
  return { eligible: true };
}

/** What the person's answer to an ask means for the call. */
export type AnswerVerdict =
  | {
      kind: 'run';
      decision: 'approved-once' | 'approved-always';
      reach: AskVerdict['reach'];
      remember: readonly PolicyRule[];
    }
  | { kind: 'refuse'; decision: 'denied-by-person' | 'denied-expired' | 'denied-no-person'; message: string }
  /** The turn was stopped (or its chat closed) while the call waited: asked, never answered. */
  | { kind: 'stopped'; decision: 'asked'; message: string };

/** The verdict once the person answered (or could not). `name` is the tool called. */
export function decideAnswer(ask: AskVerdict, answer: ApprovalDecision, name: string): AnswerVerdict {
  switch (answer.decision) {
    case 'once':
      return { kind: 'run', decision: 'approved-once', reach: ask.reach, remember: [] };
    case 'always':
      // Only these rules: the floor still asks next time, "always" never covers a dangerous command.
      return { kind: 'run', decision: 'approved-always', reach: ask.reach, remember: ask.always };
    case 'cancelled':
      return {
        kind: 'stopped',
        decision: 'asked',
        message: 'The user stopped the turn while this call waited for approval.'
      };
    case 'deny':
      return {
        kind: 'refuse',
        decision: 'denied-by-person',
        message: `Denied by the user: ${name} was not run.${answer.reason ? ` Their reason: ${answer.reason}` : ''} Do not retry the same call; adjust your approach.`
      };
    case 'expired':
      return {
        kind: 'refuse',
        decision: 'denied-expired',
        message: `Not run: the approval request for ${name} expired without an answer. Do not retry it now; continue without it or ask the user with ask_user.`
      };
    case 'unavailable':
      return {
        kind: 'refuse',
        decision: 'denied-no-person',
        message: `Not run: ${name} needs the user's approval (${ask.reason}) and nobody is connected to approve it, so it is denied (fail-closed). Continue without it.`
      };
  }
}

/** Why a call asks, in words: the floor, a rule, or the tier's default. */
function askReason(tool: GateTool, chosen: Judgement, decision: PolicyDecision, via: string): string {
  const danger = chosen.danger;
  return (
    (danger
      ? `${(chosen.tool === tool.name && tool.dangerLabel) || 'dangerous command'}: ${danger} (always asks, whatever the policy says)`
      : decision.source === 'rule'
        ? `policy rule ${JSON.stringify(decision.rule)}`
        : `${chosen.tier}-tier tools ask by default`) + via
  );
}

/** How a call judged as another tool says so (` (it runs a process, so it is judged as shell)`). */
function viaText(tool: GateTool, chosen: Judgement): string {
  return chosen.tool === tool.name ? '' : ` (${chosen.why}, so it is judged as ${chosen.tool})`;
}
