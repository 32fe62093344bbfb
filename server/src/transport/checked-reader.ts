/**
 * JSON-RPC 2.0 error replies for frames vscode-jsonrpc would drop in silence . Its stream reader rejects a body that is not JSON with a connection error and
 * its connection logs (and ignores) anything that is neither a request, a notification
 * nor a response — so the client waits forever. This reader sits in between: a body that
 * is not JSON is answered with `-32700 Parse error` (`id: null`); `null`, a number, a
 * string, an array (JSON-RPC batches are not supported, `[]` included) or an object that
 * is not a valid request, notification or response gets `-32600 Invalid Request` (with the
 * request's `id` when it has a usable one). The connection stays usable: the frame is
 * consumed and the next one is read as usual.
 */
import {
  AbstractMessageReader,
  StreamMessageReader,
  type DataCallback,
  type Disposable,
  type Message,
  type MessageReader,
  type MessageWriter
} from 'vscode-jsonrpc/node.js';

/** JSON-RPC 2.0's codes for frames that cannot be handled. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

/** A frame the reader answered itself instead of passing on. */
export interface RejectedFrame {
  code: typeof PARSE_ERROR | typeof INVALID_REQUEST;
  message: string;
}

const NOT_JSON = Symbol('not-json');
interface NotJson {
  [NOT_JSON]: string;
}

/**
 * A message reader over a byte stream that answers malformed frames through `writer`
 * and passes every well-formed message on.
 */
export class CheckedMessageReader extends AbstractMessageReader implements MessageReader {
  private readonly inner: StreamMessageReader;

  constructor(
    input: NodeJS.ReadableStream,
    private readonly writer: MessageWriter,
    private readonly onRejected: (frame: RejectedFrame) => void = () => {}
  ) {
    super();
    this.inner = new StreamMessageReader(input, {
      charset: 'utf-8',
      contentTypeDecoder: {
        name: 'application/json',
        // A body that is not JSON becomes a marker (answered below), not a reader error.
        decode: (buffer: Uint8Array) => {
          const text = Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength).toString('utf8');
          try {
            return Promise.resolve(JSON.parse(text) as Message);
          } catch (error) {
            // The not-JSON marker rides the reader's Message channel to `listen`, which answers it and never passes it on.
            return Promise.resolve({ [NOT_JSON]: (error as Error).message } as unknown as Message);
          }
        }
      }
    });
    this.inner.onError((error) => this.fireError(error));
    this.inner.onClose(() => this.fireClose());
    this.inner.onPartialMessage((info) => this.firePartialMessage(info));
  }

  /** Starts reading; `callback` receives only well-formed messages. */
  listen(callback: DataCallback): Disposable {
    return this.inner.listen((message) => {
      const rejected = classify(message);
      if (!rejected) {
        callback(message);
        return;
      }
      this.onRejected(rejected);
      void this.writer
        .write({
          jsonrpc: '2.0',
          id: rejected.id,
          error: { code: rejected.code, message: rejected.message }
        } as Message)
        .catch(() => undefined);
    });
  }

  /** Stops reading. */
  override dispose(): void {
    this.inner.dispose();
    super.dispose();
  }
}

/** Why a decoded frame is not a message this connection can handle, or `undefined`. */
export function classify(value: unknown): (RejectedFrame & { id: string | number | null }) | undefined {
  if (typeof value === 'object' && value !== null && NOT_JSON in value) {
    return {
      code: PARSE_ERROR,
      id: null,
      message: `Parse error: the message body is not valid JSON (${(value as NotJson)[NOT_JSON]}).`
    };
  }
  const invalid = (why: string, id: string | number | null = null) =>
    ({ code: INVALID_REQUEST, id, message: `Invalid Request: ${why}` }) as const;
  if (Array.isArray(value))
    return invalid('batch requests (JSON arrays) are not supported; send one request object per message.');
  if (typeof value !== 'object' || value === null)
    return invalid(`a message must be a JSON object, not ${value === null ? 'null' : typeof value}.`);
  const m = value as Record<string, unknown>;
  const id = m.id;
  const usableId = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
  if (m.jsonrpc !== '2.0') return invalid('"jsonrpc" must be exactly "2.0".', usableId);
  if ('method' in m) {
    if (typeof m.method !== 'string' || m.method === '')
      return invalid('"method" must be a non-empty string.', usableId);
    if ('id' in m && id !== null && usableId === null) return invalid('"id" must be a string, a number or null.');
    if ('params' in m && typeof m.params !== 'object' && m.params !== undefined) {
      return invalid('"params" must be an object or an array.', usableId);
    }
    return undefined;
  }
  const isResponse = ('result' in m || 'error' in m) && (usableId !== null || id === null);
  return isResponse
    ? undefined
    : invalid('the object is neither a request (it has no "method") nor a response.', usableId);
}
