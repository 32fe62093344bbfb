/**
 * Starting a debug adapter process and connecting its DAP stream: the process through the
 * supervisor's `GroupProcess` (own process group, scrubbed environment, stderr kept, the
 * whole group killed on stop and when the companion exits) and the stream through the
 * shared Content-Length framing (`server/src/framing/`, DBG-6: banner lines before the
 * first frame skipped, a bad frame an error, never a hang). Not a `ProcessSupervisor`: a
 * debug session is one-shot — a crashed adapter must end the session with a clear error
 * (restarting it would silently lose the debuggee), and the session TTL is its eviction.
 */
import net from 'node:net';
import path from 'node:path';
import type { MessageReader, MessageWriter } from 'vscode-jsonrpc/node.js';
import {
  companionBudget,
  createFramedReader,
  createFramedWriter,
  FramingError,
  type FrameBudget
} from '../framing/index.js';
import { describeExit, GroupProcess } from '../supervisor/index.js';

/** A running adapter: its DAP streams, exit and group kill. */
export interface AdapterProcess {
  readonly pid: number;
  reader: MessageReader;
  writer: MessageWriter;
  /** Resolves with `exit code 1` / `signal SIGKILL` when the process ends. */
  readonly exited: Promise<string>;
  /** The last stderr lines (for error messages). */
  stderrTail(): string;
  /** SIGKILLs the adapter's whole process group (the debuggee included). Idempotent. */
  kill(): void;
}

/**
 * Spawns `command` in its own process group. `tcp`: the adapter speaks DAP on a loopback
 * port it prints (delve: `DAP server listening at: 127.0.0.1:PORT`), one client.
 */
export async function startAdapterProcess(
  command: readonly string[],
  opts: {
    cwd: string;
    log?: (line: string) => void;
    tcp?: boolean;
    timeoutMs?: number;
    name?: string;
    budget?: FrameBudget;
  }
): Promise<AdapterProcess> {
  const [exe, ...rest] = command;
  const log = opts.log ?? (() => undefined);
  let proc: GroupProcess;
  try {
    proc = await GroupProcess.start({ command: exe!, args: rest, cwd: opts.cwd }, (line) => log(`stderr: ${line}`));
  } catch (e) {
    throw new Error(`cannot start \`${command.join(' ')}\`: ${(e as Error).message}`, { cause: e });
  }
  const exited = proc.exited.then(describeExit);
  const kill = (): void => proc.killGroup('SIGKILL');
  try {
    let reader: MessageReader;
    let writer: MessageWriter;
    const budget = {
      shared: opts.budget ?? companionBudget(),
      name: `the ${opts.name ?? path.basename(exe!)} debug adapter`
    };
    if (opts.tcp) {
      const socket = await connectPrinted(proc, exited, opts.timeoutMs ?? 20_000);
      reader = createFramedReader(socket, { log, budget });
      writer = createFramedWriter(socket);
      void exited.then(() => socket.destroy());
    } else {
      reader = createFramedReader(proc.stdout, { log, budget });
      writer = createFramedWriter(proc.stdin);
    }
    // Past the shared memory budget the adapter (and its debuggee) is stopped; the session ends with the reason.
    reader.onError((e) => {
      if (e instanceof FramingError && e.code === 'over-budget') kill();
    });
    return { pid: proc.pid, reader, writer, exited, stderrTail: () => proc.stderrTail.trim(), kill };
  } catch (e) {
    kill();
    const tail = proc.stderrTail.trim();
    throw new Error(
      `cannot start \`${command.join(' ')}\`: ${(e as Error).message}${tail ? ` (stderr: ${tail})` : ''}`,
      { cause: e }
    );
  }
}

/** Waits for `… listening at: host:port` on stdout, then connects to it. */
function connectPrinted(proc: GroupProcess, exited: Promise<string>, timeoutMs: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no "listening at" line within ${timeoutMs} ms`)), timeoutMs);
    void exited.then((how) => reject(new Error(`the adapter ended (${how}) before listening`)));
    const stdout = proc.stdout;
    stdout.setEncoding('utf8');
    const onData = (d: string): void => {
      out += d;
      const m = /listening at:?\s*\[?([\d.:a-f]+?)\]?:(\d+)/i.exec(out);
      if (!m) return;
      clearTimeout(timer);
      stdout.off('data', onData);
      stdout.resume();
      const socket = net.connect({ host: m[1]!, port: Number(m[2]) }, () => resolve(socket));
      socket.once('error', reject);
    };
    stdout.on('data', onData);
  });
}
