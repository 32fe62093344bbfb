/**
 * Runs cells in one persistent `node:vm` context.
 *
 * Interruption (see README): the synchronous part of a cell — everything up to its first
 * `await` — runs inside `runInContext` with `breakOnSigint` (and an optional `timeout`),
 * so SIGINT stops even `while (true) {}` there. After the first `await`, a cell is a
 * promise: interrupting rejects the cell's wait (the reply is an `InterruptError`) but
 * cannot cancel work the cell already scheduled (timers, sockets); a synchronous endless
 * loop *after* an `await` blocks the event loop and can only be ended by a restart.
 */
import { Console } from 'node:console';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Writable } from 'node:stream';
import { inspect } from 'node:util';
import vm from 'node:vm';
import type { ErrorContent, JSONObject, MimeBundle } from '../messaging/messages.js';
import { displayBundle } from './display.js';
import { rewriteCell } from './top-level.js';
import { syntaxErrorTraceback } from './syntax.js';

/** What the evaluator needs from the kernel: output and stdin. */
export interface EvaluatorIO {
  stream(name: 'stdout' | 'stderr', text: string): void;
  display(bundle: MimeBundle, metadata: JSONObject): void;
  requestInput(prompt: string, password: boolean): Promise<string>;
}

/** The cell was interrupted (control `interrupt_request` or SIGINT). */
export class InterruptError extends Error {
  override readonly name = 'InterruptError';
  constructor(message = 'execution interrupted') {
    super(message);
  }
}

export interface EvaluateOptions {
  /** Shown in stack traces, e.g. `<cell 3>`. */
  filename: string;
  /** Aborting rejects the cell's wait with InterruptError. */
  signal: AbortSignal;
  /** vm timeout for the synchronous part of the cell. */
  syncTimeoutMs?: number;
}

export interface Evaluation {
  hasResult: boolean;
  value: unknown;
}

/** Host globals a Node user expects inside the context. */
const HOST_GLOBALS = [
  'process',
  'Buffer',
  'URL',
  'URLSearchParams',
  'TextEncoder',
  'TextDecoder',
  'AbortController',
  'AbortSignal',
  'EventTarget',
  'Event',
  'setTimeout',
  'clearTimeout',
  'setInterval',
  'clearInterval',
  'setImmediate',
  'clearImmediate',
  'queueMicrotask',
  'structuredClone',
  'fetch',
  'Headers',
  'Request',
  'Response',
  'FormData',
  'Blob',
  'performance',
  'crypto',
  'atob',
  'btoa',
  'MessageChannel',
  'BroadcastChannel'
] as const;

function streamTo(io: EvaluatorIO, name: 'stdout' | 'stderr'): Writable {
  return new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _enc, cb) {
      io.stream(name, typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
      cb();
    }
  });
}

export class Evaluator {
  readonly context: vm.Context;

  constructor(io: EvaluatorIO, cwd = process.cwd()) {
    const sandbox: Record<string, unknown> = {};
    // GlobalThis's type lists no index signature; the sandbox copies named globals off it.
    const host = globalThis as unknown as Record<string, unknown>;
    for (const name of HOST_GLOBALS) if (name in host) sandbox[name] = host[name];
    sandbox.console = new Console({ stdout: streamTo(io, 'stdout'), stderr: streamTo(io, 'stderr'), colorMode: false });
    sandbox.require = createRequire(join(cwd, '__cellmate_cell__.js'));
    sandbox.display = (value: unknown, metadata: JSONObject = {}) => {
      io.display(displayBundle(value), metadata);
    };
    sandbox.input = (prompt: unknown = '', opts: { password?: boolean } = {}) =>
      io.requestInput(String(prompt), opts.password === true);
    this.context = vm.createContext(sandbox, { name: 'cellmate-js' });
    vm.runInContext('globalThis.global = globalThis', this.context);
  }

  /** Runs one cell; resolves with its result or rejects with what it threw. */
  async evaluate(code: string, opts: EvaluateOptions): Promise<Evaluation> {
    const cell = rewriteCell(code); // SyntaxError from acorn propagates
    const script = new vm.Script(cell.code, {
      filename: opts.filename,
      lineOffset: -1,
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER
    });
    // vm's breakOnSigint removes the process SIGINT listeners while the script runs,
    // which drops a SIGINT still queued in the event loop. Let such a signal reach our
    // listener (it aborts `signal`) before starting; the window left is the few
    // synchronous instructions between here and V8's watchdog taking over.
    // Two turns: the first setImmediate may run in the same loop iteration, before the
    // poll phase reads libuv's signal pipe again.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    if (opts.signal.aborted) throw new InterruptError();
    let pending: unknown;
    try {
      pending = script.runInContext(this.context, {
        breakOnSigint: true,
        displayErrors: false,
        ...(opts.syncTimeoutMs ? { timeout: opts.syncTimeoutMs } : {})
      });
    } catch (e) {
      throw mapVmError(e);
    }
    const value = await new Promise<unknown>((resolve, reject) => {
      const onAbort = () => reject(new InterruptError());
      // An interrupt may have landed between runInContext and here.
      if (opts.signal.aborted) return onAbort();
      opts.signal.addEventListener('abort', onAbort, { once: true });
      // `pending` is a promise of the context's realm: adopt it through Promise.resolve.
      Promise.resolve(pending).then(
        (v) => {
          opts.signal.removeEventListener('abort', onAbort);
          resolve(v);
        },
        (e: unknown) => {
          opts.signal.removeEventListener('abort', onAbort);
          reject(e);
        }
      );
    });
    return { hasResult: cell.hasResult, value };
  }
}

function mapVmError(e: unknown): unknown {
  const code = (e as { code?: string } | null)?.code;
  if (code === 'ERR_SCRIPT_EXECUTION_INTERRUPTED') return new InterruptError('execution interrupted (SIGINT)');
  if (code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
    const t = new Error((e as Error).message);
    t.name = 'TimeoutError';
    return t;
  }
  return e;
}

interface ErrorLike {
  name: string;
  message: string;
  stack?: string;
}

function isErrorLike(e: unknown): e is ErrorLike {
  // Errors thrown in the context are of the context's realm: instanceof Error fails.
  return typeof e === 'object' && e !== null && typeof (e as ErrorLike).message === 'string' && 'name' in e;
}

const DIST_DIR = fileURLToPath(new URL('..', import.meta.url));
const DIST_URL = pathToFileURL(DIST_DIR).href;

/** A stack frame of the kernel itself, of Node internals, or of the cell's async wrapper. */
function isInternalFrame(line: string, filename: string, cellLines: number): boolean {
  if (line.includes(DIST_DIR) || line.includes(DIST_URL) || /\(node:|at node:/.test(line)) return true;
  const at = line.lastIndexOf(`${filename}:`);
  if (at < 0) return false;
  const lineNo = Number(/^(\d+)/.exec(line.slice(at + filename.length + 1))?.[1]);
  return lineNo > cellLines; // the `})(globalThis)` line after the cell's code
}

/**
 * `error` content for a thrown value: ename, evalue, and a traceback without the
 * kernel's own frames. `filename` is the cell's (`<cell 3>`).
 */
export function errorContent(e: unknown, code: string, filename = ''): ErrorContent {
  if (e instanceof SyntaxError && typeof (e as { pos?: unknown }).pos === 'number') {
    return { ename: 'SyntaxError', evalue: e.message, traceback: syntaxErrorTraceback(code, e) };
  }
  if (isErrorLike(e)) {
    const ename = String(e.name);
    const stack = typeof e.stack === 'string' ? e.stack.split('\n') : [`${ename}: ${e.message}`];
    const cellLines = code.split('\n').length;
    const frames = stack.filter((l) => !/^\s+at /.test(l) || !isInternalFrame(l, filename, cellLines));
    return { ename, evalue: e.message, traceback: frames };
  }
  const evalue = inspect(e);
  return { ename: 'Uncaught', evalue, traceback: [`Uncaught ${evalue}`] };
}
