/**
 * Finds Content-Length frames in a byte stream that may hold other things too (DBG-6),
 * pure: bytes in, events out — `frame` (one body), `skipped` (one line of output that is
 * not a frame: a banner, a log line) and `error` (a {@link FramingError}). It is the only
 * parser of the bytes: the reader (`framed-reader.ts`) parses each frame's body as JSON.
 *
 * Rules:
 * - A header block starts where `Content-Length:` or `Content-Type:` starts (any case, also
 *   in mid-line, so a log line without a trailing newline right before a frame does not
 *   swallow it). Its lines are `Name: value` ended by CRLF, an empty line ends it, and it
 *   must carry one decimal `Content-Length` (≤ `maxMessageBytes`); a `Content-Type` charset
 *   must be UTF-8.
 * - Bytes before a header block are skipped and reported line by line (each line cut at 200
 *   characters); blank lines are skipped silently.
 * - A malformed header block is an error; scanning resumes after the offending line (or
 *   after the block when the block is complete), so the next good frame is found. An
 *   oversized frame is an error too, and scanning resumes right after its header (a
 *   length that large is a broken server far more often than a real message).
 * - {@link FrameScanner.abandon} gives up on a frame whose bytes stopped coming (the reader
 *   calls it after a quiet period): an error, then the bytes already received after its
 *   header are scanned again — when a server declared too long a length, the next frame is
 *   in there and is not lost.
 */
import { FramingError, quote } from './framing-error.js';

/** One result of scanning. */
export type ScanEvent =
  | { kind: 'frame'; body: Buffer; offset: number }
  | { kind: 'skipped'; text: string; offset: number }
  | { kind: 'error'; error: FramingError };

/** The default largest body accepted (256 MiB). */
export const DEFAULT_MAX_MESSAGE_BYTES = 256 * 1024 * 1024;
/** The largest header block accepted. */
export const MAX_HEADER_BYTES = 8 * 1024;
/** Skipped lines are reported up to this many characters. */
export const MAX_SKIPPED_LINE_CHARS = 200;

/** Header names that start a header block, as lower-case bytes. */
const STARTS = ['content-length:', 'content-type:'].map((s) => Buffer.from(s, 'latin1'));
const LONGEST_START = Math.max(...STARTS.map((s) => s.length));
const HEADER_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*$/;
const CR = 0x0d;
const LF = 0x0a;

type Match = 'yes' | 'partial' | 'no';

function lower(b: number): number {
  return b >= 0x41 && b <= 0x5a ? b + 0x20 : b;
}

/** Whether a header block starts at `i` ('partial': the buffer ends inside a start name). */
function startAt(buf: Buffer, i: number): Match {
  let best: Match = 'no';
  for (const name of STARTS) {
    const n = Math.min(name.length, buf.length - i);
    let k = 0;
    while (k < n && lower(buf[i + k]!) === name[k]) k++;
    if (k === n) {
      if (n === name.length) return 'yes';
      best = 'partial';
    }
  }
  return best;
}

/** Index of the next header start at or after `from`, or -1. */
function nextStart(buf: Buffer, from: number): number {
  let i = from;
  while (i < buf.length) {
    const upper = buf.indexOf(0x43, i);
    const low = buf.indexOf(0x63, i);
    const j = upper < 0 ? low : low < 0 ? upper : Math.min(upper, low);
    if (j < 0) return -1;
    if (startAt(buf, j) === 'yes') return j;
    i = j + 1;
  }
  return -1;
}

/** Length of the longest tail of `buf` (shorter than `buf`) that may grow into a header start. */
function partialTail(buf: Buffer): number {
  for (let t = Math.min(LONGEST_START - 1, buf.length - 1); t > 0; t--) {
    if (startAt(buf, buf.length - t) === 'partial') return t;
  }
  return 0;
}

type Header =
  | { kind: 'incomplete' }
  | { kind: 'ok'; length: number; end: number }
  | { kind: 'bad'; error: FramingError; end: number };

/** Parses the header block at the start of `buf` (`offset`: its position in the stream). */
function parseHeader(buf: Buffer, maxMessageBytes: number, offset: number): Header {
  let p = 0;
  let length: number | undefined;
  let problem: FramingError | undefined;
  const bad = (code: FramingError['code'], message: string, end: number): Extract<Header, { kind: 'bad' }> => ({
    kind: 'bad',
    error: new FramingError(code, `${message} (header at byte ${offset})`, offset),
    end
  });
  for (;;) {
    const nl = buf.indexOf(LF, p);
    if (nl < 0 || nl >= MAX_HEADER_BYTES) {
      if (nl < 0 && buf.length < MAX_HEADER_BYTES) return { kind: 'incomplete' };
      return bad(
        'too-large',
        `a header block longer than ${MAX_HEADER_BYTES} bytes`,
        Math.min(buf.length, MAX_HEADER_BYTES)
      );
    }
    const raw = buf.toString('latin1', p, nl);
    if (buf[nl - 1] !== CR || nl === p)
      return bad('bad-header', `the header line ${quote(raw)} does not end with CRLF`, nl + 1);
    const line = raw.slice(0, -1);
    p = nl + 1;
    if (line === '') break;
    const m = HEADER_LINE.exec(line);
    if (!m) return bad('bad-header', `malformed header line ${quote(line)} (expected "Name: value")`, p);
    const name = m[1]!.toLowerCase();
    const value = m[2]!;
    if (name === 'content-length') {
      if (!/^\d{1,15}$/.test(value)) {
        problem ??= new FramingError(
          'bad-length',
          `Content-Length ${quote(value)} is not a number of bytes (header at byte ${offset})`,
          offset
        );
      } else if (length !== undefined && length !== Number(value)) {
        problem ??= new FramingError(
          'bad-length',
          `two Content-Length headers disagree (${length} and ${value}; header at byte ${offset})`,
          offset
        );
      } else {
        length = Number(value);
      }
    } else if (name === 'content-type') {
      const charset = /charset\s*=\s*"?([^";\s]+)/i.exec(value)?.[1];
      if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
        problem ??= new FramingError(
          'bad-charset',
          `Content-Type charset ${quote(charset)} is not supported, only UTF-8 (header at byte ${offset})`,
          offset
        );
      }
    }
  }
  if (problem) return { kind: 'bad', error: problem, end: p };
  if (length === undefined)
    return bad('bad-header', `the header block ${quote(buf.toString('latin1', 0, p - 4))} has no Content-Length`, p);
  if (length > maxMessageBytes) {
    return bad(
      'too-large',
      `Content-Length ${length} exceeds the limit of ${maxMessageBytes} bytes; reading on from the next header`,
      p
    );
  }
  return { kind: 'ok', length, end: p };
}

const FAST_PREFIX = Buffer.from('Content-Length: ', 'latin1');

/** The common case, `Content-Length: <digits>\r\n\r\n` exactly, without regexes or strings. */
function fastHeader(buf: Buffer, maxMessageBytes: number): Header | undefined {
  if (
    buf.length < FAST_PREFIX.length + 5 ||
    buf.compare(FAST_PREFIX, 0, FAST_PREFIX.length, 0, FAST_PREFIX.length) !== 0
  )
    return undefined;
  let i = FAST_PREFIX.length;
  let length = 0;
  const first = i;
  while (i < buf.length && i - first < 15 && buf[i]! >= 0x30 && buf[i]! <= 0x39)
    length = length * 10 + (buf[i++]! - 0x30);
  if (i === first || i + 4 > buf.length || buf[i] !== CR || buf[i + 1] !== LF || buf[i + 2] !== CR || buf[i + 3] !== LF)
    return undefined;
  return length > maxMessageBytes ? undefined : { kind: 'ok', length, end: i + 4 };
}

/** The incremental scanner (see the module comment). Not thread-safe; one per stream. */
export class FrameScanner {
  private chunks: Buffer[] = [];
  private size = 0;
  /** Stream offset of the first byte in `chunks`. */
  private offset = 0;
  /** Length of the body being awaited, or -1 while looking for a header. */
  private bodyLength = -1;
  private headerOffset = 0;
  private waitingHeader = false;
  private skipped = '';
  private skippedOffset = 0;
  private skippedDropped = 0;

  constructor(private readonly maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES) {}

  /** Whether a frame has begun (header or body) and is not complete. */
  get pending(): boolean {
    return this.bodyLength >= 0 || this.waitingHeader;
  }

  /** Bytes held now (a frame's body or header still arriving, output not yet scanned). */
  get bufferedBytes(): number {
    return this.size;
  }

  /** Forgets everything held (the stream is given up). */
  discard(): void {
    this.chunks = [];
    this.size = 0;
    this.bodyLength = -1;
    this.waitingHeader = false;
    this.skipped = '';
    this.skippedDropped = 0;
  }

  /** Scans `chunk`; events are appended to `out` in stream order. */
  push(chunk: Uint8Array, out: ScanEvent[]): void {
    if (chunk.length === 0) return;
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.chunks.push(buf);
    this.size += buf.length;
    this.scan(out);
  }

  /**
   * Gives up on the pending frame (its bytes stopped arriving for `quietMs`): an error, then
   * what arrived after its header is scanned again.
   */
  abandon(quietMs: number, out: ScanEvent[]): void {
    if (this.bodyLength >= 0) {
      const got = this.size;
      out.push({
        kind: 'error',
        error: new FramingError(
          'stalled',
          `the frame at byte ${this.headerOffset} declared ${this.bodyLength} bytes but only ${got} arrived, then nothing for ${quietMs} ms; it was discarded and the stream is read from its body on`,
          this.headerOffset
        )
      });
      this.bodyLength = -1;
    } else if (this.waitingHeader) {
      const buf = this.flatten();
      if (startAt(buf, 0) === 'yes') {
        out.push({
          kind: 'error',
          error: new FramingError(
            'stalled',
            `an incomplete header at byte ${this.offset}, then nothing for ${quietMs} ms: ${quote(buf.toString('latin1'))}`,
            this.offset
          )
        });
        this.drop(buf.length);
      } else {
        this.skip(buf, out);
        this.drop(buf.length);
        this.flushSkipped(out);
      }
      this.waitingHeader = false;
    }
    this.scan(out);
  }

  /** The stream ended: a frame cut short is an error; pending output is reported. */
  end(out: ScanEvent[]): void {
    if (this.bodyLength >= 0) {
      out.push({
        kind: 'error',
        error: new FramingError(
          'truncated',
          `the stream ended inside the frame at byte ${this.headerOffset}: ${this.size} of ${this.bodyLength} body bytes arrived`,
          this.headerOffset
        )
      });
    } else if (this.size > 0) {
      const buf = this.flatten();
      if (startAt(buf, 0) === 'yes') {
        out.push({
          kind: 'error',
          error: new FramingError(
            'truncated',
            `the stream ended inside a header at byte ${this.offset}: ${quote(buf.toString('latin1'))}`,
            this.offset
          )
        });
      } else {
        this.skip(buf, out);
      }
    }
    this.flushSkipped(out);
    this.chunks = [];
    this.size = 0;
    this.bodyLength = -1;
    this.waitingHeader = false;
  }

  private scan(out: ScanEvent[]): void {
    for (;;) {
      if (this.bodyLength >= 0) {
        if (this.size < this.bodyLength) return;
        const buf = this.flatten();
        const body = buf.subarray(0, this.bodyLength);
        out.push({ kind: 'frame', body, offset: this.headerOffset });
        this.drop(this.bodyLength);
        this.bodyLength = -1;
        continue;
      }
      this.waitingHeader = false;
      if (this.size === 0) return;
      const buf = this.flatten();
      // Nearly every frame: `Content-Length: N` alone, checked before the general rules.
      const fast = fastHeader(buf, this.maxMessageBytes);
      if (fast?.kind === 'ok') {
        if (this.skipped !== '' || this.skippedDropped > 0) this.flushSkipped(out);
        this.headerOffset = this.offset;
        this.bodyLength = fast.length;
        this.drop(fast.end);
        continue;
      }
      const start = startAt(buf, 0);
      if (start === 'partial') {
        this.waitingHeader = true;
        return;
      }
      if (start === 'yes') {
        this.flushSkipped(out);
        const header = parseHeader(buf, this.maxMessageBytes, this.offset);
        if (header.kind === 'incomplete') {
          this.waitingHeader = true;
          return;
        }
        if (header.kind === 'bad') {
          out.push({ kind: 'error', error: header.error });
        } else {
          this.headerOffset = this.offset;
          this.bodyLength = header.length;
        }
        this.drop(header.end);
        continue;
      }
      const next = nextStart(buf, 1);
      const end = next >= 0 ? next : buf.length - partialTail(buf);
      this.skip(buf.subarray(0, end), out);
      this.drop(end);
    }
  }

  /** Makes the buffered bytes one Buffer and returns it. */
  private flatten(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks, this.size)];
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  /** Consumes `n` bytes of the (flattened) buffer. */
  private drop(n: number): void {
    const buf = this.chunks[0]!;
    this.chunks = n >= buf.length ? [] : [buf.subarray(n)];
    this.size -= n;
    this.offset += n;
  }

  /** Records skipped bytes, reporting each completed line. */
  private skip(bytes: Buffer, out: ScanEvent[]): void {
    let from = 0;
    while (from < bytes.length) {
      const nl = bytes.indexOf(LF, from);
      const to = nl < 0 ? bytes.length : nl;
      if (this.skipped === '' && this.skippedDropped === 0) this.skippedOffset = this.offset + from;
      const room = MAX_SKIPPED_LINE_CHARS - this.skipped.length;
      const piece = bytes.toString('utf8', from, Math.min(to, from + Math.max(room, 0) * 4));
      this.skipped += piece.slice(0, Math.max(room, 0));
      this.skippedDropped += Math.max(0, to - from - Buffer.byteLength(piece.slice(0, Math.max(room, 0))));
      if (nl < 0) return;
      this.flushSkipped(out);
      from = nl + 1;
    }
  }

  private flushSkipped(out: ScanEvent[]): void {
    const text = this.skipped.replace(/\r$/, '');
    if (text.trim() !== '' || this.skippedDropped > 0) {
      out.push({
        kind: 'skipped',
        text: this.skippedDropped > 0 ? `${text}… (${this.skippedDropped} more bytes)` : text,
        offset: this.skippedOffset
      });
    }
    this.skipped = '';
    this.skippedDropped = 0;
  }
}
