import type { ApprovalPreview, ModelSettings, ToolActor, ToolCallDisplay, ToolReview } from '@cellmate/protocol';
import type { AutoApprovalPort } from '../ports/gate-ports.js';
import type { z } from 'zod';
import type { ActionClass, CapabilityProfile, ToolTier } from '../ports/vocabulary.js';

export type { ToolTier } from '../ports/vocabulary.js';

/** What every tool call gets besides its arguments. */
export interface ToolContext {
  /** Absolute path of the workspace root. */
  workspace: string;
  /** Aborted when the user stops the turn or the tool's timeout passes. */
  signal: AbortSignal;
  /** Who caused the call. */
  actor: ToolActor;
  /** The chat the call belongs to. */
  chatId: string;
  /** The turn the call belongs to (question cards are filed under it). */
  turnId?: string;
  /** The provider's tool-call id, for the audit log. */
  callId?: string;
  /**
   * The surface the call is judged against (TIER-2); default: the registry's profile.
   * The kernel bridge passes the calling turn's profile through, so a read-only surface
   * stays read-only from inside a kernel.
   */
  profile?: CapabilityProfile;
  /**
   * The background worker (`vibe_*`) whose run made the call; absent: the
   * chat's own agent (or the user). Approval cards name it; a review node's author is it.
   */
  worker?: {
    id: string;
    label: string;
    /** Runs in the parent chat's kernel instead of its own private one. */ sharesKernel?: boolean;
  };
  /**
   * The model settings of the turn the call belongs to (a worker spawned by it defaults to
   * them, VIBE-3); the kernel bridge passes them on with the rest of the context.
   */
  modelSettings?: ModelSettings;
  /**
   * Reports progress of a long call to the pane (eval: the last output line). Optional. The
   * registry reports an approval wait with it too: `waiting` while the card waits for the
   * person, then `waitedMs` (the wait so far), so the card's timer counts run time only.
   */
  progress?(update: { lastLine?: string; waiting?: boolean; waitedMs?: number }): void;
  /**
   * The chat's Auto approval (SIDE-1), from the turn: absent, every `ask` goes to the person.
   * A kernel's `tool()` calls carry it on, so a cell's calls are reviewed the same way.
   */
  autoApproval?: AutoApprovalPort;
  /** Shows the Auto reviewer's state on the call's card (`checking…`, `Auto-approved: …`). */
  review?(update: ToolReview): void;
  /** Adds a line to the transcript (the Auto breaker's pause). */
  note?(level: 'info' | 'warning', text: string): void;
  /**
   * Set by the registry for every call (HARN-5/6): whether the policy lets this tool touch
   * a workspace-relative path. Tools that walk folders (`grep`, `glob`) skip files it
   * refuses and say how many were withheld. Absent (a bare registry without policy) = all
   * allowed; use {@link pathAllowed}.
   */
  isPathAllowed?(relative: string): boolean;
  /**
   * Set by the registry for tools that relay a language server (`relaysServerText`): the
   * literal values of files this call may not read (`withheld-values.ts`), so a server's
   * edit that would copy one into an allowed file is refused before anything is written.
   */
  withheldValues?(): Promise<{ hide(text: string): string }>;
}

/** What a tool's policy hooks may look at besides the arguments: whose call it is, where. */
export type PolicyContext = Pick<ToolContext, 'chatId' | 'workspace'>;

/** `ctx.isPathAllowed`, defaulting to allowed when the registry gave none. */
export function pathAllowed(ctx: Pick<ToolContext, 'isPathAllowed'>, relative: string): boolean {
  return ctx.isPathAllowed ? ctx.isPathAllowed(relative) : true;
}

/** What a tool returns on success. */
export interface ToolOutput {
  /** Short title for the transcript card, e.g. `notes.md (lines 1–40 of 40)`. */
  title: string;
  /** The text the model receives. */
  output: string;
  /** Structured extras for the pane or audit; never sent to the model. */
  metadata?: Record<string, unknown>;
  /** Images handed to the model with `output` when it accepts images (eval's figures). */
  attachments?: ToolAttachment[];
  /** Rich parts of the transcript card (eval: kernel, rewrites, MIME outputs); not for the model. */
  display?: ToolCallDisplay;
  /**
   * `withheld`: the call found or changed nothing because the policy withheld files it
   * would have used; the card, the audit log and the metrics say so instead of "done".
   */
  outcome?: 'withheld';
}

/** An image attached to a tool result. */
export interface ToolAttachment {
  type: 'image';
  mediaType: string;
  /** Base64. */
  data: string;
}

/** An example call shown to the model in the tool's description (SPEC HARN-1). */
export interface ToolExample<A> {
  args: A;
  /** When this call is the right one. */
  comment: string;
}

/** One extra policy question about a call (see {@link ToolDefinition.alsoJudgedAs}). */
export interface ExtraJudgement {
  /** The tool whose rules apply, e.g. `shell`. */
  tool: string;
  tier: ToolTier;
  /** Subjects matched against that tool's rules (commands). */
  subjects: string[];
  /** A reason that always asks (dangerous-command floor), if any. */
  danger?: string;
  /** Why the call is judged this way, for the approval card. */
  why: string;
}

/**
 * A tool, as a value. Build with {@link defineTool}. `ToolDefinition` (the default `S`) is
 * every tool with its argument type forgotten — what the registry and the tool table hold.
 * The hooks that take arguments are declared as methods, so any `ToolDefinition<S>` is one
 * without a cast; that is sound because the registry parses the arguments with the tool's
 * own `parameters` before it calls any of them. Keep new argument hooks methods.
 */
export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  name: string;
  tier: ToolTier;
  /** Long description (from the tool's sibling `.md` file). */
  description: string;
  /** Argument schema; the registry validates against it before `execute` runs. */
  parameters: S;
  /**
   * The JSON Schema shown to the model instead of `parameters`' conversion: for tools whose
   * schema comes as JSON Schema (MCP servers' tools; `parameters` then validates against it).
   */
  inputSchema?: Record<string, unknown>;
  examples: ReadonlyArray<ToolExample<z.input<S>>>;
  /** Per-call time budget; the registry aborts `ctx.signal` when it passes. */
  timeoutMs?: number;
  /**
   * How long outputs are shaped (SPEC HARN-3/4, `output-shaping.ts`). `auto` (default): the
   * registry cuts outputs over 200 lines / 10,000 characters to head + tail and saves the
   * full text under `.cellmate/outputs/`. `paged`: the tool takes `offset`/`limit` and
   * builds its result with the shaping module's `page` (an explicit "call … with offset=…
   * to continue" note), so the registry never shapes it again. Every tool with an
   * `offset` parameter is `paged` (tested).
   */
  outputShaping?: 'auto' | 'paged';
  /**
   * The result carries text a language server derived from files it followed (inferred
   * types, diagnostics, code action titles), not only from the files the arguments name:
   * the registry hides the literal values of files the actor may not read in it
   * (`withheld-values.ts`).
   */
  relaysServerText?: boolean;
  /**
   * What the tool may do (MODE-7). Default by tier: read → `read`, write → `write-file`,
   * exec → `run-process`.
   */
  actionClasses?: readonly ActionClass[];
  /**
   * For tools that stop themselves when `ctx.signal` aborts and say what happened (eval
   * interrupts its cell): how long the registry waits for that result after the user's
   * abort before giving up on it. The result reaches the model and the card with status
   * `aborted`. Default 0: the call ends at once with a generic "stopped" result.
   */
  abortGraceMs?: number;
  /** May run alongside other calls (HARN-8). Default: true for `read` tier, else false. */
  parallelSafe?: boolean;
  /**
   * Found by search only (HARN-11; external tools such as MCP servers'): never declared and
   * not listed in `tool_search`'s index either — the model finds it by searching and calls
   * it through `call_tool`. Built-in tools are deferred by the fixed-set table instead.
   */
  deferred?: boolean;
  /**
   * The arguments that name workspace paths (HARN-5/6), as the caller wrote them, e.g.
   * `(a) => [a.path]`, or the files a patch touches. The registry resolves each through
   * workspace confinement (real paths, symlinks) *before* the policy, refuses the call
   * when one escapes, and asks the policy about the canonical workspace-relative path
   * (and the link's own path when it is a symlink) — never the text as typed. `undefined`
   * entries are skipped. Tools do not build path subjects themselves.
   */
  paths?(args: z.output<S>): ReadonlyArray<string | undefined>;
  /**
   * Non-path policy subjects (HARN-6): the command(s) for `shell`. Default: none (rules
   * match with pattern `*`). Paths are declared with {@link paths} instead.
   */
  policySubjects?(args: z.output<S>, ctx: PolicyContext): string[];
  /**
   * The tier one call is judged at when it is lower than the tool's: `debug`'s views of a
   * stopped program (stack, variables…) are read tier while `evaluate` stays exec. The
   * surface (TIER-2) still goes by {@link tier}. Default: {@link tier}.
   */
  policyTier?(args: z.output<S>, ctx: PolicyContext): ToolTier;
  /**
   * Other tools this call also acts as, judged by the same policy and floor (EVAL-5): an
   * `eval` cell that calls `os.system` is judged as `shell` on that command too. The
   * strictest outcome over the tool itself and these wins.
   */
  alsoJudgedAs?(args: z.output<S>): ReadonlyArray<ExtraJudgement>;
  /**
   * What the call would change, computed without writing, for its approval card (a diff per
   * file, per cell for a notebook). Only called when the call asks; a failure shows no diff.
   */
  preview?(args: z.output<S>, ctx: ToolContext): Promise<ApprovalPreview | undefined>;
  /** A reason this call always needs a person's approval (the dangerous-command floor). */
  dangerReason?(args: z.output<S>): string | undefined;
  /** How the approval card introduces a {@link dangerReason} (default `dangerous command`). */
  dangerLabel?: string;
  /** Runs the tool on validated arguments. Throw `ToolInputError` for model-fixable errors. */
  execute(args: z.output<S>, ctx: ToolContext): Promise<ToolOutput>;
}

/** Identity helper that keeps the argument types of `execute` tied to `parameters`. */
export function defineTool<S extends z.ZodType>(definition: ToolDefinition<S>): ToolDefinition<S> {
  if (!/^[a-z][a-z0-9_]{0,63}$/.test(definition.name)) {
    throw new Error(`Tool name "${definition.name}" must be snake_case (a-z, 0-9, _).`);
  }
  return definition;
}
