/**
 * `ProcessSupervisor<T>`: the one owner of a long-lived helper process — a language server,
 * a debug adapter — and of the client `T` built on it. See README.md.
 *
 * - Lazy: nothing runs until the first {@link ProcessSupervisor.get}; concurrent callers
 *   share one start. `connect(process)` builds the client (framing, handshake); the start
 *   fails when the process cannot spawn, exits first, `connect` throws, or it takes longer
 *   than `startTimeoutMs`.
 * - A failed start is cached for `failedStartRetryMs`: `get()` rejects at once with a
 *   {@link SupervisorError} that says why, quotes the end of stderr, and when it retries —
 *   a broken server is not respawned on every call. `reload()` retries now.
 * - A crash (an exit nobody asked for) is logged with the end of stderr and the process is
 *   started again after a backoff (`backoffInitialMs` doubling to `backoffMaxMs`, reset after
 *   a run of `healthyAfterMs`); callers during the backoff wait for that start. `maxCrashes`
 *   crashes in a row without a healthy run make it a failed start.
 * - Own process group, stderr to the log, environment scrubbed (`process-group.ts`); the
 *   whole group is killed on stop and dispose.
 * - Idle eviction: stopped after `idleMs` without a `get()`, unless a `hold()` is open.
 */
import { Emitter, type Disposable, type Event } from 'vscode-jsonrpc/node.js';
import type { Logger } from '../config/logger.js';
import { describeExit, GroupProcess, type ExitInfo, type SpawnSpec } from './process-group.js';
import { SupervisorError } from './supervisor-error.js';

/** What {@link ProcessSupervisor} needs to run one kind of process. */
export interface ProcessSupervisorOptions<T> {
  /** For logs and errors, e.g. `basedpyright (/work/repo)`. */
  name: string;
  spawn: SpawnSpec;
  /** Builds the client on a freshly started process; throwing means the start failed. */
  connect(process: GroupProcess, signal: AbortSignal): Promise<T>;
  /** A polite goodbye before the group is killed (LSP `shutdown`/`exit`, DAP `disconnect`); bounded by `stopGraceMs`. */
  shutdown?(client: T, signal: AbortSignal): Promise<void>;
  /** Releases the client once its process is gone (dispose the connection). */
  disposeClient?(client: T): void;
  log: Logger;
  /** Appended to a failed start's message, e.g. `call lsp with action "reload" to retry now`. */
  retryHint?: string;
  startTimeoutMs?: number;
  stopGraceMs?: number;
  failedStartRetryMs?: number;
  /** 0 = never evicted. */
  idleMs?: number;
  backoffInitialMs?: number;
  backoffMaxMs?: number;
  healthyAfterMs?: number;
  maxCrashes?: number;
}

/** The defaults of {@link ProcessSupervisorOptions}. */
export const SUPERVISOR_DEFAULTS = {
  startTimeoutMs: 60_000,
  stopGraceMs: 2_000,
  failedStartRetryMs: 3 * 60_000,
  idleMs: 10 * 60_000,
  backoffInitialMs: 500,
  backoffMaxMs: 30_000,
  healthyAfterMs: 60_000,
  maxCrashes: 5
} as const;

/** A snapshot for `status` actions. */
export interface SupervisorStatus {
  state: 'stopped' | 'starting' | 'running' | 'failed' | 'disposed';
  pid?: number;
  /** Unexpected exits so far. */
  restarts: number;
  lastExit?: ExitInfo;
  /** Why the last start failed and when it is retried (epoch ms). */
  failure?: { message: string; retryAt: number };
}

/** An exit of the supervised process. */
export interface ExitEvent extends ExitInfo {
  pid: number;
  /** false: a crash; true: stopped by us (dispose, reload, idle eviction). */
  expected: boolean;
}

interface Running<T> {
  process: GroupProcess;
  client: T;
  startedAt: number;
  stopping: boolean;
}

/** See the module comment. */
export class ProcessSupervisor<T> {
  private readonly o: Required<Omit<ProcessSupervisorOptions<T>, 'shutdown' | 'disposeClient' | 'retryHint'>> &
    Pick<ProcessSupervisorOptions<T>, 'shutdown' | 'disposeClient' | 'retryHint'>;
  private running: Running<T> | undefined;
  private starting: Promise<T> | undefined;
  private startAbort: AbortController | undefined;
  private failure: { message: string; retryAt: number; cause: unknown } | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private delay: number;
  private crashes = 0;
  private restarts = 0;
  private lastExit: ExitInfo | undefined;
  private lastUsed = 0;
  private holds = 0;
  private disposed = false;
  private readonly startedEmitter = new Emitter<{ pid: number }>();
  private readonly exitEmitter = new Emitter<ExitEvent>();

  /** A process started and its client is ready. */
  readonly onDidStart: Event<{ pid: number }> = this.startedEmitter.event;
  /** The process exited (a crash, or a stop of ours). */
  readonly onDidExit: Event<ExitEvent> = this.exitEmitter.event;

  constructor(options: ProcessSupervisorOptions<T>) {
    this.o = { ...SUPERVISOR_DEFAULTS, ...options };
    this.delay = this.o.backoffInitialMs;
  }

  /**
   * The client, starting the process if needed (and touching the idle clock).
   * @throws SupervisorError `start-failed` (cached failure or a start that just failed), `disposed`, `aborted`
   */
  get(signal?: AbortSignal): Promise<T> {
    if (this.disposed) return Promise.reject(new SupervisorError('disposed', `${this.o.name} was shut down.`));
    this.lastUsed = Date.now();
    if (this.running && !this.running.stopping) return Promise.resolve(this.running.client);
    const failed = this.cachedFailure();
    if (failed) return Promise.reject(failed);
    return abortable(this.starting ?? this.begin(0), signal, this.o.name);
  }

  /** Keeps the process from idle eviction until the returned handle is disposed (a debug session). */
  hold(): Disposable {
    this.holds++;
    let done = false;
    return {
      dispose: () => {
        if (done) return;
        done = true;
        this.holds--;
        this.lastUsed = Date.now();
      }
    };
  }

  /** Where things stand (no side effects). */
  status(): SupervisorStatus {
    const state: SupervisorStatus['state'] = this.disposed
      ? 'disposed'
      : this.running && !this.running.stopping
        ? 'running'
        : this.starting
          ? 'starting'
          : this.failure && Date.now() < this.failure.retryAt
            ? 'failed'
            : 'stopped';
    return {
      state,
      ...(this.running ? { pid: this.running.process.pid } : {}),
      restarts: this.restarts,
      ...(this.lastExit ? { lastExit: this.lastExit } : {}),
      ...(state === 'failed' && this.failure
        ? { failure: { message: this.failure.message, retryAt: this.failure.retryAt } }
        : {})
    };
  }

  /** Stops the process (if any) and starts a fresh one now, forgetting a cached failure. */
  async reload(signal?: AbortSignal): Promise<T> {
    if (this.disposed) throw new SupervisorError('disposed', `${this.o.name} was shut down.`);
    this.failure = undefined;
    this.crashes = 0;
    this.delay = this.o.backoffInitialMs;
    await this.stop();
    return this.get(signal);
  }

  /** Stops the process group (idle eviction, reload); the next `get()` starts a new one. */
  async stop(): Promise<void> {
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    clearTimeout(this.idleTimer);
    this.startAbort?.abort();
    await this.starting?.catch(() => undefined);
    const r = this.running;
    if (!r) return;
    r.stopping = true;
    if (this.o.shutdown && !r.process.exit) {
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(), this.o.stopGraceMs);
      await Promise.race([
        this.o.shutdown(r.client, ac.signal).catch(() => undefined),
        r.process.exited,
        new Promise((resolve) => ac.signal.addEventListener('abort', resolve))
      ]);
      clearTimeout(timer);
    }
    await r.process.stop(this.o.stopGraceMs);
  }

  /** Stops for good: the whole process group is killed. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await this.stop();
    this.startedEmitter.dispose();
    this.exitEmitter.dispose();
  }

  private cachedFailure(): SupervisorError | undefined {
    if (!this.failure) return undefined;
    const left = this.failure.retryAt - Date.now();
    if (left <= 0) {
      this.failure = undefined;
      return undefined;
    }
    const at = new Date(this.failure.retryAt).toISOString().slice(11, 19);
    return new SupervisorError(
      'start-failed',
      `${this.failure.message} It is not started again until ${at} UTC (in ${Math.ceil(left / 1000)} s)${this.o.retryHint ? `; ${this.o.retryHint}` : ''}.`,
      { cause: this.failure.cause, retryAt: this.failure.retryAt }
    );
  }

  /** Starts after `waitMs` (a restart's backoff); concurrent `get()`s join this start. */
  private begin(waitMs: number): Promise<T> {
    const ac = new AbortController();
    this.startAbort = ac;
    const p = (async () => {
      if (waitMs > 0) {
        await new Promise<void>((resolve) => {
          this.restartTimer = setTimeout(resolve, waitMs);
          ac.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        this.restartTimer = undefined;
      }
      if (ac.signal.aborted)
        throw new SupervisorError('aborted', `the start of ${this.o.name} was cancelled (stopped or shut down).`);
      return this.launch(ac.signal);
    })().finally(() => {
      if (this.starting === p) this.starting = undefined;
    });
    this.starting = p;
    p.catch(() => undefined);
    return p;
  }

  private async launch(signal: AbortSignal): Promise<T> {
    const { name, log } = this.o;
    let proc: GroupProcess;
    try {
      proc = await GroupProcess.start(this.o.spawn, (line) => log.info(`[${name}] ${line}`));
    } catch (error) {
      throw this.fail(
        `${name} could not be started: ${spawnReason(error, this.o.spawn.command, this.o.spawn.cwd)}.`,
        error
      );
    }
    log.info(`started ${name} (pid ${proc.pid}): ${[this.o.spawn.command, ...this.o.spawn.args].join(' ')}`);
    let timer: NodeJS.Timeout | undefined;
    const ac = new AbortController();
    signal.addEventListener('abort', () => ac.abort(), { once: true });
    const early = proc.exited.then((exit) => {
      throw new Error(`it exited during start-up (${describeExit(exit)})`);
    });
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`it did not become ready within ${Math.round(this.o.startTimeoutMs / 1000)} s`)),
        this.o.startTimeoutMs
      );
    });
    const cancelled = new Promise<never>((_, reject) =>
      ac.signal.addEventListener(
        'abort',
        () => reject(new SupervisorError('aborted', `the start of ${name} was cancelled.`)),
        { once: true }
      )
    );
    cancelled.catch(() => undefined);
    let client: T;
    try {
      client = await Promise.race([this.o.connect(proc, ac.signal), early, late, cancelled]);
    } catch (error) {
      ac.abort();
      await proc.stop(this.o.stopGraceMs);
      if (error instanceof SupervisorError) throw error;
      const tail = lastLines(proc.stderrTail);
      throw this.fail(
        `${name} failed to start: ${(error as Error).message ?? String(error)}.${tail ? ` Its stderr ended with: ${tail}` : ''}`,
        error
      );
    } finally {
      clearTimeout(timer);
      early.catch(() => undefined);
    }
    const running: Running<T> = { process: proc, client, startedAt: Date.now(), stopping: false };
    this.running = running;
    void proc.exited.then((exit) => this.exited(running, exit));
    this.armIdle();
    this.startedEmitter.fire({ pid: proc.pid });
    return client;
  }

  private fail(message: string, cause: unknown): SupervisorError {
    this.failure = { message, retryAt: Date.now() + this.o.failedStartRetryMs, cause };
    this.o.log.warn(`${message} Not retried for ${Math.round(this.o.failedStartRetryMs / 1000)} s.`);
    return this.cachedFailure() ?? new SupervisorError('start-failed', message, { cause });
  }

  private exited(r: Running<T>, exit: ExitInfo): void {
    if (this.running === r) this.running = undefined;
    this.o.disposeClient?.(r.client);
    clearTimeout(this.idleTimer);
    const expected = r.stopping || this.disposed;
    if (expected) {
      if (!this.disposed) this.exitEmitter.fire({ ...exit, pid: r.process.pid, expected });
      return;
    }
    this.crashed(r, exit);
    // Listeners see the state after the crash was handled (restarting, or failed).
    this.exitEmitter.fire({ ...exit, pid: r.process.pid, expected: false });
  }

  private crashed(r: Running<T>, exit: ExitInfo): void {
    this.restarts++;
    this.lastExit = exit;
    const ran = Date.now() - r.startedAt;
    if (ran >= this.o.healthyAfterMs) {
      this.crashes = 0;
      this.delay = this.o.backoffInitialMs;
    }
    this.crashes++;
    const tail = lastLines(r.process.stderrTail);
    const what = `${this.o.name} (pid ${r.process.pid}) exited unexpectedly with ${describeExit(exit)} after ${(ran / 1000).toFixed(1)} s${tail ? `; its stderr ended with: ${tail}` : ''}`;
    if (this.crashes >= this.o.maxCrashes) {
      this.fail(`${what}. It crashed ${this.crashes} times in a row.`, undefined);
      return;
    }
    const idle = this.o.idleMs > 0 && this.holds === 0 && Date.now() - this.lastUsed >= this.o.idleMs;
    if (idle) {
      this.o.log.warn(`${what}; it was idle, so it starts again on the next request.`);
      return;
    }
    this.o.log.warn(`${what}; restarting in ${this.delay} ms.`);
    this.begin(this.delay);
    this.delay = Math.min(this.delay * 2, this.o.backoffMaxMs);
  }

  private armIdle(): void {
    clearTimeout(this.idleTimer);
    if (this.o.idleMs <= 0 || !this.running) return;
    const wait = Math.max(this.lastUsed + this.o.idleMs - Date.now(), 0);
    this.idleTimer = setTimeout(
      () => {
        if (!this.running || this.running.stopping) return;
        if (this.holds > 0 || Date.now() - this.lastUsed < this.o.idleMs) {
          this.armIdle();
          return;
        }
        this.o.log.info(
          `${this.o.name} idle for ${Math.round(this.o.idleMs / 1000)} s: stopping it (it starts again on the next request).`
        );
        void this.stop();
      },
      this.holds > 0 ? this.o.idleMs : wait
    );
    this.idleTimer.unref();
  }
}

/** Settles with `promise`, or rejects when `signal` aborts (the start goes on for others). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined, name: string): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(new SupervisorError('aborted', `stopped waiting for ${name}.`));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new SupervisorError('aborted', `stopped waiting for ${name}.`));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Why spawn failed, in words a user can act on. */
function spawnReason(error: unknown, command: string, cwd: string): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return `the executable "${command}" was not found (or the folder ${cwd} does not exist)`;
  if (code === 'EACCES') return `"${command}" is not executable (permission denied)`;
  return `${(error as Error).message ?? String(error)}`;
}

/** The last few stderr lines, quoted, for a one-line message. */
function lastLines(tail: string, lines = 3): string {
  const last = tail.trimEnd().split('\n').slice(-lines).join(' ⏎ ').trim();
  return last ? JSON.stringify(last.length > 400 ? `…${last.slice(-400)}` : last) : '';
}
