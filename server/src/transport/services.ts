import type { McpServerStatus, NotebookKernelRef } from '@cellmate/protocol';
import type { Disposable, MessageConnection } from 'vscode-jsonrpc/node.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { ChatService } from '../chats/chat-service.js';
import type { Presence } from '../questions/presence.js';
import type { QuestionBroker } from '../questions/question-broker.js';
import type { StagedEdits } from '../structural/staged-edits.js';

/**
 * Everything one JSON-RPC connection is served from, composed once in `server.ts` (issue #9:
 * wiring in one place). The transport reaches these directly; the chats layer knows nothing
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
  /** Staged structural edits a person accepts or discards on the diff card (`edit/resolve`, SPEC EDIT-3). */
  edits?: Pick<StagedEdits, 'resolve' | 'get'>;
  /** Tool metrics (`audit/metrics`). */
  audit?: Pick<AuditLog, 'metrics'>;
  /** The notebook port: a person's pane serves server → pane requests (issue #5). */
  panes?: { attach(connection: MessageConnection): Disposable };
  /** Each connection's focused notebook kernel (`chat/context`, SPEC EVAL-2). */
  focus?: KernelFocusSink;
  /** Debug sessions (`debug/terminate`, the debug card's button; issue #12). */
  debug?: { terminate(chatId: string, sessionId?: string): Promise<unknown> };
  /** Configured MCP servers and their state (`mcp/servers`, issue #14). */
  mcp?: { status(): Promise<McpServerStatus[]> };
}

/** Receives the notebook kernel each pane has focused, keyed by its connection (an opaque key). */
export interface KernelFocusSink {
  setContext(connection: string, chatId: string | undefined, kernel: NotebookKernelRef | null): void;
  connectionClosed(connection: string): void;
}
