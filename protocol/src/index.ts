/**
 * Wire types shared by the Cellmate pane (browser) and the companion server (Node).
 *
 * The pane and the server speak JSON-RPC 2.0 (vscode-jsonrpc) over one WebSocket per
 * browser connection: `/cellmate/ws` on the Jupyter server, which bridges each socket to
 * its own connection on the companion server's user-only Unix socket. One WebSocket
 * message carries exactly one JSON-RPC message.
 *
 * This module is browser-safe: types and constants only, no Node imports. Its siblings:
 * `tool-display.ts` (tool-card displays by kind) and `notebook-plan.ts` (the pure
 * notebook-edit planner both sides run).
 */
import type { CellmateCellMark, NotebookCellData, NotebookEditOp } from './notebook-cells.js';
import type { DiffFileChange, OrchestrationApprovalState, PlanApprovalState, ToolCallDisplay } from './tool-display.js';

/** Bumped when a request, notification or payload changes incompatibly. */
export const PROTOCOL_VERSION = 1;

// ---------------------------------------------------------------------------------------
// Model settings (what the pane's settings choose; keys never travel this way)

/** The model providers the server knows. `scripted` replays a JSON script (tests, demos). */
export const PROVIDER_KINDS = ['openai', 'anthropic', 'openai-compatible', 'scripted'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** The model a turn runs with, as the user configured it in JupyterLab's settings. */
export interface ModelSettings {
  provider: ProviderKind;
  /** Provider-specific model id, e.g. `gpt-4.1`, `claude-sonnet-4-5`, `llama3.1`. */
  model: string;
  /** Base URL for `openai-compatible` (Ollama, vLLM, llama.cpp server, LM Studio). */
  baseUrl?: string;
  /**
   * For `scripted`: a workspace-relative path of a JSON script. Empty means the built-in
   * offline demo script.
   */
  scriptPath?: string;
  /**
   * Whether the model takes images in tool results (eval's matplotlib figures). Default:
   * yes for `openai`, `anthropic` and `scripted`, no for `openai-compatible`.
   */
  acceptsImages?: boolean;
  /**
   * The model's context window in tokens, for servers whose models no catalog knows
   * (Ollama, vLLM). Default: the server's `/v1/models` figure, else the models.dev catalog.
   */
  contextWindow?: number;
  /** Share of the usable window (window − reserved output) at which the chat compacts (CTX-3). Default 0.85. */
  compactAt?: number;
  /**
   * The `fast` tier (inline completions, compaction summaries, workers marked fast); absent:
   * the same model as the `main` tier these settings name.
   */
  fast?: TierModel;
}

/** The two model tiers: `main` runs the chat's turns, `fast` the small, latency-bound requests. */
export type ModelTier = 'main' | 'fast';

/** One model of a tier or of a chat's choice: which provider, which model, and for `openai-compatible` its server. */
export interface TierModel {
  provider: ProviderKind;
  model: string;
  /** `openai-compatible` only: the server's OpenAI-compatible endpoint. */
  baseUrl?: string;
}

/** One entry of the model picker (`models/list`). */
export interface ModelOption extends TierModel {
  /** Where the name came from: the server's `/v1/models`, the models.dev catalog, or the settings. */
  source: 'server' | 'catalog' | 'settings';
  /** The tier whose settings name exactly this model, if one does. */
  tier?: ModelTier;
}

/** What the browser may know about a provider's credentials: whether one is set, never it. */
export interface ProviderStatus {
  kind: ProviderKind;
  /** True when the server has an API key for this provider (or none is needed). */
  keyConfigured: boolean;
  /** Where the key would come from, for the "what to set" hint: e.g. `OPENAI_API_KEY`. */
  keySource: string;
  /** Human hint shown when the provider is not usable yet. */
  hint?: string;
}

// ---------------------------------------------------------------------------------------
// Chats and transcripts

/**
 * The mode a chat (a "space") runs in (SPEC MODE-1). The enum carries no policy (MODE-2):
 * each mode's capability profile lives in the companion's `server/src/modes/`.
 */
export const CHAT_MODES = ['agent', 'plan', 'review', 'orchestrate'] as const;
export type ChatMode = (typeof CHAT_MODES)[number];

/**
 * A mode read from a file, a journal line or a person's words: `chat` — what chat files and
 * journals written before the Agent mode had its own name say — is `agent`. Undefined when
 * it names no mode. Pure.
 */
export function chatModeOf(value: unknown): ChatMode | undefined {
  if (value === 'chat') return 'agent';
  return typeof value === 'string' && (CHAT_MODES as readonly string[]).includes(value)
    ? (value as ChatMode)
    : undefined;
}

/**
 * The modes a person may pick in the composer, in Shift+Tab order (MODE-8): Agent, Plan,
 * Orchestrate. `review` is set by the system only (MODE-4).
 */
export const SELECTABLE_MODES: readonly ChatMode[] = ['agent', 'plan', 'orchestrate'];

/** How each mode is named in the pane. */
export const MODE_LABELS: Readonly<Record<ChatMode, string>> = {
  agent: 'Agent',
  plan: 'Plan',
  review: 'Review',
  orchestrate: 'Orchestrate'
};

export interface ChatSummary {
  id: string;
  title: string;
  mode: ChatMode;
  /**
   * Auto approval (SIDE-1): calls the policy would ask about go to a reviewer model first,
   * which may clear them. Per chat, off (absent) by default.
   */
  auto?: boolean;
  /** ISO-8601 times. */
  createdAt: string;
  updatedAt: string;
}

interface ItemBase {
  /** Unique within the chat. */
  id: string;
  /** ISO-8601 time the item was created. */
  time: string;
  /** The turn this item belongs to (a user message starts a turn). */
  turnId: string;
}

export interface UserItem extends ItemBase {
  kind: 'user';
  text: string;
  /** Sent by "Fix with Cellmate" / "Explain" on this cell: Retry and Edit ask about it again (an Explain stays read-only). */
  cellAssist?: { notebookPath: string; assist: CellAssist };
}

/** Assistant text. While streaming, `text` grows through `text-delta` events. */
export interface AssistantItem extends ItemBase {
  kind: 'assistant';
  text: string;
  streaming: boolean;
}

/**
 * Who caused a tool call: the model, code in a kernel (the `tool()` bridge), the user, or an
 * MCP client of Cellmate's own MCP server (`cellmate mcp`, `/cellmate/mcp`).
 */
export type ToolActor = 'model' | 'kernel' | 'user' | 'mcp';

/**
 * `withheld`: the call ran but did nothing because the policy withheld every file it would
 * have used (a grep with no match outside denied files, an ast_edit with nothing to stage).
 */
export type ToolCallStatus = 'running' | 'ok' | 'withheld' | 'error' | 'aborted';

/** One tool call, rendered as a card. */
export interface ToolCallItem extends ItemBase {
  kind: 'tool';
  /** The provider's tool-call id. */
  callId: string;
  name: string;
  args: unknown;
  actor: ToolActor;
  status: ToolCallStatus;
  /** Set once the call ends: its run time, without the wait for the person's approval. */
  durationMs?: number;
  /** How long the call waited for the person's approval (set once answered). */
  waitMs?: number;
  /** True while the call waits for the person's approval (its timer is paused). */
  waiting?: boolean;
  /** The text the model received as the tool's result (already shaped/truncated). */
  output?: string;
  /** Short title from the tool, e.g. `notes.md (lines 1–40 of 40)`. */
  title?: string;
  /** What the pane shows beyond the text (eval cards: kernel, rewrites, rich outputs). */
  display?: ToolCallDisplay;
  /** The Auto reviewer's part in this call (SIDE-1…3), when it was consulted. */
  review?: ToolReview;
}

/**
 * The Auto reviewer's state on a tool card: `checking` while it judges (shown as soon as
 * the call's arguments are complete), `auto-approved` with its one-line reason, or `asked`:
 * the call went to the person (the reviewer said ask, timed out, failed or answered junk).
 */
export type ToolReview =
  | { state: 'checking' }
  | { state: 'auto-approved'; reason: string }
  | { state: 'asked'; outcome: SidecarOutcome; reason: string };

/** How one reviewer consultation ended: its verdict, or why it has none (each of which asks). */
export type SidecarOutcome = 'allow' | 'ask' | 'timeout' | 'error' | 'garbage';

/** The notebook kernel the user has focused, as the pane reports it (`chat/context`). */
export interface NotebookKernelRef {
  /** Jupyter Server kernel id. */
  id: string;
  /** Kernelspec name. */
  name: string;
  /** Kernelspec language (`python`, `javascript`). */
  language?: string;
  notebookPath?: string;
}

/** A line the system adds: an error, an abort, a reconnect. Never sent to the model. */
export interface NoticeItem extends ItemBase {
  kind: 'notice';
  level: 'info' | 'warning' | 'error';
  text: string;
}

/** Kind of question card: `ask` (the `ask_user` tool) or `approval` (the policy's gate). */
export type QuestionType = 'ask' | 'approval';

export type QuestionState = 'pending' | 'answered' | 'skipped' | 'expired' | 'cancelled';

export interface QuestionOption {
  label: string;
  description?: string;
}

/** What an approval card asks about (SPEC HARN-6). */
/** The change an approval card shows: one line, and a diff per file (per cell for a notebook). */
export interface ApprovalPreview {
  /** e.g. `notebook_edit · analysis.ipynb cell 3` (also the answered card's one line). */
  summary: string;
  files: DiffFileChange[];
}

export interface ApprovalDetails {
  tool: string;
  args: unknown;
  /** The rule pattern "Always for this pattern" would add (tool + pattern). */
  pattern: string;
  /** What "Always" allows, in words (`debug: evaluate in dbg/prog.py`); the card shows this. */
  allows?: string;
  /** What the call would change (computed without writing): the card shows it as a diff. */
  preview?: ApprovalPreview;
  /** Why it asks: the policy default, a rule, or the dangerous-command floor. */
  reason: string;
  /** The background worker (`vibe_*`) whose call asks, when a worker asks. */
  worker?: { id: string; label: string };
}

/**
 * A person's answer. `selected` holds 0-based option indices (one unless `multiSelect`);
 * `text` is free text (or, on an approval's Deny, the reason given back to the model).
 */
export type QuestionAnswer = { action: 'answer'; selected: number[]; text?: string } | { action: 'skip' };

/**
 * The options of every approval card, in order: index 0 approve once, 1 always for this
 * pattern, 2 deny (with `text` as the reason).
 */
export const APPROVAL_OPTIONS: readonly QuestionOption[] = [
  { label: 'Approve once' },
  { label: 'Always for this pattern' },
  { label: 'Deny' }
];

/** A numbered question card (SPEC ASK-2, ASK-2a): `ask_user` or an approval request. */
export interface QuestionItem extends ItemBase {
  kind: 'question';
  questionId: string;
  type: QuestionType;
  question: string;
  context?: string;
  options: QuestionOption[];
  allowFreeText: boolean;
  multiSelect: boolean;
  approval?: ApprovalDetails;
  state: QuestionState;
  answer?: QuestionAnswer;
  /** ISO-8601 time the wait expires. */
  expiresAt?: string;
}

/** Tokens of one or more model requests, as the provider reported them (CTX-1). */
export interface TokenUsage {
  /** Every input token, cached ones included. */
  input: number;
  /** Input tokens read from the provider's prompt cache. */
  cachedInput: number;
  /** Input tokens written to the prompt cache. */
  cacheWrite: number;
  output: number;
  /** Reasoning tokens, where the provider reports them (part of `output`). */
  reasoning?: number;
}

/** One turn's model usage, added to the transcript when the turn ends (CTX-1). Never sent to the model. */
export interface UsageItem extends ItemBase {
  kind: 'usage';
  /** `provider/model`. */
  model: string;
  usage: TokenUsage;
  /** Model requests (steps) the turn made. */
  requests: number;
  /** Estimated cost in US dollars from the catalog's prices; absent when the model has none. */
  costUsd?: number;
}

/**
 * The conversation sent to the model was made smaller (CTX-3): old tool outputs pruned to
 * placeholders, and/or earlier turns replaced by a summary. The journal keeps everything.
 */
export interface CompactionItem extends ItemBase {
  kind: 'compaction';
  /** `auto` before a step would pass the threshold, `manual` (Compact), `overflow` (the provider refused). */
  trigger: 'auto' | 'manual' | 'overflow';
  /** Tool outputs replaced by a placeholder in this compaction. */
  prunedOutputs: number;
  /** Model messages replaced by the summary (0: pruning was enough). */
  summarizedMessages: number;
  /** Estimated tokens of the request before and after. */
  tokensBefore: number;
  tokensAfter: number;
  /** The summary the model now reads in place of the earlier turns. */
  summary?: string;
}

export type TranscriptItem =
  UserItem | AssistantItem | ToolCallItem | NoticeItem | QuestionItem | UsageItem | CompactionItem;

/** What the pane's context meter shows (CTX-1): the chat's last request against the model's window. */
export interface ContextStatus {
  /** `provider/model` of the last request. */
  model: string;
  /** Input tokens of the last request (reported by the provider, or estimated before the first answer). */
  usedTokens: number;
  /** True when `usedTokens` is an estimate, not the provider's count. */
  estimated: boolean;
  /** The model's context window; absent when no source knows it. */
  window?: number;
  /** Where `window` came from. */
  windowSource: 'settings' | 'server' | 'catalog' | 'unknown';
  /** Tokens kept free for the answer (max output, bounded). */
  reservedOutput: number;
  /** Input tokens past which the next step compacts first (absent with an unknown window). */
  compactAtTokens?: number;
  /** Every request of the chat so far. */
  total: TokenUsage;
  /** Estimated cost of the chat so far in US dollars (absent when the model has no prices). */
  costUsd?: number;
}

/** Per-tool figures of the audit log (SPEC HARN-7). */
export interface ToolMetricsRow {
  tool: string;
  calls: number;
  ok: number;
  errors: number;
  /** Calls refused by the surface, the policy or a person. */
  denied: number;
  /** Calls that ran but did nothing because the policy withheld the files they needed. */
  withheld: number;
  /** ok / calls, 0–1. */
  successRate: number;
  /** Mean run time; the wait for a person's approval is not in it. */
  meanDurationMs: number;
  /** Calls the Auto reviewer cleared (SIDE-1). */
  autoAllowed: number;
  /** Calls the Auto reviewer handed to the person (verdict `ask`, an error or a junk answer). */
  autoAsked: number;
  /** Calls whose review timed out (and asked the person). */
  autoTimedOut: number;
  /** Calls that waited for the person's approval, and their mean wait. */
  waitedCalls?: number;
  meanWaitMs?: number;
}

export interface ToolMetrics {
  /** Null for all chats. */
  chatId: string | null;
  rows: ToolMetricsRow[];
}

export interface Chat extends ChatSummary {
  /**
   * The transcript, oldest first. From `chat/get`: the latest items only (see
   * `olderCount`); older ones come from `chat/items`.
   */
  items: TranscriptItem[];
  /** True while a turn is running. */
  running: boolean;
  /** The context meter's figures (CTX-1); absent until the chat's first request. */
  context?: ContextStatus;
  /** The model the person picked for this chat's turns; absent: the `main` tier of the settings. */
  model?: TierModel;
  /** How many items come before `items[0]` (0 or absent: `items` is the whole transcript). */
  olderCount?: number;
}

/** How many items `chat/get` returns when the request names no `limit`. */
export const DEFAULT_CHAT_PAGE = 200;

/** A page of older transcript items (`chat/items`). */
export interface ChatItemsPage {
  /** Oldest first; they come right before the `before` item. */
  items: TranscriptItem[];
  /** How many items come before `items[0]`. */
  olderCount: number;
}

export type TurnEndReason = 'stop' | 'aborted' | 'error' | 'max-steps';

/** Server → pane events about one chat. */
export type ChatEvent =
  | { type: 'turn-started'; turnId: string }
  | { type: 'item-added'; item: TranscriptItem }
  /** The whole item, replacing the pane's copy (tool call ended, assistant text final). */
  | { type: 'item-updated'; item: TranscriptItem }
  | { type: 'text-delta'; itemId: string; delta: string }
  | { type: 'turn-ended'; turnId: string; reason: TurnEndReason; error?: string }
  /** Items taken out of the transcript (`chat/retry`, `chat/edit` drop the last turn). */
  | { type: 'items-removed'; itemIds: string[] }
  /**
   * A running tool's progress (eval: the last output line). Shown on the card while it
   * runs; not stored in the chat (at most a few per second).
   */
  | { type: 'tool-progress'; itemId: string; elapsedMs?: number; lastLine?: string }
  /** The chat's mode changed (MODE-1); the next turn runs with the new mode's profile. */
  | { type: 'mode-changed'; mode: ChatMode }
  /** Auto approval was switched on or off for the chat (SIDE-1); applies to the next call. */
  | { type: 'auto-changed'; auto: boolean }
  /** The chat's model changed (the header's picker); `null`: back to the settings' `main` tier. */
  | { type: 'model-changed'; model: TierModel | null }
  /** The context meter's figures changed (a step's usage arrived, a compaction, another model). */
  | { type: 'context'; context: ContextStatus }
  /**
   * A background worker of this chat changed (spawned, a step, finished, killed; VIBE-2).
   * Not stored in the chat: the worker keeps its own transcript (`worker/get`).
   */
  | { type: 'worker-updated'; worker: WorkerSummary };

// ---------------------------------------------------------------------------------------
// Background workers (`vibe_*`, SPEC VIBE-1…3)

/** A worker's model tier (VIBE-3): `fast` for mechanical work, `good` for judgement. */
export type WorkerTier = 'fast' | 'good';

/**
 * A worker's state. `running` (a run in progress), `done` / `failed` (the last run ended;
 * `vibe_send` starts another), `killed` (by `vibe_kill` or the pane), `interrupted` (the
 * companion restarted while it ran; terminal).
 */
export type WorkerState = 'running' | 'done' | 'failed' | 'killed' | 'interrupted';

/** One worker as the pane's workers list and `vibe_list` show it. */
export interface WorkerSummary {
  id: string;
  /** The parent chat. */
  chatId: string;
  label: string;
  tier: WorkerTier;
  state: WorkerState;
  /** ISO-8601: spawned, and when the latest run started / ended. */
  createdAt: string;
  startedAt: string;
  endedAt?: string;
  /** Running time of the latest run so far (or in all, once it ended). */
  elapsedMs: number;
  /** `provider/model` it runs with. */
  model: string;
  /** Whether it runs in the parent chat's kernel instead of a private one. */
  sharesKernel: boolean;
  /** Tool calls made in all its runs. */
  toolCalls: number;
  /** The final text of its latest finished run (or why it failed), cut to 2,000 characters. */
  lastResult?: string;
}

// ---------------------------------------------------------------------------------------
// JSON-RPC methods: name → params / result. Requests go pane → server.

export interface HelloParams {
  protocolVersion: number;
  /**
   * True when a person is behind this connection (the pane). Questions and approvals
   * fail at once (fail-closed) while no interactive connection is attached.
   */
  interactive?: boolean;
  /**
   * With `interactive`: the pane secret this pane was given by an earlier hello (kept for the
   * browser tab, so a reload is the same pane). Answers to cards — `chat/answer`,
   * `review/approve`, `edit/resolve`, `plan/resolve`, `orchestration/resolve` — are
   * accepted only from the pane that owns the chat: the one whose request last started its
   * work. Another connection with Jupyter's credentials (a kernel cell that read the token)
   * is a different pane and cannot answer them.
   */
  paneSecret?: string;
}
export interface HelloResult {
  protocolVersion: number;
  serverVersion: string;
  /** Absolute path of the workspace (Jupyter's root dir). */
  workspace: string;
  providers: ProviderStatus[];
  /** How many interactive (pane) connections are attached right now, this one included. */
  interactiveConnections?: number;
  /** For an interactive hello: the secret that makes a later hello the same pane (see {@link HelloParams.paneSecret}). */
  paneSecret?: string;
}

/** One configured MCP server (`mcp/servers`): where it came from and how it is doing. */
export interface McpServerStatus {
  name: string;
  transport: 'stdio' | 'http';
  /** The config file that defines it. */
  file: string;
  /** `not-started` until a `tool_search` or a call first needs it (servers start lazily). */
  state: 'not-started' | 'starting' | 'running' | 'failed' | 'stopped';
  /** Crashes the supervisor restarted it after. */
  restarts: number;
  pid?: number;
  /** Why it failed, when it did. */
  error?: string;
  /** Tools registered from it. */
  tools: number;
  /** Tools refused (a name that would shadow another tool, an unusable schema), with why. */
  problems: string[];
}

/** One turn's checkpoint: the files and notebooks it changed. */
export interface CheckpointSummary {
  turnId: string;
  paths: string[];
}

export interface RewindParams {
  chatId: string;
  /** The user message that starts the turn. */
  itemId: string;
  scope: 'turn' | 'from';
}

/** What a rewind restores, file by file, as the diff cards show a change. */
export interface RewindPreview {
  /** From what is there now to what will be restored (a notebook per cell; outputs noted). */
  files: Array<
    DiffFileChange & {
      /** `restore`: set back; `remove`: the turn created it; `conflict`: changed since the agent's edit; `unavailable`: too large to have been kept. */
      action: 'restore' | 'remove' | 'conflict' | 'unavailable';
      why?: string;
    }
  >;
  /** The kernel's state is not rewound: the names the undone cells had set (may be empty). */
  kernelNames: string[];
  /** The turns it covers, oldest first. */
  turns: string[];
  /** One line for the person (`3 files; 1 changed since — see below`). */
  summary: string;
}

export interface RewindResult {
  /** Workspace-relative paths restored or removed. */
  restored: string[];
  /** Paths left as they are (conflicts without `overwrite`, unavailable). */
  skipped: string[];
  /** What the transcript's note says. */
  message: string;
  /** With `conversation`: the removed user message's text, for the composer. */
  text?: string;
}

export interface Requests {
  /** Accept or discard a staged edit from its diff card (SPEC EDIT-3): the person resolves instead of the model. */
  'edit/resolve': {
    params: { chatId: string; editId: string; action: 'accept' | 'discard' };
    result: { state: 'accepted' | 'discarded'; message: string };
  };
  'cellmate/hello': { params: HelloParams; result: HelloResult };
  'config/providers': { params: Record<string, never>; result: ProviderStatus[] };
  'chat/list': { params: Record<string, never>; result: ChatSummary[] };
  'chat/create': { params: { title?: string }; result: Chat };
  /** The chat with its latest `limit` items (default {@link DEFAULT_CHAT_PAGE}). */
  'chat/get': { params: { chatId: string; limit?: number }; result: Chat };
  /** Up to `limit` items (default {@link DEFAULT_CHAT_PAGE}) right before the item `before`: the pane scrolls back. */
  'chat/items': { params: { chatId: string; before: string; limit?: number }; result: ChatItemsPage };
  'chat/rename': { params: { chatId: string; title: string }; result: ChatSummary };
  /**
   * Switches a chat's mode (MODE-1/8): stored with the chat, applied from the next turn (a
   * running turn keeps its profile). Only {@link SELECTABLE_MODES}; `review` is the system's.
   */
  'chat/set-mode': { params: { chatId: string; mode: ChatMode }; result: ChatSummary };
  /**
   * Switches Auto approval for a chat (SIDE-1; the composer's Auto toggle, `/auto`): stored
   * with the chat, applied from the next call that would ask, also within a running turn.
   */
  'chat/set-auto': { params: { chatId: string; auto: boolean }; result: ChatSummary };
  'chat/delete': { params: { chatId: string }; result: { deleted: boolean } };
  /**
   * Picks the model a chat's turns run with (the header's picker): stored with the chat,
   * used from its next request; `null` goes back to the settings' `main` tier. An
   * `openai-compatible` choice must name a server `settings` (the pane's tiers) names.
   */
  'chat/set-model': {
    params: { chatId: string; model: TierModel | null; settings: ModelSettings };
    result: { model: TierModel | null };
  };
  /**
   * The models the picker offers for the configured tiers of `model`: an OpenAI-compatible
   * server's own `/v1/models`, the models.dev catalog for OpenAI and Anthropic (when the
   * server has their key), and the tiers' own models. Never fails: a server that does not
   * answer contributes only its configured model.
   */
  'models/list': { params: { model: ModelSettings }; result: { models: ModelOption[] } };
  /**
   * One inline completion at the cursor of a notebook cell (JupyterLab's inline completer),
   * from the `fast` tier of `model`: the cell's text around the cursor, the cells above and
   * below (the pane bounds them), and the live kernel's names, types and DataFrame columns
   * (the connection's focused notebook kernel, read silently). The text streams as
   * `inline/delta` notifications for `requestId`; the result is the whole suggestion.
   * Cancelling the request aborts the model's request.
   */
  'inline/complete': { params: InlineCompletionParams; result: { text: string } };
  /** Starts a turn and returns at once; progress arrives as `chat/event` notifications. */
  'chat/send': {
    params: { chatId: string; text: string; model: ModelSettings; context?: SendContext };
    result: { turnId: string };
  };
  /**
   * Runs the last turn again: drops everything from the last user message on (its items
   * and model messages) and sends that message again. Refused while a turn runs.
   */
  'chat/retry': { params: { chatId: string; model: ModelSettings }; result: { turnId: string } };
  /** Like `chat/retry`, with the last user message replaced by `text`. */
  'chat/edit': { params: { chatId: string; text: string; model: ModelSettings }; result: { turnId: string } };
  /** The turns of a chat that changed files or notebooks (each has a checkpoint to restore). */
  'chat/checkpoints': { params: { chatId: string }; result: { turns: CheckpointSummary[] } };
  /**
   * What a rewind would restore, without writing: `turn` undoes the changes of the turn that
   * `itemId` (a user message) starts; `from` rewinds every turn from it on.
   */
  'chat/rewind-preview': { params: RewindParams; result: RewindPreview };
  /**
   * Restores the checkpoint(s) through the same write paths as the edits. A file the person
   * changed since the agent's edit is a conflict: nothing is written unless `overwrite`.
   * `conversation` (with `from`) also removes the message and everything after it.
   */
  'chat/rewind': { params: RewindParams & { overwrite?: boolean; conversation?: boolean }; result: RewindResult };
  /**
   * Ends a chat's debug session (the debug card's Terminate button) if it is still
   * `sessionId`: a card of an older session never ends a newer one.
   */
  'debug/terminate': { params: { chatId: string; sessionId: string }; result: { terminated: boolean } };
  /**
   * The person answers a pending plan approval (MODE-3; the plan card's Approve / Reject).
   * Approving switches the chat to Agent and runs the plan's nodes as turns in dependency
   * order with `model`; rejecting starts a Plan turn asking the agent to revise. Refused
   * (InvalidRequest) when the plan is not pending.
   */
  'plan/resolve': {
    params: { chatId: string; planId: string; decision: 'approve' | 'reject'; reason?: string; model: ModelSettings };
    result: { state: PlanApprovalState; message: string };
  };
  /** A chat's background workers (VIBE-2; the pane's workers list), oldest first. */
  'worker/list': { params: { chatId: string }; result: WorkerSummary[] };
  /** One worker with its transcript, read-only (the pane opens it from the workers list). */
  'worker/get': {
    params: { chatId: string; workerId: string };
    result: { worker: WorkerSummary; items: TranscriptItem[] };
  };
  /** Kills a worker (the list's kill button): the same `vibe_kill` the agent calls, made by the person. */
  'worker/kill': { params: { chatId: string; workerId: string }; result: { killed: boolean; message: string } };
  /**
   * The operator answers a pending orchestration (MODE-5; the orchestration card's Approve /
   * Reject). Only the pane that owns the chat may (see `HelloParams.paneSecret`): any other
   * connection is refused, and no tool approves. Approving switches the chat to Agent
   * and runs the tasks in dependency order, then the synthesis, with `model`; rejecting asks
   * the agent (in Orchestrate) to revise. Refused (InvalidRequest) when not pending.
   */
  'orchestration/resolve': {
    params: {
      chatId: string;
      orchestrationId: string;
      decision: 'approve' | 'reject';
      reason?: string;
      model: ModelSettings;
    };
    result: { state: OrchestrationApprovalState; message: string };
  };
  /**
   * "Review changes" (MODE-4): a new chat in mode `review` (set by the system; `chat/set-mode`
   * refuses it) whose first message carries the workspace's `git diff` (bounded, untracked
   * files listed) or the notebook's cells; its first turn runs with `model`.
   */
  'review/start': { params: { scope: ReviewScope; model: ModelSettings }; result: { chatId: string; turnId: string } };
  /** The person approves a review finding (its Approve button): a peer approval, actor `user`. Refused when the person wrote it. */
  'review/approve': { params: { chatId: string; nodeId: string }; result: { state: string; message: string } };
  /** The verify card's "Accept new outputs": a run's kept outputs into one notebook (interactive connections only). */
  'verify/accept': {
    params: { chatId: string; runId: string; path: string };
    result: { state: 'accepted'; message: string };
  };
  /** The configured MCP servers with their state (the pane's status shows them). */
  'mcp/servers': { params: Record<string, never>; result: McpServerStatus[] };
  /** What is wrong with the MCP config files (a file or an entry left out), one sentence each, saying what to fix. */
  'mcp/config-problems': { params: Record<string, never>; result: string[] };
  /**
   * Compacts the conversation the model is sent now (the Compact button, `/compact`; CTX-3):
   * prune old tool outputs, then summarise earlier turns with `model`. Refused while a turn runs.
   */
  'chat/compact': { params: { chatId: string; model: ModelSettings }; result: { compacted: boolean; message: string } };
  /** Aborts the running turn of a chat (the model stream and any running tool). */
  'chat/abort': { params: { chatId: string }; result: { aborted: boolean } };
  /**
   * The pane's focus changed: the notebook kernel evals should share (null: none, so evals
   * use the chat's private kernels). It is this connection's focus: turns started from this
   * connection use it, other windows keep theirs. Without `chatId` it applies to every chat
   * this connection starts a turn in; with one, to that chat only.
   */
  'chat/context': { params: { chatId?: string; kernel: NotebookKernelRef | null }; result: { ok: true } };
  /** Answers (or skips) a pending question card; the result is the card's new state. */
  'chat/answer': {
    params: { chatId: string; questionId: string; answer: QuestionAnswer };
    result: { state: QuestionState };
  };
  /** Per-tool calls, success rate and mean duration from the audit logs. */
  'audit/metrics': { params: { chatId?: string }; result: ToolMetrics };
  /**
   * `@` completion in the composer: kernel variables of the chat's focused notebook kernel
   * (read silently, nothing printed) and workspace files whose path starts with `prefix`.
   */
  'context/complete': { params: { chatId?: string; prefix: string }; result: { items: MentionCandidate[] } };
  /**
   * The instruction files (`AGENTS.md`, else `CLAUDE.md`) a chat's next turn reads: the
   * person's home file, the workspace root's, and those of the folders above `notebookPath`
   * (else the chat's last focus), nearest last (SKILL-1; the header's chip).
   */
  'instructions/list': { params: { chatId?: string; notebookPath?: string }; result: { files: InstructionFileInfo[] } };
  /** Installed skills with their source and whether the model is offered them (SKILL-2/3; the Skills view). */
  'skills/list': { params: Record<string, never>; result: SkillInfo[] };
  /** Turns a skill (by `folder`) on or off for the person; only a person's pane may. */
  'skills/set-enabled': { params: { folder: string; enabled: boolean }; result: SkillInfo[] };
  /**
   * Exports a chat (`/export`): Markdown with figures beside it, and a runnable notebook, in
   * the workspace's `exports/` folder; the result names the files (workspace-relative).
   */
  'chat/export': { params: { chatId: string }; result: { markdown: string; notebook: string; files: string[] } };
  /** Custom slash commands (`.cellmate/commands/*.md`, `~/.cellmate/commands/*.md`) for completion. */
  'commands/list': { params: Record<string, never>; result: CustomCommandInfo[] };
  /** The message `/name arguments` sends: the template with `$ARGUMENTS` replaced. */
  'commands/expand': { params: { name: string; arguments: string }; result: { text: string } };
}

export type RequestMethod = keyof Requests;

/** What a review covers (`review/start`): the workspace's git diff, or one notebook (workspace-relative). */
export type ReviewScope = 'git-diff' | { notebook: string };

// ---------------------------------------------------------------------------------------
// Notebook context and the notebook port

/** What the pane attaches to `chat/send`: the notebook the user looks at and its selection. */
export interface SendContext {
  /** Workspace-relative path of the active (last focused) notebook. */
  notebookPath?: string;
  /** 0-based indices of the selected cells (the active cell at least) in that notebook. */
  selectedCells?: number[];
  /**
   * "Fix with Cellmate" / "Explain" on a cell of that notebook: the companion attaches the
   * cell, its traceback, where the names involved come from and the kernel's facts about
   * them. `explain` runs the turn read-only (nothing is edited or run).
   */
  assist?: CellAssist;
}

/** A cell the person asks Cellmate to fix or explain (see {@link SendContext.assist}). */
export interface CellAssist {
  action: 'fix' | 'explain';
  /** 0-based index of the cell in the notebook. */
  cell: number;
  /** The cell's id when the pane knows it: a cell moved since is then found by id. */
  cellId?: string;
}

/** What the pane sends for an inline completion (`inline/complete`). */
export interface InlineCompletionParams {
  /** The pane's id for this request: `inline/delta` notifications carry it. */
  requestId: string;
  model: ModelSettings;
  /** Workspace-relative notebook path (its kernel gives the names). */
  notebookPath?: string;
  /** The kernel's language, e.g. `python`. */
  language?: string;
  /** The cell's text before and after the cursor. */
  prefix: string;
  suffix: string;
  /** Sources of the cells above (nearest last) and below (nearest first), already bounded. */
  cellsAbove: string[];
  cellsBelow: string[];
}

/** One custom slash command. */
export interface CustomCommandInfo {
  name: string;
  /** Its front matter's `description`, else its first line. */
  description: string;
  source: 'home' | 'workspace';
}

/** One installed skill (SKILL-2/3). */
export interface SkillInfo {
  name: string;
  description: string;
  /** `home` (`~/.cellmate/skills`), `cellmate` (`.cellmate/skills`), `agents` (`.agents/skills`), `claude` (`.claude/skills`). */
  source: 'home' | 'cellmate' | 'agents' | 'claude';
  /** Real path of its folder: its id for `skills/set-enabled`. */
  folder: string;
  /** Where it is, as the person knows it (`~/.cellmate/skills/x`, `.claude/skills/x`). */
  location: string;
  /** `offered` to the model, or why not. */
  state: 'offered' | 'off' | 'untrusted' | 'shadowed' | 'invalid';
  problem?: string;
}

/** One instruction file in effect (SKILL-1). */
export interface InstructionFileInfo {
  /** `~/.cellmate/AGENTS.md` for the person's own, else the workspace-relative path. */
  label: string;
  scope: 'home' | 'workspace' | 'folder';
  /** Characters in the file, and how many of them the prompt carries (fewer: truncated). */
  chars: number;
  shown: number;
}

/** One `@` completion: a kernel variable or a workspace file. */
export interface MentionCandidate {
  kind: 'variable' | 'file';
  /** What follows `@` when chosen, e.g. `df`, `data/sales.csv`. */
  name: string;
  /** One line: `DataFrame 3×2`, `list len 4`, `file 1.2 kB`. */
  detail: string;
}

/**
 * Requests the server sends to a pane (server → pane) about notebooks open in that pane's
 * JupyterLab: edits go through the open document's model so the user sees them at once and
 * undo works. Paths are workspace-relative.
 */
export interface PaneRequests {
  'notebook/open-documents': { params: Record<string, never>; result: { paths: string[] } };
  'notebook/read': {
    params: { path: string };
    result: { cells: NotebookCellData[]; nbformat: number; nbformat_minor: number; metadata: Record<string, unknown> };
  };
  /** Applies the ops in one undoable transaction; new cells get `mark` as `metadata.cellmate`. */
  'notebook/edit': {
    params: { path: string; ops: NotebookEditOp[]; mark: CellmateCellMark };
    result: { insertedIds: string[]; cellCount: number };
  };
  /**
   * Sets the sources of existing cells — outputs, ids and metadata kept — in one undoable
   * transaction, only if every cell still has its `expected` source; otherwise nothing
   * changes and the request fails naming the first cell that differs. `dryRun` only checks.
   * The all-or-nothing multi-file edit (`server/src/edits/`) uses it for open notebooks.
   */
  'notebook/set-sources': {
    params: { path: string; changes: NotebookSourceChange[]; dryRun?: boolean };
    result: { changed: number };
  };
  /**
   * Replaces every cell (source, outputs, ids, metadata) with `cells` in one undoable step: a
   * rewind setting an open notebook back to a checkpoint.
   */
  'notebook/set-cells': {
    params: { path: string; cells: NotebookCellData[] };
    result: { cellCount: number };
  };
  /** Runs code cells one after another in the notebook's kernel; cancelling interrupts it. */
  'notebook/run': {
    params: { path: string; cellIds: string[] };
    result: { cells: NotebookCellData[]; status: 'ok' | 'error' | 'aborted' };
  };
}

export type PaneRequestMethod = keyof PaneRequests;

/** One cell of `notebook/set-sources`: its reference (id, or `#<n>` from 1), the source the change was computed from, the new one. */
export interface NotebookSourceChange {
  cellId: string;
  expected: string;
  source: string;
}

/** Server → pane notifications. */
export interface Notifications {
  'chat/event': { chatId: string; event: ChatEvent };
  /** The list of chats changed (created, renamed, deleted) — by this or another client. */
  'chat/listChanged': { chats: ChatSummary[] };
  /** More text of an inline completion (`inline/complete`), to the connection that asked only. */
  'inline/delta': { requestId: string; text: string };
}

export type NotificationMethod = keyof Notifications;

/** JSON-RPC error codes the server uses beyond the standard ones. */
export const ErrorCodes = {
  /** The chat id does not exist. */
  ChatNotFound: -32010,
  /** A turn is already running in this chat. */
  TurnRunning: -32011,
  /** The model settings are unusable (unknown provider, missing key, bad base URL). */
  ProviderUnavailable: -32012,
  /** Protocol versions do not match; reload the page. */
  ProtocolMismatch: -32013,
  /** The question id is unknown or no longer pending. */
  QuestionNotPending: -32014,
  /** `chat/retry` or `chat/edit` on a chat without a user message. */
  NothingToRetry: -32015,
  /** `chat/items`: the `before` item is not in the chat (removed by a retry or edit). */
  ItemNotFound: -32016
} as const;

/** Route names on the Jupyter server, relative to its base URL. */
export const Routes = {
  websocket: 'cellmate/ws',
  status: 'cellmate/status'
} as const;
export * from './cell-id.js';
export * from './kernel-info.js';
export * from './notebook-cells.js';
export * from './notebook-plan.js';
export * from './tool-display.js';
