/**
 * The Content-Length reader and writer for child processes that speak LSP or DAP (DBG-6,
 * LSP-1): `createFramedReader(readable, { log })` → a vscode-jsonrpc `MessageReader`,
 * `createFramedWriter(writable)` (framed-writer.ts) → a `MessageWriter`. LSP clients pass both to
 * `createMessageConnection`; the DAP client calls `reader.listen()` / `writer.write()`
 * with raw DAP messages (any JSON object passes).
 *
 * The reader is {@link FrameScanner} plus JSON: each chunk is scanned once — banner and log
 * lines skipped and logged, headers parsed, bodies sliced — and each frame's body parsed and
 * handed to the listener synchronously, in stream order. A malformed header or a bad
 * `Content-Length` is a {@link FramingError} on `onError` followed by resynchronisation at
 * the next header; a body that is not a JSON object is a `FramingError` too. A frame whose
 * bytes stop arriving for `stallTimeoutMs` is given up (error, then the bytes after its
 * header are scanned again). `onClose` fires after the last message of the stream has been
 * delivered.
 */
import {
  AbstractMessageReader,
  type DataCallback,
  type Disposable,
  type Message,
  type MessageReader
} from 'vscode-jsonrpc/node.js';
import { FramingError, quote } from './framing-error.js';
import { DEFAULT_MAX_MESSAGE_BYTES, FrameScanner, type ScanEvent } from './frame-scanner.js';
import { mebibytes, type BudgetAccount, type FrameBudget } from './frame-budget.js';

/** Options of {@link createFramedReader}. */
export interface FramedReaderOptions {
  /** Receives one line per skipped piece of output (banner, log line) and per framing error. */
  log?: (line: string) => void;
  /** Largest body accepted (default 256 MiB); a bigger frame is an error and is skipped. */
  maxMessageBytes?: number;
  /** A started frame with no new bytes for this long is given up (default 10 s). */
  stallTimeoutMs?: number;
  /**
   * The memory budget this stream shares with the companion's other servers and adapters;
   * cut off, the reader stops reading and reports an `over-budget` {@link FramingError}.
   */
  budget?: { shared: FrameBudget; name: string };
}

/** Skipped lines logged in a row before the reader goes quiet until the next frame. */
export const MAX_SKIPPED_LOG_LINES = 20;

/** The default quiet period after which a started frame is given up. */
export const DEFAULT_STALL_TIMEOUT_MS = 10_000;

/** A reader over `readable` (a child's stdout); see the module comment. */
export function createFramedReader(readable: NodeJS.ReadableStream, options: FramedReaderOptions = {}): MessageReader {
  return new FramedMessageReader(readable, options);
}

/** Decodes a body: JSON, and an object (LSP and DAP messages are objects); else the error. */
function decodeBody(body: Buffer): Message | FramingError {
  const text = body.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return new FramingError(
      'not-json',
      `a ${body.byteLength}-byte frame body is not JSON (${(error as Error).message}): ${quote(text, 80)}`,
      -1
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return new FramingError('not-object', `a frame body is JSON but not an object: ${quote(text, 80)}`, -1);
  }
  return value as Message;
}

class FramedMessageReader extends AbstractMessageReader implements MessageReader {
  private readonly scanner: FrameScanner;
  private readonly stallMs: number;
  private readonly log: (line: string) => void;
  private callback: DataCallback | undefined;
  private stallTimer: NodeJS.Timeout | undefined;
  /** When the last chunk arrived (the stall timer re-arms itself from it rather than per chunk). */
  private lastData = 0;
  private detach: (() => void) | undefined;
  /** Skipped lines logged since the last frame. */
  private skippedInARow = 0;
  private ended = false;
  private closed = false;
  private readonly budget: FramedReaderOptions['budget'];
  private account: BudgetAccount | undefined;

  constructor(
    private readonly readable: NodeJS.ReadableStream,
    options: FramedReaderOptions
  ) {
    super();
    this.scanner = new FrameScanner(options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES);
    this.stallMs = options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
    this.log = options.log ?? (() => {});
    this.budget = options.budget;
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    if (this.budget)
      this.account = this.budget.shared.open(this.budget.name, (o) =>
        this.overBudget(o.heldBytes, o.limitBytes, o.totalBytes)
      );
    const onData = (chunk: Buffer | string): void => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      // Counted before scanning: a completed frame's body is copied and parsed while held.
      if (this.account && !this.account.hold(this.scanner.bufferedBytes + bytes.length)) return;
      const out: ScanEvent[] = [];
      this.scanner.push(bytes, out);
      this.deliver(out);
      this.account?.hold(this.scanner.bufferedBytes);
      if (!this.ended) this.armStall();
    };
    const onEnd = (): void => {
      if (this.ended) return;
      this.ended = true;
      this.clearStall();
      const out: ScanEvent[] = [];
      this.scanner.end(out);
      this.deliver(out);
      this.account?.close();
      this.account = undefined;
      if (!this.closed) {
        this.closed = true;
        this.fireClose();
      }
    };
    const onError = (error: unknown): void => this.fireError(error);
    this.readable.on('data', onData);
    this.readable.on('end', onEnd);
    this.readable.on('close', onEnd);
    this.readable.on('error', onError);
    this.detach = () => {
      this.readable.removeListener('data', onData);
      this.readable.removeListener('end', onEnd);
      this.readable.removeListener('close', onEnd);
      this.readable.removeListener('error', onError);
    };
    return { dispose: () => this.stop() };
  }

  override dispose(): void {
    this.stop();
    super.dispose();
  }

  /** Cut off by the shared budget: drops what is held, stops reading, says why. */
  private overBudget(held: number, limit: number, total: number): void {
    this.scanner.discard();
    this.stop();
    const who = this.budget?.name ?? 'the stream';
    this.report(
      new FramingError(
        'over-budget',
        `${who} had sent ${mebibytes(held)} not yet read as whole messages while the language servers and debug adapters together held ${mebibytes(total)}, past the companion's budget of ${mebibytes(limit)} (CELLMATE_FRAME_BUDGET_MB); it is no longer read`,
        -1
      )
    );
  }

  private stop(): void {
    this.account?.close();
    this.account = undefined;
    this.clearStall();
    this.detach?.();
    this.detach = undefined;
    this.callback = undefined;
  }

  /** Hands the scanner's events on, in stream order; stops if a listener disposes the reader. */
  private deliver(out: readonly ScanEvent[]): void {
    for (const e of out) {
      const callback = this.callback;
      if (!callback) return;
      if (e.kind === 'frame') {
        this.skippedInARow = 0;
        const message = decodeBody(e.body);
        if (message instanceof FramingError) {
          this.report(message);
          continue;
        }
        try {
          callback(message);
        } catch (error) {
          // A listener's bug must not unwind into the stream's 'data' handler and lose the rest of the chunk.
          this.fireError(error);
        }
      } else if (e.kind === 'skipped') {
        this.skippedInARow++;
        if (this.skippedInARow <= MAX_SKIPPED_LOG_LINES)
          this.log(`skipped output that is not a frame (byte ${e.offset}): ${e.text}`);
        if (this.skippedInARow === MAX_SKIPPED_LOG_LINES)
          this.log(`(more output that is not a frame follows; not logged until the next frame)`);
      } else {
        this.report(e.error);
      }
    }
  }

  private report(error: FramingError): void {
    this.log(`framing error: ${error.message}`);
    this.fireError(error);
  }

  private armStall(): void {
    if (!this.scanner.pending) {
      this.clearStall();
      return;
    }
    this.lastData = performance.now();
    if (this.stallTimer) return;
    this.stallTimer = setTimeout(() => this.checkStall(), this.stallMs);
    this.stallTimer.unref?.();
  }

  private checkStall(): void {
    this.stallTimer = undefined;
    if (!this.scanner.pending || this.ended) return;
    const quiet = performance.now() - this.lastData;
    if (quiet < this.stallMs) {
      this.stallTimer = setTimeout(() => this.checkStall(), this.stallMs - quiet);
      this.stallTimer.unref?.();
      return;
    }
    const out: ScanEvent[] = [];
    this.scanner.abandon(this.stallMs, out);
    this.deliver(out);
    this.armStall();
  }

  private clearStall(): void {
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
  }
}
