/**
 * Which notebook kernel each browser window has focused (SPEC EVAL-2), keyed by
 * connection: two windows on two notebooks never overwrite each other's focus, and one
 * window's agent never evals in the notebook another window has open.
 *
 * - A pane reports its focus with `chat/context` on its own connection (optionally per chat).
 * - A turn uses the focus of the connection that started it: `chat/send`, `chat/retry` and
 *   `chat/edit` bind the chat to their connection ({@link KernelFocus.bindTurn}); the turn's
 *   evals, `notebook_run` on a closed notebook and `tool()` calls from cells all resolve
 *   through that binding. A chat open in two windows therefore evals in the notebook of the
 *   window its current turn came from; the focus is read at each eval, so switching notebooks
 *   in that window mid-turn moves later evals too.
 * - A turn may outlive its connection (the window closed or reconnected): the closed
 *   connection's last focus stays in effect for the chats bound to it until they are bound
 *   elsewhere (their next turn) or deleted; then it is forgotten.
 * - Without a known connection (bare tests, a chat never sent from a pane) there is no focus:
 *   evals use the chat's private kernel.
 */
import type { NotebookKernelRef } from '@cellmate/protocol';

interface ConnectionFocus {
  kernel: NotebookKernelRef | null;
  /** Per-chat overrides (`chat/context` with a `chatId`). */
  chats: Map<string, NotebookKernelRef | null>;
  open: boolean;
}

/** Who asks for the focus: a chat, and the connection asking, when there is one. */
export interface FocusQuery {
  chatId: string;
  /** The connection the request came from; else the one that started the chat's turn. */
  connection?: string;
}

export class KernelFocus {
  private readonly connections = new Map<string, ConnectionFocus>();
  /** chatId → the connection that started its latest turn. */
  private readonly turnOrigin = new Map<string, string>();

  /** A connection's focused kernel (`chat/context`); per chat when `chatId` is given. */
  set(connection: string, chatId: string | undefined, kernel: NotebookKernelRef | null): void {
    const entry = this.entry(connection);
    if (chatId) entry.chats.set(chatId, kernel);
    else entry.kernel = kernel;
  }

  /** The chat's turn now runs for `connection`: its evals use that connection's focus. */
  bindTurn(chatId: string, connection: string): void {
    const previous = this.turnOrigin.get(chatId);
    this.turnOrigin.set(chatId, connection);
    this.entry(connection);
    if (previous && previous !== connection) this.prune(previous);
  }

  /** The connection went away; its focus lives on only for the chats still bound to it. */
  connectionClosed(connection: string): void {
    const entry = this.connections.get(connection);
    if (!entry) return;
    entry.open = false;
    this.prune(connection);
  }

  /** The kernel a chat's eval should use, or null (then: the chat's private kernel). */
  kernelFor(query: FocusQuery): NotebookKernelRef | null {
    const connection = query.connection ?? this.turnOrigin.get(query.chatId);
    const entry = connection === undefined ? undefined : this.connections.get(connection);
    if (!entry) return null;
    return entry.chats.has(query.chatId) ? entry.chats.get(query.chatId)! : entry.kernel;
  }

  /** Forgets chats that no longer exist. */
  retainChats(chatIds: ReadonlySet<string>): void {
    for (const [chatId, connection] of [...this.turnOrigin]) {
      if (chatIds.has(chatId)) continue;
      this.turnOrigin.delete(chatId);
      this.prune(connection);
    }
    for (const entry of this.connections.values())
      for (const id of [...entry.chats.keys()]) if (!chatIds.has(id)) entry.chats.delete(id);
  }

  /** Connections remembered (tests: a closed, unbound connection is forgotten). */
  get size(): number {
    return this.connections.size;
  }

  private entry(connection: string): ConnectionFocus {
    let entry = this.connections.get(connection);
    if (!entry) {
      entry = { kernel: null, chats: new Map(), open: true };
      this.connections.set(connection, entry);
    }
    return entry;
  }

  private prune(connection: string): void {
    const entry = this.connections.get(connection);
    if (!entry || entry.open) return;
    for (const c of this.turnOrigin.values()) if (c === connection) return;
    this.connections.delete(connection);
  }
}
