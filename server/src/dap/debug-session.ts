/**
 * One running debug session over one {@link DapChannel} (DBG-3), whatever the adapter:
 * tracks where the debuggee is stopped, waits for the next stop up to a bound (never
 * hangs: "still running" is an answer), keeps the debuggee's output (bounded), and gives
 * the stack / scopes / variables / evaluate views the `debug` tool and the pane card
 * show. Adapter specifics (how it starts, what "finished" means for a notebook cell) live
 * in the adapters (`kernel-adapter.ts`, `process-adapter.ts`).
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Emitter, type Event } from 'vscode-jsonrpc/node.js';
import type { DapChannel } from './protocol.js';

/** DBG-3 bounds. */
export const MAX_FRAMES = 30;
export const MAX_CHILDREN = 50;
export const MAX_VALUE_CHARS = 400;
/** An `evaluate` result longer than this is cut (expand it through its reference instead). */
export const MAX_EVALUATE_CHARS = 4000;
/** Output kept per session (older text is dropped, and the output view says how much). */
export const MAX_OUTPUT_CHARS = 200_000;

export type RunState = 'running' | 'stopped' | 'finished' | 'ended';

/** Where a source path comes from, for people: a file, or a notebook cell. */
export interface SourceInfo {
  /** `src/app.py`, or `analysis.ipynb cell 3 (id 1a2b)`. */
  label: string;
  lines: readonly string[];
  /** Set for a notebook cell. */
  cell?: { notebook: string; cellId?: string; index: number };
}

/** Resolves adapter paths to labels and lines (kernel cells → their notebook cell). */
export type SourceResolver = (path: string) => SourceInfo | undefined;

export interface StopInfo {
  reason: string;
  threadId?: number;
  description?: string;
  text?: string;
}

/** One frame as the tool and the card show it. */
export interface FrameView {
  id: number;
  name: string;
  path?: string;
  label: string;
  line: number;
  sourceLine?: string;
  cell?: SourceInfo['cell'];
}

export interface VariableView {
  name: string;
  value: string;
  type?: string;
  /** > 0 when it has children (pass to `variables`). */
  reference: number;
  truncated: boolean;
}

/** What the session's end was. */
export interface SessionEnd {
  reason: 'terminated' | 'ttl' | 'adapter-exited' | 'finished';
  message: string;
}

export interface DebugSessionOptions {
  adapter: string;
  /** The program, or the notebook cell, being debugged. */
  target: string;
  /** Maps cell source paths to cells; files are read from disk otherwise. */
  sources?: SourceResolver;
  /**
   * The `evaluate` context. Default `repl` (debugpy: statements too). lldb-dap's `repl` is
   * its console: text whose first word is an lldb command runs as that command, and even an
   * expression answers in console form (`(int) $0 = 3`); so lldb says `watch`: always an
   * expression in the frame, answered as its value (an assignment still works).
   */
  evaluateContext?: 'repl' | 'watch';
  /** Runs when the session ends (for the adapter: kill the process, disconnect the kernel). */
  onEnd?: (end: SessionEnd) => Promise<void> | void;
}

export class DebugSession {
  readonly id = randomUUID().slice(0, 8);
  readonly startedAt = Date.now();
  readonly adapter: string;
  readonly target: string;
  private runState: RunState = 'running';
  private stop: StopInfo | undefined;
  private ended: SessionEnd | undefined;
  private cleanedUp: Promise<void> | undefined;
  private outputText = '';
  private droppedOutput = 0;
  private readonly changes = new Emitter<RunState>();
  /** Fires on every state change (the pane card listens). */
  readonly onDidChange: Event<RunState> = this.changes.event;
  private readonly fileCache = new Map<string, readonly string[] | undefined>();
  private readonly subscriptions: Array<{ dispose(): void }>;

  constructor(
    readonly channel: DapChannel,
    private readonly options: DebugSessionOptions
  ) {
    this.adapter = options.adapter;
    this.target = options.target;
    this.subscriptions = [
      channel.onEvent((e) => this.onEvent(e)),
      channel.onClose(
        (err) =>
          void this.end({
            reason: 'adapter-exited',
            message: `the ${this.adapter} debug adapter went away: ${err.message}`
          })
      )
    ];
  }

  get state(): RunState {
    return this.runState;
  }

  get stopInfo(): StopInfo | undefined {
    return this.runState === 'stopped' ? this.stop : undefined;
  }

  /** How the session ended, once it has. */
  get ending(): SessionEnd | undefined {
    return this.ended;
  }

  private setState(state: RunState): void {
    if (this.runState === 'ended') return;
    this.runState = state;
    this.changes.fire(state);
  }

  private onEvent(e: DebugProtocol.Event): void {
    const body = (e.body ?? {}) as Record<string, unknown>;
    switch (e.event) {
      case 'stopped':
        this.stop = {
          reason: String(body.reason ?? 'stopped'),
          ...(typeof body.threadId === 'number' ? { threadId: body.threadId } : {}),
          ...(typeof body.description === 'string' ? { description: body.description } : {}),
          ...(typeof body.text === 'string' ? { text: body.text } : {})
        };
        this.setState('stopped');
        break;
      case 'continued':
        if (this.runState === 'stopped') this.setState('running');
        break;
      case 'terminated':
      case 'exited':
        if (this.runState !== 'finished') this.setState('finished');
        break;
      case 'output': {
        const category = String(body.category ?? 'console');
        if ((category === 'stdout' || category === 'stderr') && typeof body.output === 'string')
          this.appendOutput(body.output);
        break;
      }
    }
  }

  /** Adds debuggee output (process adapters: `output` events; the kernel: the cell's streams). */
  appendOutput(text: string): void {
    this.outputText += text;
    if (this.outputText.length > MAX_OUTPUT_CHARS) {
      const cut = this.outputText.length - MAX_OUTPUT_CHARS;
      this.droppedOutput += cut;
      this.outputText = this.outputText.slice(cut);
    }
  }

  /** The debuggee's output so far and how many older characters were dropped. */
  output(): { text: string; dropped: number } {
    return { text: this.outputText, dropped: this.droppedOutput };
  }

  /** The debuggee ran to its end (the kernel adapter: the cell's execute finished). */
  markFinished(): void {
    this.setState('finished');
  }

  /** Marks the debuggee running before a resume request (its `stopped` may beat the response). */
  markRunning(): void {
    this.stop = undefined;
    this.setState('running');
  }

  /**
   * Resolves with the state once the debuggee stopped, finished or the session ended, or
   * with `running` after `ms` (or on abort) — it never waits longer than asked.
   */
  waitForStop(ms: number, signal?: AbortSignal): Promise<RunState> {
    if (this.runState !== 'running') return Promise.resolve(this.runState);
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        sub.dispose();
        signal?.removeEventListener('abort', done);
        resolve(this.runState);
      };
      const timer = setTimeout(done, ms);
      const sub = this.onDidChange((s) => s !== 'running' && done());
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** The thread to act on: the one asked for, else the stopped one, else the first. */
  async threadId(asked?: number): Promise<number> {
    if (asked !== undefined) return asked;
    if (this.stop?.threadId !== undefined) return this.stop.threadId;
    const { threads } = await this.channel.request('threads', undefined);
    const first = threads[0];
    if (!first) throw new Error('the debuggee has no threads');
    return first.id;
  }

  async threads(): Promise<DebugProtocol.Thread[]> {
    return (await this.channel.request('threads', undefined)).threads;
  }

  /** Up to {@link MAX_FRAMES} frames of a thread, each with its label and source line. */
  async stack(threadId?: number): Promise<{ frames: FrameView[]; total: number }> {
    const id = await this.threadId(threadId);
    const body = await this.channel.request('stackTrace', { threadId: id, startFrame: 0, levels: MAX_FRAMES });
    const frames = await Promise.all(body.stackFrames.slice(0, MAX_FRAMES).map((f) => this.frameView(f)));
    return { frames, total: body.totalFrames ?? frames.length };
  }

  private async frameView(f: DebugProtocol.StackFrame): Promise<FrameView> {
    const path = f.source?.path;
    const info = path ? await this.source(path) : undefined;
    const name = f.name.replace(/ \(Current frame\)$/, '');
    return {
      id: f.id,
      name,
      ...(path ? { path } : {}),
      label: info?.label ?? path ?? f.source?.name ?? '<unknown source>',
      line: f.line,
      ...(info?.lines[f.line - 1] !== undefined ? { sourceLine: info.lines[f.line - 1] } : {}),
      ...(info?.cell ? { cell: info.cell } : {})
    };
  }

  /** A path's label and lines: a known cell, else the file on disk (cached). */
  async source(path: string): Promise<SourceInfo | undefined> {
    const known = this.options.sources?.(path);
    if (known) return known;
    if (!this.fileCache.has(path)) {
      const text = await readFile(path, 'utf8').catch(() => undefined);
      this.fileCache.set(path, text?.split(/\r?\n/));
    }
    const lines = this.fileCache.get(path);
    return lines ? { label: path, lines } : undefined;
  }

  async scopes(frameId: number): Promise<DebugProtocol.Scope[]> {
    return (await this.channel.request('scopes', { frameId })).scopes;
  }

  /** Up to {@link MAX_CHILDREN} children of a reference, values cut at {@link MAX_VALUE_CHARS}. */
  async variables(reference: number): Promise<{ variables: VariableView[]; more: boolean }> {
    const body = await this.channel.request('variables', {
      variablesReference: reference,
      start: 0,
      count: MAX_CHILDREN + 1
    });
    const all = body.variables;
    return { variables: all.slice(0, MAX_CHILDREN).map(toView), more: all.length > MAX_CHILDREN };
  }

  /** Evaluates in a frame's own scope (default: the top frame of the stopped thread). */
  async evaluate(
    expression: string,
    frameId?: number
  ): Promise<{ result: string; type?: string; reference: number; frameId?: number }> {
    const frame = frameId ?? (this.runState === 'stopped' ? (await this.stack()).frames[0]?.id : undefined);
    const body = await this.channel.request('evaluate', {
      expression,
      context: this.options.evaluateContext ?? 'repl',
      ...(frame !== undefined ? { frameId: frame } : {})
    });
    const result =
      body.result.length > MAX_EVALUATE_CHARS
        ? `${body.result.slice(0, MAX_EVALUATE_CHARS)}… [cut at ${MAX_EVALUATE_CHARS} of ${body.result.length} characters]`
        : body.result;
    return {
      result,
      ...(body.type ? { type: body.type } : {}),
      reference: body.variablesReference,
      ...(frame !== undefined ? { frameId: frame } : {})
    };
  }

  /** Ends the session once (idempotent); the adapter's `onEnd` cleans up. */
  async end(end: SessionEnd): Promise<void> {
    if (this.ended) return;
    this.ended = end;
    this.runState = 'ended';
    this.changes.fire('ended');
    this.cleanedUp = (async () => {
      try {
        await this.options.onEnd?.(end);
      } finally {
        for (const s of this.subscriptions) s.dispose();
        this.channel.dispose();
        this.changes.dispose();
      }
    })();
    await this.cleanedUp;
  }

  /**
   * Resolves once an ended session has also left its adapter (the kernel's debugger is off,
   * the process adapter stopped); `ended` fires before that. Resolves at once for a session
   * that has not ended.
   */
  whenCleanedUp(): Promise<void> {
    return (this.cleanedUp ?? Promise.resolve()).catch(() => undefined);
  }
}

function toView(v: DebugProtocol.Variable): VariableView {
  const truncated = v.value.length > MAX_VALUE_CHARS;
  return {
    name: v.name,
    value: truncated ? `${v.value.slice(0, MAX_VALUE_CHARS)}…` : v.value,
    ...(v.type ? { type: v.type } : {}),
    reference: v.variablesReference,
    truncated
  };
}
