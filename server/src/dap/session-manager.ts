/**
 * Debug sessions per conversation (DBG-2): at most one per chat, with a hard TTL (30 min by
 * default; `CELLMATE_DEBUG_TTL_MS` / the `ttlMs` option for tests). A second start is
 * refused naming the running session. Breakpoints and exception filters are kept per chat
 * so they can be set before a launch and re-applied to the next session. A session that
 * ended by itself (TTL, adapter died) is reported once, on the chat's next debug call.
 */
import { Emitter, type Event } from 'vscode-jsonrpc/node.js';
import type { DebugSession, SessionEnd } from './debug-session.js';
import type { BreakpointResult, KernelDebugTarget, LineBreakpoint } from './kernel-adapter.js';

export const DEFAULT_DEBUG_TTL_MS = 30 * 60_000;
/** How long `continue`/steps/`launch`/`run_cell` wait for the next stop before "still running". */
export const DEFAULT_STOP_WAIT_MS = 20_000;

/** Breakpoints of one source: a file (absolute path) or a notebook cell. */
export type BreakpointSource =
  { kind: 'file'; path: string; relative: string } | { kind: 'cell'; notebook: string; cell: string };

/** One file's breakpoints as the adapter answered them at the start. */
export interface BreakpointReport {
  where: string;
  results: BreakpointResult[];
  /** The file's lines, to show each breakpoint's source. */
  lines: string[];
}

export interface SourceBreakpoints {
  source: BreakpointSource;
  lines: LineBreakpoint[];
}

/** A live session and what only its adapter can do. */
export interface ActiveDebug {
  session: DebugSession;
  /** Present for the `kernel` adapter (run_cell, cell breakpoints). */
  kernel?: KernelDebugTarget;
  /** The breakpoint verdicts the start received, per file; the debug tool words them. */
  breakpoints?: BreakpointReport[];
  /** The adapter process (process adapters). */
  pid?: number;
  /** The notebook whose own kernel is debugged (kernel adapter on a notebook's kernel). */
  notebook?: string;
}

/** What `launch` / `attach` asked for (the debug tool's arguments). */
export interface LaunchRequest {
  action: 'launch' | 'attach';
  adapter?: 'debugpy' | 'lldb' | 'delve';
  program?: string;
  args?: string[];
  cwd?: string;
  env?: Record<string, string>;
  port?: number;
}

/** Starts a process adapter session (`process-adapter.ts`); the manager registers it. */
export type ProcessLauncher = (
  req: LaunchRequest,
  ctx: { workspace: string },
  state: ChatDebugState
) => Promise<ActiveDebug>;

/** One chat's debugging state. */
export interface ChatDebugState {
  /** Keyed by {@link sourceKey}. */
  breakpoints: Map<string, SourceBreakpoints>;
  exceptionFilters: string[];
  active?: ActiveDebug;
  /** How the previous session ended, until it was reported. */
  unreported?: SessionEnd & { sessionId: string; adapter: string };
}

/** The running session a second start was refused for. */
export class SessionRunningError extends Error {
  constructor(readonly session: DebugSession) {
    super(
      `A debug session is already running in this chat: ${describeSession(session)}. ` +
        'One session per chat: call debug with action "terminate" first, then launch again.'
    );
    this.name = 'SessionRunningError';
  }
}

/** `session 1a2b3c4d (debugpy: app.py, stopped, started 3 min ago)`. */
export function describeSession(s: DebugSession): string {
  const mins = Math.floor((Date.now() - s.startedAt) / 60_000);
  return `session ${s.id} (${s.adapter}: ${s.target}, ${s.state}, started ${mins < 1 ? 'less than a minute' : `${mins} min`} ago)`;
}

/** Identity of a breakpoint source within a chat. */
export function sourceKey(s: BreakpointSource): string {
  return s.kind === 'file' ? `file:${s.path}` : `cell:${s.notebook}\u0000${s.cell}`;
}

export interface DebugSessionManagerOptions {
  ttlMs?: number;
  stopWaitMs?: number;
}

export class DebugSessionManager {
  readonly ttlMs: number;
  readonly stopWaitMs: number;
  private readonly chats = new Map<string, ChatDebugState>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly changes = new Emitter<{ chatId: string; session: DebugSession }>();
  /** A session of some chat changed state (started, stopped, resumed, ended). */
  readonly onDidChange: Event<{ chatId: string; session: DebugSession }> = this.changes.event;

  constructor(options: DebugSessionManagerOptions = {}) {
    this.ttlMs = options.ttlMs ?? DEFAULT_DEBUG_TTL_MS;
    this.stopWaitMs = options.stopWaitMs ?? DEFAULT_STOP_WAIT_MS;
  }

  /** The chat's state (created empty on first use). */
  chat(chatId: string): ChatDebugState {
    let s = this.chats.get(chatId);
    if (!s) {
      s = { breakpoints: new Map(), exceptionFilters: [] };
      this.chats.set(chatId, s);
    }
    return s;
  }

  /** Throws {@link SessionRunningError} when the chat has a session. */
  assertNoSession(chatId: string): void {
    const active = this.chats.get(chatId)?.active;
    if (active) throw new SessionRunningError(active.session);
  }

  /** Registers a started session: TTL timer, end bookkeeping. Refuses a second one. */
  begin(chatId: string, active: ActiveDebug): void {
    const state = this.chat(chatId);
    if (state.active) {
      void active.session.end({ reason: 'terminated', message: 'refused: another session runs in this chat' });
      throw new SessionRunningError(state.active.session);
    }
    state.active = active;
    state.unreported = undefined;
    const { session } = active;
    const timer = setTimeout(() => {
      void session.end({
        reason: 'ttl',
        message: `the session reached its ${formatMs(this.ttlMs)} limit and was terminated (its adapter stopped)`
      });
    }, this.ttlMs);
    timer.unref();
    this.timers.set(session.id, timer);
    session.onDidChange((runState) => {
      this.changes.fire({ chatId, session });
      if (runState !== 'ended') return;
      clearTimeout(this.timers.get(session.id));
      this.timers.delete(session.id);
      if (state.active?.session !== session) return;
      state.active = undefined;
      const end = session.ending;
      if (end && end.reason !== 'terminated')
        state.unreported = { ...end, sessionId: session.id, adapter: session.adapter };
    });
    this.changes.fire({ chatId, session });
  }

  /** Takes the chat's "previous session ended" notice, if any (shown once). */
  takeUnreported(chatId: string): string | undefined {
    const state = this.chats.get(chatId);
    const u = state?.unreported;
    if (!state || !u) return undefined;
    state.unreported = undefined;
    return `Note: the previous debug session ${u.sessionId} (${u.adapter}) ended: ${u.message}.`;
  }

  /** Terminates the chat's session, if any (and if it is `sessionId`, when given). */
  async terminate(chatId: string, sessionId?: string): Promise<DebugSession | undefined> {
    const active = this.chats.get(chatId)?.active;
    if (!active || (sessionId !== undefined && active.session.id !== sessionId)) return undefined;
    await active.session.end({ reason: 'terminated', message: 'terminated on request' });
    return active.session;
  }

  /** Forgets chats that no longer exist (their sessions end). */
  async retainChats(chatIds: ReadonlySet<string>): Promise<void> {
    const gone = [...this.chats.keys()].filter((id) => !chatIds.has(id));
    await Promise.all(gone.map((id) => this.terminate(id)));
    for (const id of gone) this.chats.delete(id);
  }

  /** Ends every session (their adapters stop). */
  async dispose(): Promise<void> {
    await Promise.all([...this.chats.keys()].map((id) => this.terminate(id)));
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.changes.dispose();
  }
}

function formatMs(ms: number): string {
  return ms >= 60_000 ? `${Math.round(ms / 60_000)}-minute` : `${Math.round(ms / 1000)}-second`;
}
