/**
 * Starting a debug adapter process and connecting its DAP stream. Until the shared
 * foundations (`server/src/framing/`, `server/src/supervisor/`) are merged this is the thin
 * call-site adapter COMMON.md allows: vscode-jsonrpc's own stream reader/writer (the same
 * Content-Length framing the shared module builds on — not a second one) and a spawn in
 * its own process group with the scrubbed child environment; the whole group is killed
 * when the session ends, so the debuggee goes with its adapter.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { StreamMessageReader, StreamMessageWriter, type MessageReader, type MessageWriter } from 'vscode-jsonrpc/node.js';
import { childEnv } from '../security/child-env.js';

/** A running adapter: its DAP streams, exit and group kill. */
export interface AdapterProcess {
  readonly pid: number;
  reader: MessageReader;
  writer: MessageWriter;
  /** Resolves with `exited with code 1` / `killed by SIGKILL` when the process ends. */
  readonly exited: Promise<string>;
  /** The last stderr lines (for error messages). */
  stderrTail(): string;
  /** SIGKILLs the adapter's whole process group (the debuggee included). Idempotent. */
  kill(): void;
}

const STDERR_TAIL_CHARS = 2000;

/**
 * Spawns `command` in its own process group. `tcp`: the adapter speaks DAP on a loopback
 * port it prints (delve: `DAP server listening at: 127.0.0.1:PORT`), one client.
 */
export async function startAdapterProcess(command: readonly string[], opts: { cwd: string; env: NodeJS.ProcessEnv; tcp?: boolean; timeoutMs?: number }): Promise<AdapterProcess> {
  const [exe, ...rest] = command;
  const child = spawn(exe!, rest, { cwd: opts.cwd, env: childEnv(opts.env), stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => {
    stderr = (stderr + d).slice(-STDERR_TAIL_CHARS);
  });
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => resolve(signal ? `killed by ${signal}` : `exited with code ${code}`));
    child.once('error', (e) => resolve(`could not start: ${e.message}`));
  });
  const kill = (): void => killGroup(child);
  try {
    let reader: MessageReader;
    let writer: MessageWriter;
    if (opts.tcp) {
      const socket = await connectPrinted(child, exited, opts.timeoutMs ?? 20_000);
      reader = new StreamMessageReader(socket);
      writer = new StreamMessageWriter(socket);
      void exited.then(() => socket.destroy());
    } else {
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', () => resolve());
        child.once('error', reject);
      });
      reader = new StreamMessageReader(child.stdout!);
      writer = new StreamMessageWriter(child.stdin!);
    }
    return { pid: child.pid!, reader, writer, exited, stderrTail: () => stderr.trim(), kill };
  } catch (e) {
    kill();
    throw new Error(`cannot start \`${command.join(' ')}\`: ${(e as Error).message}${stderr ? ` (stderr: ${stderr.trim()})` : ''}`, { cause: e });
  }
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Waits for `… listening at: host:port` on stdout, then connects to it. */
function connectPrinted(child: ChildProcess, exited: Promise<string>, timeoutMs: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no "listening at" line within ${timeoutMs} ms`)), timeoutMs);
    void exited.then((how) => reject(new Error(`the adapter ${how} before listening`)));
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (d: string) => {
      out += d;
      const m = /listening at:?\s*\[?([\d.:a-f]+?)\]?:(\d+)/i.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.removeAllListeners('data');
      child.stdout!.resume();
      const socket = net.connect({ host: m[1]!, port: Number(m[2]) }, () => resolve(socket));
      socket.once('error', reject);
    });
  });
}
