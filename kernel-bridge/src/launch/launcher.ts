/**
 * Starts a kernel process with a generated connection file and connects a
 * `ZmqKernelClient` to it. This is how the server starts a private kernel per chat.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KernelBridgeError, throwIfAborted } from '../common/errors.js';
import type { Disposable } from '../common/event.js';
import type { Message } from '../messaging/messages.js';
import { ZmqKernelClient } from '../zmq/client.js';
import type { ConnectionInfo } from '../zmq/connection.js';
import { createConnectionInfo, writeConnectionFile } from './connection-file.js';

export interface LaunchOptions {
  /** Command line; `{connection_file}` is replaced as in a kernelspec's argv. */
  argv: string[];
  /** As in kernelspec: `signal` (default) or `message`. */
  interruptMode?: 'signal' | 'message';
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Until `kernel_info_reply`. Default 60 s. */
  startupTimeoutMs?: number;
  signal?: AbortSignal;
  kernelName?: string;
}

/** ipykernel from a (venv) python: `<python> -m ipykernel_launcher -f {connection_file}`. */
export function pythonKernelArgv(python: string): string[] {
  return [python, '-m', 'ipykernel_launcher', '-f', '{connection_file}'];
}

/** Cellmate's JS kernel, built: `node dist/js-kernel/main.js -f {connection_file}`. */
export function jsKernelArgv(node = process.execPath): string[] {
  const main = join(dirname(fileURLToPath(import.meta.url)), '..', 'js-kernel', 'main.js');
  return [node, main, '-f', '{connection_file}'];
}

const OUTPUT_TAIL = 8192;

/** A running kernel process plus a connected client. */
export class LaunchedKernel implements Disposable {
  private disposed = false;

  constructor(
    readonly client: ZmqKernelClient,
    readonly kernelInfo: Message<'kernel_info_reply'>,
    readonly process: ChildProcess,
    readonly connectionInfo: ConnectionInfo,
    readonly connectionFile: string,
    private readonly workDir: string,
    /** Settles with the exit code/signal when the process ends. */
    readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>,
    private readonly output: () => string
  ) {}

  get pid(): number | undefined {
    return this.process.pid;
  }

  /** Last few KB of the kernel's own stdout/stderr (diagnostics). */
  get processOutput(): string {
    return this.output();
  }

  /**
   * Graceful stop: `shutdown_request`, then SIGKILL if the process has not exited within
   * `graceMs`; then disposes. Never throws for an already-dead kernel.
   */
  async shutdown(graceMs = 3000): Promise<void> {
    if (this.disposed) return;
    if (this.process.exitCode === null && this.process.signalCode === null) {
      await this.client.shutdown({ timeoutMs: graceMs }).catch(() => undefined);
      const timer = new Promise((r) => setTimeout(r, graceMs).unref());
      await Promise.race([this.exited, timer]);
    }
    this.dispose();
    await this.exited;
  }

  /** Kills the process (SIGKILL), closes the client, removes the connection file. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.client.dispose();
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill('SIGKILL');
    rmSync(this.workDir, { recursive: true, force: true });
  }
}

/** Starts the kernel and resolves once it answered `kernel_info_request`. */
export async function launchKernel(opts: LaunchOptions): Promise<LaunchedKernel> {
  throwIfAborted(opts.signal, 'launch');
  const info = await createConnectionInfo(opts.kernelName);
  const workDir = await mkdtemp(join(tmpdir(), 'cellmate-kernel-'));
  const connectionFile = await writeConnectionFile(info, workDir);
  const [cmd, ...args] = opts.argv.map((a) => a.replaceAll('{connection_file}', connectionFile));
  if (!cmd) throw new KernelBridgeError('launch_failed', 'empty argv');

  const child = spawn(cmd, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe']
  });
  let tail = '';
  const collect = (d: Buffer) => {
    tail = (tail + d.toString('utf8')).slice(-OUTPUT_TAIL);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (e) => {
      collect(Buffer.from(String(e)));
      resolve({ code: null, signal: null });
    });
  });

  const failed = (why: string, cause?: unknown) => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    void rm(workDir, { recursive: true, force: true });
    return new KernelBridgeError('launch_failed', `${why}\n--- kernel output ---\n${tail}`, { cause });
  };

  const connecting = ZmqKernelClient.connect(info, {
    pid: child.pid,
    interruptMode: opts.interruptMode ?? 'signal',
    connectTimeoutMs: opts.startupTimeoutMs ?? 60_000,
    signal: opts.signal,
    processExit: exited
  });
  const earlyExit = exited.then((e) => {
    throw failed(`kernel exited before it was ready (code ${e.code}, signal ${e.signal})`);
  });
  try {
    const { client, kernelInfo } = await Promise.race([connecting, earlyExit]);
    return new LaunchedKernel(client, kernelInfo, child, info, connectionFile, workDir, exited, () => tail);
  } catch (e) {
    earlyExit.catch(() => undefined);
    connecting.then(
      ({ client }) => client.dispose(),
      () => undefined
    );
    if (e instanceof KernelBridgeError && e.code === 'launch_failed') throw e;
    throw failed(`kernel did not become ready: ${(e as Error).message}`, e);
  }
}
