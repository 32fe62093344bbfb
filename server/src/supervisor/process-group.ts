/**
 * One child process in its own process group (the group id is its pid), with the scrubbed
 * environment (`security/child-env.ts`), stdin/stdout as pipes for the protocol and stderr
 * split into lines for the log. `killGroup` signals every process of the group — the
 * server and whatever it started (basedpyright's workers, a debuggee) — and after the
 * leader exits the rest of its group is killed at once, before the id can be reused. Groups
 * still alive when the companion exits are killed from a `process.on('exit')` hook
 * ({@link trackGroup}, which the `shell` tool's groups use too).
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { childEnv } from '../security/child-env.js';

/** What to run. */
export interface SpawnSpec {
  command: string;
  args: readonly string[];
  cwd: string;
  /** Extra variables on top of the scrubbed environment. */
  env?: Record<string, string>;
}

/** How a process ended. */
export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Last bytes of stderr kept for error messages. */
export const STDERR_TAIL_CHARS = 4_000;
const MAX_LINE_CHARS = 64 * 1024;

const liveGroups = new Set<number>();
let exitHook = false;

/** Signals process group `pid`; false when no such group is left. */
export function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false; // no such group left
  }
}

/**
 * Registers a process group (led by `pid`) to be SIGKILLed if the companion exits first;
 * every spawner of a group uses it (`GroupProcess`, the `shell` tool). The returned function
 * unregisters it.
 */
export function trackGroup(pid: number): () => void {
  installExitHook();
  liveGroups.add(pid);
  return () => void liveGroups.delete(pid);
}

/** A running child; see the module comment. */
export class GroupProcess {
  /** Resolves once the leader exited and the rest of its group is gone too (never rejects). */
  readonly exited: Promise<ExitInfo>;
  private tail = '';
  private exitInfo: ExitInfo | undefined;

  private constructor(
    private readonly child: ChildProcessByStdio<Writable, Readable, Readable>,
    readonly pid: number,
    onStderrLine: (line: string) => void,
    untrack: () => void
  ) {
    let partial = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text: string) => {
      this.tail = (this.tail + text).slice(-STDERR_TAIL_CHARS);
      partial += text;
      let nl: number;
      while ((nl = partial.indexOf('\n')) >= 0) {
        onStderrLine(partial.slice(0, nl).replace(/\r$/, ''));
        partial = partial.slice(nl + 1);
      }
      if (partial.length > MAX_LINE_CHARS) {
        onStderrLine(partial);
        partial = '';
      }
    });
    child.stderr.on('end', () => {
      if (partial) onStderrLine(partial);
      partial = '';
    });
    // A write to a child that died is reported by its exit, not as an unhandled error.
    child.stdin.on('error', () => undefined);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        const info: ExitInfo = { code, signal };
        untrack();
        // Orphans of the leader (its workers) share the group: end them now, and report the
        // exit once they are gone, so "exited" means the whole group.
        signalGroup(pid, 'SIGKILL');
        void waitGroupGone(pid).then(() => {
          this.exitInfo = info;
          resolve(info);
        });
      });
    });
  }

  /**
   * Starts `spec` in a new process group. Rejects when it cannot start at all (the
   * executable is missing or not executable, the cwd does not exist), with Node's error.
   */
  static start(spec: SpawnSpec, onStderrLine: (line: string) => void): Promise<GroupProcess> {
    return new Promise((resolve, reject) => {
      let child: ChildProcessByStdio<Writable, Readable, Readable>;
      try {
        child = spawn(spec.command, [...spec.args], {
          cwd: spec.cwd,
          env: childEnv(process.env, spec.env ?? {}),
          detached: true,
          stdio: ['pipe', 'pipe', 'pipe']
        });
      } catch (error) {
        reject(error);
        return;
      }
      child.once('error', reject);
      child.once('spawn', () => {
        child.removeListener('error', reject);
        child.on('error', () => undefined); // later errors (a kill of a dead pid) show as its exit
        resolve(new GroupProcess(child, child.pid!, onStderrLine, trackGroup(child.pid!)));
      });
    });
  }

  get stdin(): Writable {
    return this.child.stdin;
  }

  get stdout(): Readable {
    return this.child.stdout;
  }

  /** The last {@link STDERR_TAIL_CHARS} characters of stderr. */
  get stderrTail(): string {
    return this.tail;
  }

  /** How it exited, once it has. */
  get exit(): ExitInfo | undefined {
    return this.exitInfo;
  }

  /** Signals the whole group (no-op once it is gone). */
  killGroup(signal: NodeJS.Signals): void {
    signalGroup(this.pid, signal);
  }

  /**
   * Ends the group: SIGTERM, then SIGKILL if the leader has not exited within `graceMs`.
   * Resolves once the leader exited (its group is SIGKILLed then too).
   */
  async stop(graceMs: number): Promise<ExitInfo> {
    if (this.exitInfo) {
      signalGroup(this.pid, 'SIGKILL');
      return this.exitInfo;
    }
    this.child.stdin.end();
    signalGroup(this.pid, 'SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([this.exited, timeout]);
    clearTimeout(timer);
    if (!this.exitInfo) signalGroup(this.pid, 'SIGKILL');
    return this.exited;
  }
}

/** Whether a process of group `pgid` is still alive (on Linux from /proc, where a zombie waiting for its reaper does not count). */
function groupAlive(pgid: number): boolean {
  if (process.platform === 'linux') {
    let entries: string[];
    try {
      entries = readdirSync('/proc');
    } catch {
      entries = [];
    }
    if (entries.length > 0) {
      return entries.some((e) => {
        if (e.charCodeAt(0) > 0x39) return false;
        try {
          const stat = readFileSync(`/proc/${e}/stat`, 'latin1');
          const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          return Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X';
        } catch {
          return false; // gone meanwhile
        }
      });
    }
  }
  return signalGroup(pgid, 0);
}

/** Waits until nothing of group `pgid` is alive, at most `maxMs`; false if something still is. */
export async function waitGroupGone(pgid: number, maxMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + maxMs;
  while (groupAlive(pgid)) {
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
}

/** Words for an exit: `exit code 1`, `signal SIGKILL`. */
export function describeExit(exit: ExitInfo): string {
  return exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code ?? 'unknown'}`;
}

function installExitHook(): void {
  if (exitHook) return;
  exitHook = true;
  process.on('exit', () => liveGroups.forEach((pid) => signalGroup(pid, 'SIGKILL')));
}
