/**
 * The Content-Length reader and writer for child processes that speak LSP or DAP (DBG-6,
 * LSP-1): `createFramedReader(readable, { log })` → a vscode-jsonrpc `MessageReader`,
 * `createFramedWriter(writable)` → a `MessageWriter`. LSP clients pass both to
 * `createMessageConnection`; the DAP client calls `reader.listen()` / `writer.write()`
 * with raw DAP messages (any JSON object passes).
 *
 * The reader wraps vscode-jsonrpc's `ReadableStreamMessageReader` (which decodes the frames
 * in order): in front of it, {@link FrameScanner} keeps only well-formed frames, so banner
 * and log lines are skipped and logged, and a malformed header or a bad `Content-Length` is
 * a {@link FramingError} on `onError` followed by resynchronisation at the next header —
 * where vscode-jsonrpc alone throws on the banner, loses the frame boundary, and stops
 * reading what is already buffered until more bytes come (a hang when the server then waits
 * for us). A body that is not a JSON object is a `FramingError` too. A frame whose bytes
 * stop arriving for `stallTimeoutMs` is given up (error, then the bytes after its header
 * are scanned again). `onClose` fires after the last message decoded from the stream has
 * been delivered.
 */
import {
  AbstractMessageReader,
  Emitter,
  ReadableStreamMessageReader,
  StreamMessageWriter,
  type DataCallback,
  type Disposable,
  type Message,
  type MessageReader,
  type MessageWriter,
  type RAL
} from 'vscode-jsonrpc/node.js';
import { FramingError, quote } from './framing-error.js';
import { DEFAULT_MAX_MESSAGE_BYTES, FrameScanner, type ScanEvent } from './frame-scanner.js';

/** Options of {@link createFramedReader}. */
export interface FramedReaderOptions {
  /** Receives one line per skipped piece of output (banner, log line) and per framing error. */
  log?: (line: string) => void;
  /** Largest body accepted (default 256 MiB); a bigger frame is an error and is skipped. */
  maxMessageBytes?: number;
  /** A started frame with no new bytes for this long is given up (default 10 s). */
  stallTimeoutMs?: number;
}

/** Skipped lines logged in a row before the reader goes quiet until the next frame. */
export const MAX_SKIPPED_LOG_LINES = 20;

/** The default quiet period after which a started frame is given up. */
export const DEFAULT_STALL_TIMEOUT_MS = 10_000;

/** A reader over `readable` (a child's stdout); see the module comment. */
export function createFramedReader(readable: NodeJS.ReadableStream, options: FramedReaderOptions = {}): MessageReader {
  return new FramedMessageReader(readable, options);
}

/** A writer onto `writable` (a child's stdin): vscode-jsonrpc's own, UTF-8 bodies. */
export function createFramedWriter(writable: NodeJS.WritableStream): MessageWriter {
  return new StreamMessageWriter(writable, 'utf-8');
}

const EMPTY = Buffer.alloc(0);

/** Decodes a body: JSON, and an object (LSP and DAP messages are objects). */
function decodeBody(bytes: Uint8Array): Promise<Message> {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return Promise.reject(new FramingError('not-json', `a ${bytes.byteLength}-byte frame body is not JSON (${(error as Error).message}): ${quote(text, 80)}`, -1));
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return Promise.reject(new FramingError('not-object', `a frame body is JSON but not an object: ${quote(text, 80)}`, -1));
  }
  return Promise.resolve(value as Message);
}

class FramedMessageReader extends AbstractMessageReader implements MessageReader {
  private readonly scanner: FrameScanner;
  private readonly inner: ReadableStreamMessageReader;
  private readonly frames = new Emitter<Uint8Array>();
  private readonly stallMs: number;
  private readonly log: (line: string) => void;
  private stallTimer: NodeJS.Timeout | undefined;
  private detach: (() => void) | undefined;
  /** Frames handed to vscode-jsonrpc and not yet delivered or rejected. */
  private inFlight = 0;
  /** Per frame handed to vscode-jsonrpc: the error it stands for, or undefined for a real body. */
  private readonly queue: Array<Promise<never> | undefined> = [];
  /** Skipped lines logged since the last frame. */
  private skippedInARow = 0;
  private ended = false;
  private closed = false;

  constructor(
    private readonly readable: NodeJS.ReadableStream,
    options: FramedReaderOptions
  ) {
    super();
    this.scanner = new FrameScanner(options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES);
    this.stallMs = options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
    this.log = options.log ?? (() => {});
    const never: Disposable = { dispose: () => {} };
    const source: RAL.ReadableStream = {
      onData: (listener) => this.frames.event(listener),
      onClose: () => never,
      onError: () => never,
      onEnd: () => never
    };
    this.inner = new ReadableStreamMessageReader(source, {
      charset: 'utf-8',
      // Called once per frame, in stream order: a scanner error rides in the queue as an
      // empty frame, so errors and messages reach the listeners in the order of the stream.
      contentTypeDecoder: { name: 'application/json', decode: (bytes) => this.queue.shift() ?? decodeBody(bytes) }
    });
    // Only decoding fails inside: every frame it sees is well formed.
    this.inner.onError((error) => {
      this.settled();
      this.report(error);
    });
  }

  listen(callback: DataCallback): Disposable {
    const inner = this.inner.listen((message) => {
      this.settled();
      callback(message);
      this.closeIfDone();
    });
    const onData = (chunk: Buffer | string): void => this.feed((out) => this.scanner.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk, out));
    const onEnd = (): void => {
      if (this.ended) return;
      this.ended = true;
      this.clearStall();
      this.feed((out) => this.scanner.end(out));
      this.closeIfDone();
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
      inner.dispose();
    };
    return { dispose: () => this.stop() };
  }

  override dispose(): void {
    this.stop();
    this.inner.dispose();
    super.dispose();
  }

  private stop(): void {
    this.clearStall();
    this.detach?.();
    this.detach = undefined;
  }

  /** Runs the scanner and hands its events on, in stream order. */
  private feed(scan: (out: ScanEvent[]) => void): void {
    const out: ScanEvent[] = [];
    scan(out);
    const batch: Buffer[] = [];
    for (const e of out) {
      if (e.kind === 'frame') {
        this.skippedInARow = 0;
        this.handOn(batch, e.body, undefined);
      } else if (e.kind === 'skipped') {
        this.skippedInARow++;
        if (this.skippedInARow <= MAX_SKIPPED_LOG_LINES) this.log(`skipped output that is not a frame (byte ${e.offset}): ${e.text}`);
        if (this.skippedInARow === MAX_SKIPPED_LOG_LINES) this.log(`(more output that is not a frame follows; not logged until the next frame)`);
      } else {
        const rejected = Promise.reject(e.error);
        rejected.catch(() => undefined);
        this.handOn(batch, EMPTY, rejected);
      }
    }
    // One chunk for vscode-jsonrpc per chunk read, as if the stream had held only frames.
    if (batch.length > 0) this.frames.fire(batch.length === 1 ? batch[0]! : Buffer.concat(batch));
    if (!this.ended) this.armStall();
  }

  private handOn(batch: Buffer[], body: Buffer, error: Promise<never> | undefined): void {
    this.inFlight++;
    this.queue.push(error);
    batch.push(Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'));
    if (body.length > 0) batch.push(body);
  }

  private report(error: Error): void {
    this.log(`framing error: ${error.message}`);
    this.fireError(error);
  }

  private armStall(): void {
    this.clearStall();
    if (!this.scanner.pending) return;
    this.stallTimer = setTimeout(() => {
      this.stallTimer = undefined;
      this.feed((out) => this.scanner.abandon(this.stallMs, out));
    }, this.stallMs);
    this.stallTimer.unref?.();
  }

  private clearStall(): void {
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = undefined;
  }

  private settled(): void {
    this.inFlight--;
    // After the end, close once the last one is out (a rejected decode is reported first).
    if (this.ended) queueMicrotask(() => this.closeIfDone());
  }

  private closeIfDone(): void {
    if (this.ended && this.inFlight <= 0 && !this.closed) {
      this.closed = true;
      this.fireClose();
    }
  }
}
