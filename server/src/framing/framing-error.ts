/**
 * The one error type of the Content-Length framing (DBG-6, LSP-1). Every way a byte stream
 * can fail to be frames — a malformed header, a bad or oversized `Content-Length`, a body
 * that is not a JSON object, a frame cut off by the end of the stream or stalled — is a
 * `FramingError` with a `code` and a message that says what was wrong and where (byte
 * offset in the stream), so a log line is enough to tell a broken server from a bug here.
 */

/** What went wrong with the byte stream. */
export type FramingErrorCode =
  /** A header line that is not `Name: value` terminated by CRLF, or a header block without `Content-Length`. */
  | 'bad-header'
  /** `Content-Length` is not a decimal number of bytes (or two disagree). */
  | 'bad-length'
  /** `Content-Length` above the reader's `maxMessageBytes`, or a header block longer than 8 KiB. */
  | 'too-large'
  /** `Content-Type` names a charset other than UTF-8. */
  | 'bad-charset'
  /** The body is not JSON. */
  | 'not-json'
  /** The body is JSON but not an object (LSP and DAP messages are objects). */
  | 'not-object'
  /** The stream ended in the middle of a frame. */
  | 'truncated'
  /** A frame started but its bytes stopped arriving for `stallTimeoutMs`; it was discarded. */
  | 'stalled'
  /** The stream held more than its share of the budget all servers and adapters share (`frame-budget.ts`); it is no longer read. */
  | 'over-budget';

/** A framing failure (see {@link FramingErrorCode}); the reader resynchronises after it. */
export class FramingError extends Error {
  constructor(
    readonly code: FramingErrorCode,
    message: string,
    /** Byte offset in the stream where the offending header or body starts. */
    readonly offset: number
  ) {
    super(message);
    this.name = 'FramingError';
  }
}

/** At most `max` characters of `text` for an error message or log line, quoted and escaped. */
export function quote(text: string, max = 120): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  return JSON.stringify(cut);
}
