/**
 * The `kernel` adapter (DBG-4): the notebook kernel's own debugger, so breakpoints sit in
 * notebook cells. The request sequence is JupyterLab's (`packages/debugger`) and checked on
 * ipykernel 7.4 + debugpy 1.8 (FACTS): `debugInfo` → `initialize` → `attach` → per cell
 * `dumpCell` (the cell's source path, a hash of its code) → `setBreakpoints` on that path →
 * `configurationDone` → execute the same code → `stopped` events on IOPub. The cell's
 * execute finishing is the debuggee's "finished". Ending the session sends `disconnect`
 * (debugpy lets a stopped cell run on); the kernel and its variables stay.
 */
import type { ExecuteResult, KernelClient } from '@cellmate/kernel-bridge';
import { DebugSession, type FrameView, type SessionEnd, type SourceInfo } from './debug-session.js';
import { KernelDapChannel } from './kernel-channel.js';
import type { DebugProtocol } from './protocol.js';

/** A notebook cell and its code, as the kernel will run it. */
export interface DebugCell {
  /** Workspace-relative notebook path. */
  notebook: string;
  cellId?: string;
  /** 0-based. */
  index: number;
  code: string;
}

/** One line breakpoint as asked for. */
export interface LineBreakpoint {
  line: number;
  condition?: string;
}

/** A breakpoint as the adapter answered: verified or not, and why. */
export interface BreakpointResult extends LineBreakpoint {
  verified: boolean;
  message?: string;
  /** The line the adapter moved it to, when it did. */
  actualLine?: number;
}

/** `raised` / `uncaught` → debugpy's filters. IPython catches every cell's exception, so
 * "uncaught" in a cell is debugpy's `userUnhandled` (leaves user code), not `uncaught`. */
const KERNEL_EXCEPTION_FILTERS: Record<string, string> = { raised: 'raised', uncaught: 'userUnhandled' };

/** How a cell's run ended. */
export interface CellRunEnd {
  status: 'ok' | 'error' | 'aborted' | 'failed';
  /** `ValueError: boom` for a cell that raised; the failure for `failed`. */
  detail?: string;
}

/** The kernel debugger session plus the notebook-cell operations only it has. */
export class KernelDebugTarget {
  private readonly cells = new Map<string, SourceInfo>();
  /** The line breakpoints this session set, by the kernel's source path of each cell. */
  private readonly cellBreakpoints = new Map<string, readonly LineBreakpoint[]>();
  private running: Promise<ExecuteResult> | undefined;
  private lastRun: CellRunEnd | undefined;
  /** The cell running under the debugger, and the top frame of its current stop. */
  private runningCell: string | undefined;
  private stoppedFrame: FrameView | undefined;

  private constructor(
    readonly session: DebugSession,
    private readonly channel: KernelDapChannel,
    private readonly client: KernelClient,
    /** The debugger was already on (JupyterLab's debugger panel): we joined it, and leave it on. */
    readonly joined: boolean
  ) {
    session.onDidChange((state) => {
      this.stoppedFrame = undefined;
      if (state !== 'stopped') return;
      void session.stack().then(
        ({ frames }) => {
          if (session.state === 'stopped') this.stoppedFrame = frames[0];
        },
        () => undefined
      );
    });
  }

  /**
   * Where a cell is paused in this kernel's debugger (`the kernel is paused in the debugger
   * at nb.ipynb cell 2 (id c2), line 3: total += i (debug session ab12)`), or undefined when
   * no cell is paused. Other runs in the kernel are refused with it (see `KernelHandle`).
   */
  pausedAt(): string | undefined {
    if (this.session.state !== 'stopped' || !this.running) return undefined;
    const f = this.stoppedFrame;
    const where = f
      ? `${f.label}, line ${f.line}${f.sourceLine !== undefined ? `: ${f.sourceLine.trim()}` : ''}`
      : (this.runningCell ?? 'a cell');
    return `The kernel is paused in the debugger at ${where} (debug session ${this.session.id})`;
  }

  /**
   * Starts (or joins) the kernel's debugger. `kernelLabel` names the kernel in messages
   * (`the notebook's kernel (analysis.ipynb)` / `this chat's private kernel`).
   */
  static async start(
    client: KernelClient,
    opts: { kernelLabel: string; onEnd?: (end: SessionEnd) => void }
  ): Promise<KernelDebugTarget> {
    const channel = new KernelDapChannel(client);
    let target: KernelDebugTarget | undefined;
    const session = new DebugSession(channel, {
      adapter: 'kernel',
      target: opts.kernelLabel,
      sources: (path) => target?.cells.get(path),
      onEnd: async (end) => {
        await target?.stop();
        opts.onEnd?.(end);
      }
    });
    try {
      const info = await channel.request('debugInfo', undefined);
      if (!info.isStarted) {
        await channel.request('initialize', {
          clientID: 'cellmate',
          clientName: 'Cellmate',
          adapterID: 'python',
          pathFormat: 'path',
          linesStartAt1: true,
          columnsStartAt1: true,
          supportsVariableType: true,
          locale: 'en'
        });
        // justMyCode: "raised" then stops in the cell, not in IPython's own imports.
        await channel.request('attach', { justMyCode: true });
      }
      target = new KernelDebugTarget(session, channel, client, info.isStarted);
      session.markFinished(); // nothing runs until run_cell
      return target;
    } catch (e) {
      await session.end({ reason: 'adapter-exited', message: (e as Error).message });
      throw e;
    }
  }

  /** The cell's path in the kernel (`dumpCell`), remembered so frames map back to the cell. */
  private async dump(cell: DebugCell): Promise<string> {
    const { sourcePath } = await this.channel.request('dumpCell', { code: cell.code });
    const label = `${cell.notebook} cell ${cell.index + 1}${cell.cellId ? ` (id ${cell.cellId})` : ''}`;
    this.cells.set(sourcePath, {
      label,
      lines: cell.code.split(/\r?\n/),
      cell: { notebook: cell.notebook, index: cell.index, ...(cell.cellId ? { cellId: cell.cellId } : {}) }
    });
    return sourcePath;
  }

  /** Sets a cell's breakpoints (replacing its earlier ones); answers what the debugger verified. */
  async setCellBreakpoints(cell: DebugCell, breakpoints: readonly LineBreakpoint[]): Promise<BreakpointResult[]> {
    const path = await this.dump(cell);
    const body = await this.channel.request('setBreakpoints', {
      source: { path },
      breakpoints: breakpoints.map((b) => ({ line: b.line, ...(b.condition ? { condition: b.condition } : {}) })),
      sourceModified: false
    });
    if (breakpoints.length) this.cellBreakpoints.set(path, [...breakpoints]);
    else this.cellBreakpoints.delete(path);
    return breakpoints.map((b, i) => verdict(b, body.breakpoints[i]));
  }

  /** The cells' breakpoints this session holds: kernel source path → lines (the pane draws them in JupyterLab's gutter). */
  breakpointList(): Array<{ source: string; lines: number[] }> {
    return [...this.cellBreakpoints].map(([source, bps]) => ({ source, lines: bps.map((b) => b.line) }));
  }

  /**
   * Sets this session's cell breakpoints again, before the debuggee resumes. Another client
   * of the same kernel debugger may have replaced them meanwhile: JupyterLab's debugger
   * writes its own merged view back to the kernel whenever it restores its state (the pane
   * asks it to, to draw the agent's breakpoints), and a write based on a read from before
   * the agent's last change would undo that change. The agent's breakpoints are the ones in
   * force when its debuggee runs.
   */
  async reassertBreakpoints(): Promise<void> {
    for (const [path, bps] of this.cellBreakpoints) {
      await this.channel.request('setBreakpoints', {
        source: { path },
        breakpoints: bps.map((b) => ({ line: b.line, ...(b.condition ? { condition: b.condition } : {}) })),
        sourceModified: false
      });
    }
  }

  /** `raised` / `uncaught` (see {@link KERNEL_EXCEPTION_FILTERS}). */
  async setExceptionFilters(filters: readonly string[]): Promise<void> {
    await this.channel.request('setExceptionBreakpoints', {
      filters: filters.map((f) => KERNEL_EXCEPTION_FILTERS[f] ?? f)
    });
  }

  /** Whether a cell is executing under the debugger now. */
  get busy(): boolean {
    return this.running !== undefined;
  }

  /** How the last cell run ended (undefined while one runs). */
  get lastCellRun(): CellRunEnd | undefined {
    return this.running ? undefined : this.lastRun;
  }

  /**
   * Executes a cell with its breakpoints (set them first with {@link setCellBreakpoints}).
   * Returns at once; wait with `session.waitForStop`. Its streams go to the session output.
   */
  async runCell(cell: DebugCell): Promise<void> {
    if (this.running) throw new Error('a cell is already running under the debugger');
    await this.dump(cell);
    await this.channel.request('configurationDone', undefined);
    this.lastRun = undefined;
    this.runningCell = `${cell.notebook} cell ${cell.index + 1}${cell.cellId ? ` (id ${cell.cellId})` : ''}`;
    this.session.markRunning();
    const run = this.client.execute(cell.code, {
      storeHistory: true,
      onIOPub: (m) => {
        if (m.header.msg_type === 'stream') this.session.appendOutput((m.content as { text: string }).text);
        if (m.header.msg_type === 'error') {
          const c = m.content as { ename: string; evalue: string };
          this.session.appendOutput(`${c.ename}: ${c.evalue}\n`);
        }
      }
    });
    this.running = run;
    run
      .then(
        (r) => {
          const c = r.reply.content;
          this.lastRun =
            c.status === 'ok'
              ? { status: 'ok' }
              : c.status === 'error'
                ? { status: 'error', detail: `${c.ename}: ${c.evalue}` }
                : { status: 'aborted' };
        },
        (e: Error) => {
          this.lastRun = { status: 'failed', detail: e.message };
          const code = (e as { code?: string }).code;
          if (code === 'kernel_dead') this.channel.close(e);
        }
      )
      .finally(() => {
        if (this.running === run) this.running = undefined;
        this.session.markFinished();
      });
  }

  /** Leaves the kernel's debugger (unless we joined a running one); a stopped cell runs on. */
  private async stop(): Promise<void> {
    if (this.joined) {
      // Someone else's debugger (JupyterLab's panel): only let a stopped cell go on.
      if (this.session.stopInfo?.threadId !== undefined) {
        await this.channel.request('continue', { threadId: this.session.stopInfo.threadId }).catch(() => undefined);
      }
      return;
    }
    await this.channel
      .request('disconnect', { restart: false, terminateDebuggee: false }, { timeoutMs: 10_000 })
      .catch(() => undefined);
  }
}

/** The adapter's answer for one asked breakpoint. */
export function verdict(asked: LineBreakpoint, got: DebugProtocol.Breakpoint | undefined): BreakpointResult {
  return {
    ...asked,
    verified: got?.verified === true,
    ...(got?.message ? { message: got.message } : {}),
    ...(got?.line !== undefined && got.line !== asked.line ? { actualLine: got.line } : {})
  };
}
