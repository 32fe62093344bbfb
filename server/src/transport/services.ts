import type {
  CustomCommandInfo,
  McpServerStatus,
  NotebookKernelRef,
  SkillInfo,
  TranscriptItem,
  WorkerSummary
} from '@cellmate/protocol';
import type { Disposable, MessageConnection } from 'vscode-jsonrpc/node.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { ChatService } from '../chats/chat-service.js';
import type { PlanFlow } from '../flows/plan-flow.js';
import type { ReviewFlow } from '../flows/review-flow.js';
import type { OrchestrationFlow } from '../flows/orchestration-flow.js';
import type { Presence } from '../questions/presence.js';
import type { QuestionBroker } from '../questions/question-broker.js';
import type { InlineCompletionService } from '../inline/inline-service.js';

/**
 * Everything one JSON-RPC connection is served from, composed once in `server.ts` (wiring in
 * one place). The transport reaches these directly; the chats layer knows nothing
 * of connections, panes or the transport. Optional parts are absent in bare embeddings.
 */
export interface CompanionServices {
  /** Real path of the workspace (reported by `cellmate/hello`). */
  workspace: string;
  chats: ChatService;
  /** Interactive connections: a person who can answer cards (ASK-3). */
  presence?: Pick<Presence, 'attach' | 'count'>;
  /** Answers to question and approval cards (`chat/answer`). */
  questions?: Pick<QuestionBroker, 'answer'>;
  /**
   * Accept / Discard on a staged edit's diff card (`edit/resolve`, SPEC EDIT-3): the same
   * `resolve` tool call the model makes, through the registry as actor `user` (policy deny
   * rules, the write hook's diagnostics and the audit log apply to the click too).
   */
  editCards?: {
    resolve(
      chatId: string,
      editId: string,
      action: 'accept' | 'discard'
    ): Promise<{ ok: true; state: 'accepted' | 'discarded'; message: string } | { ok: false; message: string }>;
  };
  /** "Accept new outputs" on a verify card (`verify/accept`): `notebook_accept_outputs` through the registry as actor `user`. */
  verifyCards?: { accept(chatId: string, runId: string, path: string): Promise<{ ok: boolean; message: string }> };
  /** Tool metrics (`audit/metrics`). */
  audit?: Pick<AuditLog, 'metrics'>;
  /** The notebook port: a person's pane serves server → pane requests. */
  panes?: { attach(connection: MessageConnection): Disposable };
  /** Each connection's focused notebook kernel (`chat/context`, SPEC EVAL-2). */
  focus?: KernelFocusSink;
  /** Plan approvals (`plan/resolve`, the plan card's Approve / Reject; MODE-3). */
  plans?: Pick<PlanFlow, 'answer'>;
  /** Orchestration approvals (`orchestration/resolve`, the card's Approve / Reject, interactive connections only; MODE-5). */
  orchestrations?: Pick<OrchestrationFlow, 'answer'>;
  /** Debug sessions (`debug/terminate`, the debug card's button). */
  debug?: { terminate(chatId: string, sessionId?: string): Promise<unknown> };
  /** Installed skills (`skills/list`, `skills/set-enabled`; SKILL-2/3). */
  skills?: { list(): SkillInfo[]; setEnabled(folder: string, enabled: boolean): SkillInfo[] };
  /** Custom slash commands (`commands/list`, `commands/expand`). */
  commands?: { list(): CustomCommandInfo[]; expand(name: string, args: string): string };
  /** Configured MCP servers and their state (`mcp/servers`). */
  mcp?: { status(): Promise<McpServerStatus[]>; problems(): Promise<string[]> };
  /** A chat's background workers (`worker/list`, `worker/get`, `worker/kill`). */
  workers?: {
    list(chatId: string): WorkerSummary[];
    /** @throws ToolInputError when the worker is not the chat's */
    get(chatId: string, workerId: string): { worker: WorkerSummary; items: TranscriptItem[] };
    kill(chatId: string, workerId: string): Promise<{ ok: boolean; killed: boolean; message: string }>;
  };
  /** Inline completions in notebook cells (`inline/complete`), on the fast tier. */
  inline?: Pick<InlineCompletionService, 'complete'>;
  /** "Review changes" and the person's Approve on a finding (`review/start`, `review/approve`; MODE-4). */
  reviews?: Pick<ReviewFlow, 'start' | 'approve'>;
}

/** Receives the notebook kernel each pane has focused, keyed by its connection (an opaque key). */
export interface KernelFocusSink {
  setContext(connection: string, chatId: string | undefined, kernel: NotebookKernelRef | null): void;
  connectionClosed(connection: string): void;
}
