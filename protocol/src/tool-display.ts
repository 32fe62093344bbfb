/** Tool-card displays by kind: what a card shows beyond the result text. */
import type { EvalKernelInfo } from './kernel-info.js';

/**
 * What a tool card shows beyond the result text, tagged by `kind`; the pane renders each kind
 * with its own renderer (`lab-extension/src/widgets/tool-displays.ts`) and falls back to the
 * text renderer for a kind it does not know. Later kinds (a structural edit's `diff`, LSP
 * `locations`, a debugger's `debug` state) are added here as new members of the union.
 * Chat files written before kinds existed carry eval displays without `kind`.
 */
export type ToolCallDisplay =
  | EvalDisplay
  | TextDisplay
  | LspDisplay
  | DiffDisplay
  | DebugDisplay
  | PlanDisplay
  | ReviewDisplay
  | OrchestrationDisplay
  | VerifyDisplay;

/** The kinds of {@link ToolCallDisplay}. */
export type ToolCallDisplayKind = ToolCallDisplay['kind'];

/** An eval card: the kernel, the rewritten magics, the rich outputs (MIME bundles shown untrusted). */
export interface EvalDisplay {
  kind: 'eval';
  kernel?: EvalKernelInfo;
  /** One line per rewritten magic (SPEC EVAL-4). */
  rewrites?: string[];
  /** In order: `text/plain` (stdout), `application/vnd.jupyter.stderr`, `text/html`, `image/png` (base64)… */
  outputs?: Array<Record<string, string>>;
}

/** A block of plain text (shown as text, never as HTML), optionally with a label. */
export interface TextDisplay {
  kind: 'text';
  text: string;
  /** A short heading over the text, e.g. `stderr`. */
  label?: string;
}

/** Where a language-server location is: a file line, or a line of a notebook cell. */
export interface LspDisplayLocation {
  /** Workspace-relative path (absolute when outside the workspace). */
  path: string;
  /** 1-based line (within the cell for notebooks). */
  line: number;
  /** Notebooks: the cell's 0-based index and its id (or `#<n>`). */
  cell?: { index: number; id: string };
  /** The source line, trimmed. */
  text: string;
  /** What it is: a symbol's kind and name, a diagnostic's message. */
  note?: string;
  /** For diagnostics. */
  severity?: 'error' | 'warning' | 'info' | 'hint';
}

/**
 * An `lsp` card — locations as links that open the file at the line or scroll the
 * notebook to the cell — and the new diagnostics an edit card lists (`action: "new-diagnostics"`).
 */
export interface LspDisplay {
  kind: 'lsp';
  /** The `lsp` action (`references`, `definition`, …) or `new-diagnostics` on an edit card. */
  action: string;
  locations: LspDisplayLocation[];
  /** Set when the list was cut at the tool's cap. */
  total?: number;
}

/**
 * A staged edit (`ast_edit`, SPEC EDIT-3): a unified diff per file — per cell for a
 * notebook — with Accept / Discard, which call `edit/resolve` with `editId`.
 */
export interface DiffDisplay {
  kind: 'diff';
  editId: string;
  /** e.g. `(proposed) 12 replacements in 4 files`. */
  summary: string;
  /** When the staged edit expires (ms since the epoch). */
  expiresAt: number;
  files: DiffFileChange[];
}

/** One file of a {@link DiffDisplay}: `diff` for a source file, `cells` for a notebook. */
export interface DiffFileChange {
  path: string;
  /** Unified diff hunks (`@@ … @@` then ` `, `-`, `+` lines). */
  diff?: string;
  /** `note`: what else happens to the cell (`outputs cleared`, `cell inserted at 4`, `cell deleted`). */
  cells?: Array<{ index: number; id?: string; diff: string; note?: string }>;
}

/** One frame on a debug card. */
export interface DebugFrameDisplay {
  name: string;
  /** `src/app.py` or `analysis.ipynb cell 3 (id 1a2b)`. */
  label: string;
  line: number;
  sourceLine?: string;
  /** Set when the frame is in a notebook cell (the pane scrolls the open notebook to it). */
  cell?: { notebook: string; cellId?: string; index: number };
}

/** A debugger card (SPEC DBG): where the session is stopped, its stack and locals. */
export interface DebugDisplay {
  kind: 'debug';
  /** The chat's session id (the Terminate button names it). */
  sessionId: string;
  adapter: string;
  target: string;
  state: 'running' | 'stopped' | 'finished' | 'ended';
  /** Why it stopped (`breakpoint`, `exception: ValueError …`). */
  reason?: string;
  /** The top frames, the first is where it is stopped (at most 10). */
  frames?: DebugFrameDisplay[];
  /** The top frame's locals (at most 20; values cut at 200 characters). */
  locals?: Array<{ name: string; value: string; type?: string }>;
  /**
   * The notebook (workspace-relative) whose own kernel is debugged (kernel adapter on the
   * focused notebook's kernel): the pane syncs JupyterLab's debugger for it (gutter).
   */
  notebook?: string;
  /**
   * The kernel adapter's cell breakpoints now, by the kernel's source path of each cell
   * (`dumpCell`'s, the path JupyterLab's debugger keys its gutter by) → lines; with
   * {@link notebook}, the pane draws them in that notebook's gutter.
   */
  breakpoints?: Array<{ source: string; lines: number[] }>;
  /**
   * Set on an earlier card of a session that has ended since (the latest card turns
   * `ended`): it keeps what it showed, says the session ended, and offers no Terminate.
   */
  sessionEnded?: boolean;
}

/** One node of a plan (SPEC MODE-3): a piece of work and the keys of the nodes it needs first. */
export interface PlanNode {
  key: string;
  title: string;
  description: string;
  depends_on: string[];
}

/**
 * Where a plan's approval stands (MODE-3): `none` (submitted, not yet put to the person),
 * `pending` (exit_plan_mode asked; durable across restarts), `approved`, `rejected`, or
 * `superseded` (a newer plan replaced it).
 */
export type PlanApprovalState = 'none' | 'pending' | 'approved' | 'rejected' | 'superseded';

/**
 * A plan card (submit_plan, exit_plan_mode): the goal and the nodes in dependency order,
 * and, while `approval` is `pending`, Approve / Reject (`plan/resolve`). The companion
 * updates every card of a plan when its approval changes.
 */
export interface PlanDisplay {
  kind: 'plan';
  planId: string;
  goal: string;
  nodes: PlanNode[];
  approval: PlanApprovalState;
  /** The person's reason on a rejection. */
  reason?: string;
}

/** A role of an orchestration (SPEC MODE-5): who does a kind of task, on which model tier (VIBE-3). */
export interface OrchestrationRole {
  name: string;
  tier: 'fast' | 'good';
  brief: string;
}

/** One sub-task of an orchestration: a plan node with the role that does it. */
export interface OrchestrationTask extends PlanNode {
  role: string;
}

/** An orchestration's budget: how many workers at once, how long, how many tool calls. */
export interface OrchestrationBudget {
  max_workers: number;
  max_minutes: number;
  max_tool_calls?: number;
}

/**
 * Where an orchestration's approval stands (MODE-5): proposing it asks the operator at once
 * (`pending`, durable across restarts); `approved`, `rejected`, or `superseded` (a newer
 * proposal replaced it while it was pending).
 */
export type OrchestrationApprovalState = 'pending' | 'approved' | 'rejected' | 'superseded';

/** A task's (or the synthesis step's) progress once the orchestration is approved. */
export type OrchestrationStepState = 'queued' | 'running' | 'done' | 'stopped' | 'skipped';

/** How an approved orchestration's run stands. */
export interface OrchestrationRun {
  state: 'running' | 'done' | 'stopped';
  /** By task key. */
  tasks: Record<string, OrchestrationStepState>;
  synthesis: OrchestrationStepState;
  /** Why it stopped (budget spent, a turn ended early, the companion restarted). */
  note?: string;
}

/**
 * An orchestration card (propose_orchestration): roles, the task tree in dependency order,
 * the synthesis step and the budget; while `approval` is `pending`, Approve / Reject
 * (`orchestration/resolve`, a person's pane only). The companion updates every card of an
 * orchestration when its approval or its run changes.
 */
export interface OrchestrationDisplay {
  kind: 'orchestration';
  orchestrationId: string;
  roles: OrchestrationRole[];
  tasks: OrchestrationTask[];
  synthesis: string;
  budget: OrchestrationBudget;
  approval: OrchestrationApprovalState;
  /** The operator's reason on a rejection. */
  reason?: string;
  run?: OrchestrationRun;
}

/** Where a review finding points (MODE-4): a file's lines, or a notebook's cell (and lines in it). */
export interface ReviewAnchorView {
  /** Workspace-relative path. */
  file: string;
  /** `[first, last]`, 1-based (within the cell for a notebook). */
  lines?: [number, number];
  /** Notebooks: the cell's 0-based index and its id (the pane scrolls there). */
  cell?: { index: number; id: string };
}

/** One finding of a review (`add_review_node`), as the pane shows it. */
export interface ReviewNodeView {
  id: string;
  kind: string;
  priority: 'P0' | 'P1' | 'P2' | 'P3';
  /** 0–1: how sure the reviewer is. */
  confidence: number;
  body: string;
  anchor?: ReviewAnchorView;
  /** Who added it: `agent` (the chat's own agent) or a worker's id. */
  author: string;
  /** `consensusReady` once a peer (never the author: a worker, or the person as `user`) approved it. */
  state: 'open' | 'consensusReady';
  approvedBy?: string;
}

/** One check `finalize_review` ran (lint, type-check, tests): `not-run` when it could not run. */
export interface ReviewAxisView {
  axis: string;
  status: 'passed' | 'failed' | 'not-run';
  detail?: string;
}

/** A published verdict: Ship / Hold / Block, why, and each axis's outcome. */
export interface ReviewVerdictView {
  verdict: 'Ship' | 'Hold' | 'Block';
  reasons: string[];
  axes: ReviewAxisView[];
  summary?: string;
  /** ISO-8601. */
  finalizedAt: string;
}

/**
 * A review card (SPEC MODE-4: `add_review_node`, `approve_review_node`, `finalize_review`):
 * the findings anchored to files/cells with priority, kind, confidence and consensus state
 * (Approve for the person: `review/approve`), and once finalized the verdict with its axes.
 * `focus` names the one finding a node card shows; without it the card lists them all. The
 * companion updates every card of a review when it changes.
 */
export interface ReviewDisplay {
  kind: 'review';
  reviewId: string;
  /** What is reviewed, e.g. `git diff (3 files)` or `analysis.ipynb`. */
  scope: string;
  nodes: ReviewNodeView[];
  focus?: string;
  verdict?: ReviewVerdictView;
}

/** One code cell on a {@link VerifyDisplay}. */
export interface VerifyCellDisplay {
  /** 0-based index among all the notebook's cells. */
  index: number;
  /** The cell's id, or `#<n>`. */
  id: string;
  status: 'ok' | 'error' | 'changed' | 'not-run';
  /** `ZeroDivisionError: division by zero`, or the first difference of a changed cell. */
  detail?: string;
}

/**
 * A `notebook_verify` card: one row per notebook (✓ / ✗ / changed) expanding to its code
 * cells, each a link to the cell; "Accept new outputs" on a notebook whose run kept its
 * outputs (`verify/accept` with `runId` and the path).
 */
export interface VerifyDisplay {
  kind: 'verify';
  runId: string;
  notebooks: Array<{
    path: string;
    status: 'ok' | 'error' | 'changed' | 'could-not-run' | 'aborted';
    seconds: number;
    reason?: string;
    /** Set when the run's outputs were kept (the copy under `.cellmate/verify/`). */
    outputsPath?: string;
    cells: VerifyCellDisplay[];
  }>;
}
