import type { ApprovalPreview, SidecarOutcome, ToolActor, ToolCallDisplay } from '@cellmate/protocol';
import type { PolicyRule, ToolTier } from './vocabulary.js';

/**
 * The clients the registry wrapper is given (never globals): where policy rules come
 * from, who approves, where audit entries go, and the write hook the LSP issue wraps.
 */

/** Policy rules, read fresh per call; "always" answers are remembered here. */
export interface PolicyPort {
  rules(): Promise<readonly PolicyRule[]>;
  remember(rule: PolicyRule): void;
}

/** One approval request (rendered as an approval card). */
export interface ApprovalRequest {
  chatId: string;
  turnId?: string;
  actor: ToolActor;
  tool: string;
  args: unknown;
  /** The subject a rule would match, e.g. the command. */
  subject: string;
  /** The pattern "Always for this pattern" adds. */
  pattern: string;
  /** What that pattern allows, in words (`debug: evaluate in dbg/prog.py`). */
  allows?: string;
  /** What the call would change, for the card. */
  preview?: ApprovalPreview;
  reason: string;
  /** The background worker whose call asks (the card names it). */
  worker?: { id: string; label: string };
}

/** The person's decision; `unavailable` = nobody connected (ask = deny, fail-closed). */
export type ApprovalDecision =
  | { decision: 'once' }
  | { decision: 'always' }
  | { decision: 'deny'; reason?: string }
  | { decision: 'unavailable' | 'expired' | 'cancelled' };

export interface ApprovalPort {
  requestApproval(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision>;
  /**
   * The circuit breaker's question (HARN-6): after repeated denials, may the turn go on?
   * Resolves false when the person says stop, skips, or is not there.
   */
  confirmContinue(
    request: { chatId: string; turnId?: string; denials: number; last: string },
    signal: AbortSignal
  ): Promise<boolean>;
}

/** How a call was let through or stopped. */
export type AuditDecision =
  | 'allowed-by-default'
  | 'allowed-by-rule'
  | 'approved-once'
  | 'approved-always'
  /** The person's own action on a card (Accept on a staged edit's diff) is the approval an `ask` seeks. */
  | 'approved-by-action'
  /** The Auto reviewer cleared a call the policy would have asked about (SIDE-1). */
  | 'auto-approved'
  | 'pinned'
  | 'refused-surface'
  /** A path argument escaped the workspace (confinement, before the policy). */
  | 'refused-path'
  | 'denied-by-rule'
  | 'denied-by-default'
  | 'denied-by-person'
  | 'denied-no-person'
  | 'denied-expired'
  /**
   * The call asked (the person's card, or the Auto review before it) and the turn was stopped
   * or its chat closed before an answer: nobody said no, and nothing ran. Status `aborted`.
   */
  | 'asked'
  | 'invalid-arguments'
  | 'unknown-tool'
  | 'unchecked';

/** One audit-log line (HARN-7). */
export interface AuditEntry {
  time: string;
  chatId: string;
  turnId?: string;
  callId?: string;
  actor: ToolActor;
  tool: string;
  args: unknown;
  decision: AuditDecision;
  status: 'ok' | 'withheld' | 'error' | 'aborted' | 'fatal' | 'denied';
  /** First line of the result, at most 200 characters. */
  summary: string;
  /** Run time, without the wait for the person's approval. */
  durationMs: number;
  /** The wait for the person's approval, when the call asked. */
  waitMs?: number;
  error?: string;
  /** The background worker that made the call (HARN-7's "who"), when one did. */
  worker?: string;
  /** The Auto reviewer's consultation, when there was one (SIDE-1…3): what it was sent and said. */
  sidecar?: SidecarAudit;
}

/** One Auto review in the audit log: the record sent, the verdict, its reason, the model, the latency. */
export interface SidecarAudit {
  record: SidecarRecord;
  outcome: SidecarOutcome;
  reason: string;
  model: string;
  latencyMs: number;
}

/**
 * What the Auto reviewer is shown about one call (SIDE-1): fields the gate derives itself —
 * never the conversation, a tool's description, or the contents of a file or an output.
 */
export interface SidecarRecord {
  /** The tool judged (a cell's `os.system` is judged as `shell`; `calledAs` then says `eval`). */
  tool: string;
  calledAs?: string;
  tier: ToolTier;
  actor: ToolActor;
  /** The chat's mode (its capability profile's name). */
  mode: string;
  /** Canonical subjects: workspace-relative paths, command lines, URL hosts, other subjects (debug actions). */
  subjects: { paths: string[]; commands: string[]; hosts: string[]; other: string[] };
  /** Command arguments that name places outside the workspace (absolute, `~`, `..`). */
  outsideWorkspace: string[];
  /** The danger analysis: each parsed command (name and words), process calls found in a cell. */
  danger: {
    commands: Array<{ name: string; args: string[]; via?: string[] }>;
    unparsed: boolean;
    processCalls: Array<{ tool: string; subjects: string[] }>;
  };
  /** The size and kind of the change, counted from the card's preview (no text of it). */
  change: {
    files: string[];
    linesAdded: number;
    linesRemoved: number;
    cellsAdded: number;
    cellsRemoved: number;
    cellsChanged: number;
  } | null;
  /** Why the policy asks, in words. */
  asks: string;
  /** The person's standing rules for this tool, in words (`allow shell git *`). */
  rules: string[];
}

/** The reviewer's answer about one record. `outcome` other than `allow` hands the call to the person. */
export interface SidecarVerdict {
  outcome: SidecarOutcome;
  /** One line: the reviewer's reason, or why there is no verdict. */
  reason: string;
  /** `provider/model` that judged. */
  model: string;
}

/**
 * Auto approval for one turn (SIDE-1), given with the call's context by the turn that owns
 * it: whether the chat has Auto on right now, and the classifier. The registry decides
 * which calls it sees, times it out and fails closed (SIDE-3).
 */
export interface AutoApprovalPort {
  enabled(): boolean;
  /** Judges one record; may throw or never answer — the gate's timeout and catch make that `ask`. */
  classify(record: SidecarRecord, signal: AbortSignal): Promise<SidecarVerdict>;
}

export interface AuditSink {
  record(entry: AuditEntry): void;
}

/**
 * The seam for write-time diagnostics (WDIAG-1/2; `server/src/lsp/write-diagnostics.ts`).
 * `beforeWrite` runs before a write-tier tool that declares paths executes (the
 * files' diagnostics before the change, so only new ones are reported); `afterWrite` after a
 * tool reported `metadata.changedFiles` (on disk or in a pane's open notebook) — its text is
 * appended to the tool's output, its display shown on the card when the tool has none;
 * `pending` after every other successful call of the chat: diagnostics that arrived late.
 */
export interface WriteHook {
  beforeWrite?(change: WriteChange, signal: AbortSignal): Promise<void>;
  afterWrite(change: WriteChange, signal: AbortSignal): Promise<WriteHookResult | undefined>;
  pending?(chatId: string): Promise<WriteHookResult | undefined>;
}

/** What a write is about. */
export interface WriteChange {
  tool: string;
  /** Workspace-relative paths (afterWrite) or the paths as the tool declared them (beforeWrite). */
  files: readonly string[];
  workspace: string;
  chatId: string;
}

/** What the hook adds to a result. */
export interface WriteHookResult {
  text: string;
  display?: ToolCallDisplay;
}

/**
 * Several write hooks as one (diagnostics, then the notebooks a change touched): each runs
 * in order; their texts join, the first display wins; one that fails adds nothing.
 */
export function combineWriteHooks(...hooks: WriteHook[]): WriteHook {
  const join = (results: Array<WriteHookResult | undefined>): WriteHookResult | undefined => {
    const some = results.filter((r): r is WriteHookResult => !!r && !!r.text);
    if (some.length === 0) return undefined;
    const display = some.find((r) => r.display)?.display;
    return { text: some.map((r) => r.text).join('\n\n'), ...(display ? { display } : {}) };
  };
  return {
    beforeWrite: async (change, signal) => {
      for (const h of hooks) await h.beforeWrite?.(change, signal).catch(() => undefined);
    },
    afterWrite: async (change, signal) => {
      const results: Array<WriteHookResult | undefined> = [];
      for (const h of hooks) results.push(await h.afterWrite(change, signal).catch(() => undefined));
      return join(results);
    },
    pending: async (chatId) => {
      const results: Array<WriteHookResult | undefined> = [];
      for (const h of hooks) results.push(await h.pending?.(chatId).catch(() => undefined));
      return join(results);
    }
  };
}
