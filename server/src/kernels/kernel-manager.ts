/**
 * Which kernel an eval runs in (SPEC EVAL-2) and its lifecycle.
 *
 * - Python evals run in the kernel of the notebook the user has focused in the window the
 *   turn came from (each pane reports it with `chat/context`; {@link KernelFocus}) when that kernel's language is Python, over a Jupyter Server
 *   connection of our own (never the notebook's); JavaScript evals likewise when the
 *   focused notebook runs `cellmate-js`.
 * - Otherwise each chat gets a private kernel per language, started on first use:
 *   ipykernel from the project venv (`CELLMATE_PYTHON`, else `<repo>/.venv/bin/python`,
 *   else `python3`) or Cellmate's JS kernel, with the workspace as working directory.
 *
 * Evals on one kernel are serialized by its `EvalSession`. A kernel that died (or a cell
 * that would not stop) is replaced on the next eval, which says that state was lost.
 *
 * Private kernels are bounded: one that ran nothing for `idleMs`
 * (default 30 min, `CELLMATE_KERNEL_IDLE_MS`) is stopped — this is also how an idle
 * chat's kernel goes away — and the next eval says its state is gone; at most
 * `maxPrivateKernels` (default 4, `CELLMATE_MAX_PRIVATE_KERNELS`) run at once, past which
 * `acquire` fails with a {@link KernelLimitError} naming the chats that hold them; all are
 * stopped on `dispose()`, killed on process exit ({@link KernelManager.killAllNow}), and
 * exit by themselves when the companion dies (`JPY_PARENT_PID`).
 */
import {
  EvalSession,
  jsKernelArgv,
  launchKernel,
  pythonKernelArgv,
  type EvalLanguage,
  type KernelClient,
  type LaunchedKernel
} from '@cellmate/kernel-bridge';
import type { EvalKernelInfo, NotebookKernelRef } from '@cellmate/protocol';
import { cellmatePython } from '../workspace/cellmate-python.js';
import { childEnv } from '../security/child-env.js';
import { KernelFocus } from './kernel-focus.js';

/** A connection of our own to a kernel Jupyter Server manages. */
export interface NotebookKernelConnection {
  client: KernelClient;
  /** Fires when the kernel restarted (its state, and our helper, are gone). */
  onRestart(listener: () => void): void;
  /** Restarts the kernel (for `reset`). */
  restart(): Promise<void>;
}

/** Opens a connection to a Jupyter-Server-managed kernel (see `kernel-bridge/src/jupyter-server`). */
export type NotebookKernelConnector = (ref: NotebookKernelRef) => Promise<NotebookKernelConnection>;

export interface KernelManagerOptions {
  workspace: string;
  env?: NodeJS.ProcessEnv;
  /** Present when Cellmate runs inside Jupyter Server (shared notebook kernels). */
  connectNotebookKernel?: NotebookKernelConnector;
  /** Argv overrides (tests). */
  pythonArgv?: string[];
  jsArgv?: string[];
  /** Stop a private kernel after this long without an eval. Default {@link DEFAULT_KERNEL_IDLE_MS}. */
  idleMs?: number;
  /** Private kernels at once. Default {@link DEFAULT_MAX_PRIVATE_KERNELS}. */
  maxPrivateKernels?: number;
  /** A chat's title, for the limit error. */
  chatTitle?: (chatId: string) => string | undefined;
  /** Told when an idle kernel is stopped. */
  onReaped?: (chatId: string, language: EvalLanguage) => void;
}

export const DEFAULT_KERNEL_IDLE_MS = 30 * 60_000;
export const DEFAULT_MAX_PRIVATE_KERNELS = 4;

/** Starting one more private kernel would pass the cap. */
export class KernelLimitError extends Error {
  constructor(
    message: string,
    readonly holders: Array<{ chatId: string; language: EvalLanguage }>
  ) {
    super(message);
    this.name = 'KernelLimitError';
  }
}

/** One kernel as the eval tool uses it. */
export interface KernelHandle {
  readonly info: EvalKernelInfo;
  readonly session: EvalSession;
  /** Set by the eval tool when the kernel died or a cell would not stop. */
  broken: boolean;
  /**
   * Set by the debug tool while it debugs in this kernel: says where a cell is paused in
   * the kernel's debugger (undefined when nothing is paused). A paused kernel runs nothing
   * else, so the kernel runner refuses at once with this instead of queueing behind it.
   */
  pausedInDebugger?: () => string | undefined;
}

interface PrivateKernel extends KernelHandle {
  kernel: LaunchedKernel;
  /** Evals running or queued on it. */
  busy: number;
  lastUsed: number;
}

interface SharedKernel extends KernelHandle {
  connection: NotebookKernelConnection;
  restarted: boolean;
}

export interface AcquiredKernel {
  handle: KernelHandle;
  /** Things the result must say (a replaced kernel, a restart). */
  notes: string[];
}

const LANGUAGE_OF: Record<string, EvalLanguage> = { python: 'python', javascript: 'javascript' };

export class KernelManager {
  private readonly privates = new Map<string, Promise<PrivateKernel>>();
  private readonly shared = new Map<string, Promise<SharedKernel>>();
  /** Each connection's focused notebook kernel, and which connection each chat's turn came from. */
  readonly focus = new KernelFocus();
  private disposed = false;
  /** Keys whose kernel the reaper stopped (the next eval says so). */
  private readonly reaped = new Set<string>();
  private readonly reaper: NodeJS.Timeout;
  /** The started private kernels (`privates` also holds the ones still starting). */
  private readonly settled = new Map<string, PrivateKernel>();
  /** Kernels of {@link launchFresh} still running. */
  private readonly fresh = new Set<LaunchedKernel>();

  constructor(private readonly options: KernelManagerOptions) {
    this.reaper = setInterval(() => void this.reapIdle(), Math.max(50, Math.min(60_000, Math.floor(this.idleMs / 4))));
    this.reaper.unref();
  }

  private get idleMs(): number {
    return this.options.idleMs ?? DEFAULT_KERNEL_IDLE_MS;
  }

  /** The private kernels now running: which chat, which language, busy or idle since when. */
  privateKernels(): Array<{
    chatId: string;
    language: EvalLanguage;
    busy: boolean;
    idleSinceMs: number;
    pid: number | undefined;
  }> {
    return [...this.settled.entries()].map(([key, k]) => {
      const [chatId, language] = key.split('\u0000') as [string, EvalLanguage];
      return { chatId, language, busy: k.busy > 0, idleSinceMs: Date.now() - k.lastUsed, pid: k.kernel.pid };
    });
  }

  /** Stops private kernels idle for longer than the idle period (runs on a timer too). */
  async reapIdle(now = Date.now()): Promise<void> {
    const idle = [...this.settled.entries()].filter(([, k]) => k.busy === 0 && now - k.lastUsed >= this.idleMs);
    await Promise.all(
      idle.map(async ([key, k]) => {
        if (this.settled.get(key) !== k) return;
        this.privates.delete(key);
        this.settled.delete(key);
        this.reaped.add(key);
        const [chatId, language] = key.split('\u0000') as [string, EvalLanguage];
        this.options.onReaped?.(chatId, language);
        await k.kernel.shutdown(1000).catch(() => undefined);
      })
    );
  }

  /** SIGKILLs every private kernel now (synchronous: for `process.on('exit')`). */
  killAllNow(): void {
    for (const k of this.settled.values()) k.kernel.dispose();
    for (const k of this.fresh) k.dispose();
  }

  /** A connection's focused notebook kernel (`chat/context`); per chat when `chatId` is given. */
  setContext(connection: string, chatId: string | undefined, kernel: NotebookKernelRef | null): void {
    this.focus.set(connection, chatId, kernel);
  }

  /** The chat's turn runs for `connection` (see {@link KernelFocus}). */
  bindTurn(chatId: string, connection: string): void {
    this.focus.bindTurn(chatId, connection);
  }

  /** The connection closed (see {@link KernelFocus}). */
  connectionClosed(connection: string): void {
    this.focus.connectionClosed(connection);
  }

  /** The focused notebook kernel for a chat (as seen from `connection`, else its turn's), if it runs `language`. */
  focusedKernel(chatId: string, language: EvalLanguage, connection?: string): NotebookKernelRef | undefined {
    const ref = this.focus.kernelFor({ chatId, ...(connection !== undefined ? { connection } : {}) });
    if (!ref || !this.options.connectNotebookKernel) return undefined;
    const lang =
      LANGUAGE_OF[(ref.language ?? '').toLowerCase()] ??
      (ref.name.startsWith('python') ? 'python' : ref.name === 'cellmate-js' ? 'javascript' : undefined);
    return lang === language ? ref : undefined;
  }

  /** The kernel for one eval; starts, reconnects or replaces it as needed. */
  async acquire(
    chatId: string,
    language: EvalLanguage,
    opts: { reset?: boolean; connection?: string } = {}
  ): Promise<AcquiredKernel> {
    if (this.disposed) throw new Error('the kernel manager is disposed');
    const ref = this.focusedKernel(chatId, language, opts.connection);
    return ref ? this.acquireShared(ref, language, opts) : this.acquirePrivate(chatId, language, opts);
  }

  private async acquirePrivate(
    chatId: string,
    language: EvalLanguage,
    opts: { reset?: boolean }
  ): Promise<AcquiredKernel> {
    const key = `${chatId}\u0000${language}`;
    const notes: string[] = [];
    const existing = this.privates.get(key);
    if (existing) {
      const k = await existing.catch(() => undefined);
      if (k && !k.broken && !opts.reset && k.kernel.process.exitCode === null && k.kernel.process.signalCode === null) {
        k.lastUsed = Date.now(); // handed out: not idle (the reaper must not take it now)
        return { handle: k, notes };
      }
      this.privates.delete(key);
      if (k && this.settled.get(key) === k) this.settled.delete(key);
      if (k) {
        if (opts.reset)
          notes.push(`reset: started a clean ${language} kernel; all earlier variables and imports are gone.`);
        else
          notes.push(
            `The previous ${language} kernel of this chat died or had to be stopped; this eval runs in a new kernel, so earlier variables and imports are gone.`
          );
        await k.kernel.shutdown(1000).catch(() => undefined);
      }
    }
    if (this.reaped.delete(key)) {
      notes.push(
        `This chat's ${language} kernel was stopped after ${Math.round(this.idleMs / 60_000)} min without an eval; this eval runs in a new kernel, so earlier variables and imports are gone.`
      );
    }
    this.checkLimit(chatId, language);
    const starting = this.startPrivate(language);
    this.privates.set(key, starting);
    starting.then(
      (k) => this.privates.get(key) === starting && this.settled.set(key, k),
      () => this.privates.get(key) === starting && this.privates.delete(key)
    );
    return { handle: await starting, notes };
  }

  private checkLimit(chatId: string, language: EvalLanguage): void {
    const max = this.options.maxPrivateKernels ?? DEFAULT_MAX_PRIVATE_KERNELS;
    if (this.privates.size < max) return;
    const holders = [...this.privates.keys()].map((key) => {
      const [id, lang] = key.split('\u0000') as [string, EvalLanguage];
      return { chatId: id, language: lang };
    });
    const named = holders.map((h) => {
      const title = this.options.chatTitle?.(h.chatId);
      return `${title ? `"${title}" (${h.chatId})` : h.chatId}: ${h.language}`;
    });
    throw new KernelLimitError(
      `Cannot start a private ${language} kernel for chat ${chatId}: this companion already runs ${holders.length} private kernels, the limit ` +
        `(CELLMATE_MAX_PRIVATE_KERNELS=${max}). They belong to ${named.join('; ')}. Delete a chat you no longer need (its kernel stops), ` +
        `wait until one has been idle for ${Math.round(this.idleMs / 60_000)} min (idle kernels are stopped), or raise CELLMATE_MAX_PRIVATE_KERNELS and restart JupyterLab.`,
      holders
    );
  }

  private launch(language: EvalLanguage, cwd: string, signal?: AbortSignal): Promise<LaunchedKernel> {
    const argv =
      language === 'python'
        ? (this.options.pythonArgv ?? pythonKernelArgv(this.python()))
        : (this.options.jsArgv ?? jsKernelArgv());
    return launchKernel({
      argv,
      cwd,
      // Secrets stay out (security/child-env.ts); the kernel exits when the companion dies (JPY_PARENT_PID).
      env: childEnv(this.options.env ?? process.env, {
        MPLBACKEND: 'module://matplotlib_inline.backend_inline',
        JPY_PARENT_PID: String(process.pid)
      }),
      kernelName: language === 'python' ? 'python3' : 'cellmate-js',
      ...(signal ? { signal } : {})
    });
  }

  /**
   * A fresh kernel that belongs to no chat (`notebook_verify`: one per notebook, in the
   * notebook's folder). The caller shuts it down; until then it counts as the manager's, so
   * `killAllNow` and `dispose` end it too. Not bounded by `maxPrivateKernels`: the caller
   * bounds how many run at once.
   */
  async launchFresh(language: EvalLanguage, cwd: string, signal?: AbortSignal): Promise<LaunchedKernel> {
    if (this.disposed) throw new Error('the kernel manager is disposed');
    const kernel = await this.launch(language, cwd, signal);
    this.fresh.add(kernel);
    void kernel.exited.then(() => this.fresh.delete(kernel));
    if (this.disposed) kernel.dispose();
    return kernel;
  }

  private async startPrivate(language: EvalLanguage): Promise<PrivateKernel> {
    const kernel = await this.launch(language, this.options.workspace);
    const name = language === 'python' ? 'python3' : 'cellmate-js';
    const k: PrivateKernel = {
      kernel,
      broken: false,
      busy: 0,
      lastUsed: Date.now(),
      session: new EvalSession(kernel.client, language),
      info: { id: `private-${kernel.pid}`, name, language, origin: 'private' }
    };
    // Idle time counts from the end of the last eval; a running eval is never reaped.
    const run = k.session.run.bind(k.session);
    k.session.run = (req) => {
      k.busy++;
      k.lastUsed = Date.now();
      return run(req).finally(() => {
        k.busy--;
        k.lastUsed = Date.now();
      });
    };
    return k;
  }

  private python(): string {
    return cellmatePython(this.options.env ?? process.env) ?? 'python3';
  }

  private async acquireShared(
    ref: NotebookKernelRef,
    language: EvalLanguage,
    opts: { reset?: boolean }
  ): Promise<AcquiredKernel> {
    const notes: string[] = [];
    let entry = this.shared.get(ref.id);
    if (!entry) {
      entry = this.connectShared(ref, language);
      this.shared.set(ref.id, entry);
      entry.catch(() => this.shared.get(ref.id) === entry && this.shared.delete(ref.id));
    }
    const k = await entry;
    if (opts.reset) {
      await k.connection.restart();
      k.session.kernelRestarted();
      k.restarted = false;
      k.broken = false;
      notes.push(
        `reset: restarted the notebook's kernel (${ref.notebookPath ?? ref.name}); its variables are gone, for the notebook too.`
      );
    } else if (k.restarted || k.broken) {
      k.session.kernelRestarted();
      k.restarted = false;
      k.broken = false;
      notes.push(
        `The notebook's kernel restarted since the last eval (or died); earlier variables and imports are gone.`
      );
    }
    return { handle: k, notes };
  }

  private async connectShared(ref: NotebookKernelRef, language: EvalLanguage): Promise<SharedKernel> {
    const connection = await this.options.connectNotebookKernel!(ref);
    const k: SharedKernel = {
      connection,
      broken: false,
      restarted: false,
      session: new EvalSession(connection.client, language),
      info: {
        id: ref.id,
        name: ref.name,
        language,
        origin: 'notebook',
        ...(ref.notebookPath ? { notebookPath: ref.notebookPath } : {})
      }
    };
    connection.onRestart(() => {
      k.restarted = true;
      k.session.kernelRestarted();
    });
    return k;
  }

  /** Stops the private kernels of chats that no longer exist (deleted chats). */
  async retainChats(chatIds: ReadonlySet<string>): Promise<void> {
    const gone = [...this.privates.entries()].filter(([key]) => !chatIds.has(key.split('\u0000')[0]!));
    for (const [key] of gone) {
      this.privates.delete(key);
      this.settled.delete(key);
    }
    this.reaped.forEach((key) => !chatIds.has(key.split('\u0000')[0]!) && this.reaped.delete(key));
    this.focus.retainChats(chatIds);
    await Promise.all(
      gone.map(([, p]) =>
        p.then(
          (k) => k.kernel.shutdown(2000),
          () => undefined
        )
      )
    );
  }

  /**
   * Stops the private kernels of one owner (a killed worker) and resolves
   * once their processes exited; returns their pids.
   */
  async releaseChat(chatId: string): Promise<number[]> {
    const keys = [...this.privates.keys()].filter((key) => key.split('\u0000')[0] === chatId);
    const starting = keys.map((key) => this.privates.get(key)!);
    for (const key of keys) {
      this.privates.delete(key);
      this.settled.delete(key);
      this.reaped.delete(key);
    }
    const stopped = await Promise.all(
      starting.map((p) =>
        p.then(
          async (k) => {
            await k.kernel.shutdown(1000).catch(() => undefined);
            return k.kernel.pid;
          },
          () => undefined
        )
      )
    );
    return stopped.filter((pid): pid is number => typeof pid === 'number');
  }

  /** Stops private kernels and closes notebook-kernel connections. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    clearInterval(this.reaper);
    const privates = [...this.privates.values()];
    this.settled.clear();
    const shared = [...this.shared.values()];
    this.privates.clear();
    this.shared.clear();
    const fresh = [...this.fresh];
    await Promise.all([
      ...fresh.map((k) => k.shutdown(1000).catch(() => undefined)),
      ...privates.map((p) =>
        p.then(
          (k) => k.kernel.shutdown(2000),
          () => undefined
        )
      ),
      ...shared.map((s) =>
        s.then(
          (k) => k.connection.client.dispose(),
          () => undefined
        )
      )
    ]);
  }
}
