/**
 * User-supplied regular expressions run off the event loop (HARN-2):
 * JavaScript's backtracking engine can take exponential time (`^(a+)+$` on `aaaa…!`), and
 * on the companion's event loop that froze every chat and pane. A {@link LineMatcher} runs
 * the pattern in a worker thread with exactly JavaScript's semantics (same engine, same
 * flags), and terminates the worker when one batch takes longer than the budget (default
 * 5 s, `CELLMATE_REGEX_TIMEOUT_MS`) — V8 stops a running regex on termination — or when the
 * call is aborted. The main thread only waits, so other connections are answered meanwhile.
 */
import { Worker } from 'node:worker_threads';
import { ToolInputError } from '../../base/tool-errors.js';

/** Default budget for one batch of lines (one file). */
export const DEFAULT_REGEX_TIMEOUT_MS = 5_000;

/** The pattern ran past its budget and was stopped. The model gets this as the tool's result. */
export class RegexTimeoutError extends ToolInputError {
  constructor(
    readonly pattern: string,
    readonly timeoutMs: number,
    where: string
  ) {
    super(
      `The regular expression ${JSON.stringify(pattern)} took longer than ${timeoutMs} ms on ${where} and was stopped ` +
        '(catastrophic backtracking: nested or overlapping quantifiers such as (a+)+ or (a|a)*). ' +
        'Rewrite it without nested quantifiers, anchor it, or search for a plain substring.'
    );
    this.name = 'RegexTimeoutError';
  }
}

// Runs in the worker (eval'd as CommonJS): compile once, answer batches with matching line numbers.
// A worker's source cannot import, so `split` is `base/lines.ts` `splitLines` with a lone CR ending a line.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const re = new RegExp(workerData.pattern, workerData.flags);
const split = (text) => { const l = text.split(/\\r?\\n|\\r(?!\\n)/); if (l.length > 0 && l[l.length - 1] === '') l.pop(); return l; };
parentPort.on('message', ({ id, text }) => {
  const lines = split(text);
  const hits = [];
  for (let i = 0; i < lines.length; i++) { re.lastIndex = 0; if (re.test(lines[i])) hits.push(i + 1); }
  parentPort.postMessage({ id, hits });
});
`;

/** The budget from `CELLMATE_REGEX_TIMEOUT_MS`, else the default. */
export function regexTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env.CELLMATE_REGEX_TIMEOUT_MS);
  return Number.isInteger(value) && value > 0 ? value : DEFAULT_REGEX_TIMEOUT_MS;
}

/** A compiled pattern in its own worker thread; {@link dispose} when done. */
export class LineMatcher {
  private worker: Worker | undefined;
  private nextId = 0;
  private pending:
    { id: number; resolve: (hits: number[]) => void; reject: (e: unknown) => void; timer: NodeJS.Timeout } | undefined;

  /**
   * Compiles `pattern` (a syntax error throws `SyntaxError` here, on the caller's thread —
   * compiling is linear) and starts the worker lazily on the first batch.
   */
  constructor(
    readonly pattern: string,
    readonly flags: string,
    private readonly options: { timeoutMs?: number; signal?: AbortSignal } = {}
  ) {
    new RegExp(pattern, flags);
  }

  /**
   * 1-based numbers of the lines of `text` that match (lines split like `readline`: `splitLines` with `loneCR: 'ends-line'`).
   * @throws RegexTimeoutError past the budget; the signal's reason when aborted
   */
  matchLines(text: string, where: string): Promise<number[]> {
    const signal = this.options.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.pending) return Promise.reject(new Error('LineMatcher: one batch at a time'));
    const worker = this.ensureWorker();
    const timeoutMs = this.options.timeoutMs ?? regexTimeoutMs();
    return new Promise<number[]>((resolve, reject) => {
      const id = ++this.nextId;
      const onAbort = (): void => this.fail(signal!.reason);
      const done =
        <T>(fn: (v: T) => void) =>
        (v: T): void => {
          signal?.removeEventListener('abort', onAbort);
          fn(v);
        };
      const timer = setTimeout(() => this.fail(new RegexTimeoutError(this.pattern, timeoutMs, where)), timeoutMs);
      this.pending = { id, resolve: done(resolve), reject: done(reject), timer };
      signal?.addEventListener('abort', onAbort, { once: true });
      worker.postMessage({ id, text });
    });
  }

  /** Stops the worker. */
  dispose(): void {
    const worker = this.worker;
    this.worker = undefined;
    if (this.pending) this.fail(new Error('LineMatcher disposed'));
    void worker?.terminate();
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { pattern: this.pattern, flags: this.flags } });
    worker.unref();
    worker.on('message', (m: { id: number; hits: number[] }) => {
      const p = this.pending;
      if (!p || p.id !== m.id) return;
      clearTimeout(p.timer);
      this.pending = undefined;
      p.resolve(m.hits);
    });
    // Only the current worker's end matters: a terminated one may exit while the next runs.
    worker.on('error', (error) => this.worker === worker && this.fail(error));
    worker.on('exit', () => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      this.fail(new Error('the regex worker stopped unexpectedly'));
    });
    this.worker = worker;
    return worker;
  }

  /** Rejects the batch in flight and terminates the worker (a stuck regex cannot be resumed). */
  private fail(error: unknown): void {
    const p = this.pending;
    if (!p) return;
    clearTimeout(p.timer);
    this.pending = undefined;
    const worker = this.worker;
    this.worker = undefined;
    void worker?.terminate();
    p.reject(error);
  }
}
