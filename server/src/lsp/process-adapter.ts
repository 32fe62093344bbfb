/**
 * The seam between the LSP client and the process that runs a language server. Today a
 * thin spawn in its own process group (killed as a group); the shared `ProcessSupervisor`
 * (`server/src/supervisor/`, issue #10 item 2) replaces the body of
 * {@link startServerProcess} once merged — nothing else here knows how processes start.
 */
import { spawn } from 'node:child_process';
import { childEnv } from '../security/child-env.js';

/** A running server process. */
export interface ServerProcess {
  readonly pid: number | undefined;
  readonly stdin: NodeJS.WritableStream;
  readonly stdout: NodeJS.ReadableStream;
  /** Resolves when the process has exited (code or signal). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last lines the process wrote to stderr (for start failures). */
  stderrTail(): string;
  /** Kills the whole process group. */
  kill(): void;
}

/** Options of {@link startServerProcess}. */
export interface StartProcessOptions {
  executable: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** One call per stderr line of the server. */
  log(line: string): void;
}

/** A process could not be started at all (ENOENT, EACCES…). */
export class ProcessStartError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ProcessStartError';
  }
}

/** Spawns `executable` in its own process group with the scrubbed child environment. */
export async function startServerProcess(options: StartProcessOptions): Promise<ServerProcess> {
  const child = spawn(options.executable, [...options.args], {
    cwd: options.cwd,
    env: childEnv(options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true
  });
  // EPIPE after a crash must not take the companion down (attached before anything is written).
  child.stdin.on('error', () => undefined);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: null, signal: null }));
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', () => resolve());
    child.once('error', (error) => reject(new ProcessStartError(`could not start ${options.executable}: ${error.message}`, { cause: error })));
  });
  let partial = '';
  const tail: string[] = [];
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim()) continue;
      options.log(line);
      tail.push(line);
      if (tail.length > 5) tail.shift();
    }
  });
  return {
    stderrTail: () => [...tail, partial].filter((l) => l.trim()).join(' | ').slice(-500),
    pid: child.pid,
    stdin: child.stdin,
    stdout: child.stdout,
    exited,
    kill() {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }
  };
}
