/**
 * vscode-jsonrpc over a browser WebSocket: one WebSocket text message carries exactly
 * one JSON-RPC message (no Content-Length framing).
 */
import {
  AbstractMessageReader,
  AbstractMessageWriter,
  DataCallback,
  Disposable,
  Message,
  MessageReader,
  MessageWriter
} from 'vscode-jsonrpc/browser';

/** A message that is not one JSON-RPC 2.0 object; the socket stays open. */
export class MalformedMessageError extends Error {
  constructor(
    message: string,
    /** The start of the offending payload, for the log. */
    readonly sample: string,
    options?: { cause?: unknown }
  ) {
    super(message, options);
    this.name = 'MalformedMessageError';
  }
}

/** Reads JSON-RPC messages from a WebSocket. Messages before `listen()` are kept. */
export class WebSocketMessageReader extends AbstractMessageReader implements MessageReader {
  private _callback: DataCallback | null = null;
  private readonly _queue: Message[] = [];

  constructor(private readonly _socket: WebSocket) {
    super();
    _socket.addEventListener('message', this._onMessage);
    _socket.addEventListener('close', this._onClose);
  }

  listen(callback: DataCallback): Disposable {
    this._callback = callback;
    while (this._queue.length) {
      callback(this._queue.shift()!);
    }
    return Disposable.create(() => {
      this._callback = null;
    });
  }

  override dispose(): void {
    this._socket.removeEventListener('message', this._onMessage);
    this._socket.removeEventListener('close', this._onClose);
    super.dispose();
  }

  private readonly _onMessage = (event: MessageEvent): void => {
    const message = parseMessage(event.data);
    if (message instanceof MalformedMessageError) {
      this.fireError(message);
      return;
    }
    if (this._callback) {
      this._callback(message);
    } else {
      this._queue.push(message);
    }
  };

  private readonly _onClose = (): void => {
    this.fireClose();
  };
}

/** Parses one WebSocket payload into a JSON-RPC message, or says why it is not one. */
export function parseMessage(data: unknown): Message | MalformedMessageError {
  if (typeof data !== 'string') {
    return new MalformedMessageError('Binary WebSocket message (expected JSON text)', '');
  }
  const sample = data.slice(0, 200);
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch (cause) {
    return new MalformedMessageError('Message is not valid JSON', sample, { cause });
  }
  if (
    typeof value !== 'object' ||
    value === null ||
    Array.isArray(value) ||
    (value as { jsonrpc?: unknown }).jsonrpc !== '2.0'
  ) {
    return new MalformedMessageError('Message is not a JSON-RPC 2.0 object', sample);
  }
  return value as Message;
}

/** `WebSocket.OPEN`, spelled out so tests can pass Node's `ws` sockets. */
const WS_OPEN = 1;

/** Writes JSON-RPC messages to a WebSocket, one message per frame. */
export class WebSocketMessageWriter extends AbstractMessageWriter implements MessageWriter {
  private _errorCount = 0;

  constructor(private readonly _socket: WebSocket) {
    super();
  }

  async write(msg: Message): Promise<void> {
    if (this._socket.readyState !== WS_OPEN) {
      const error = new Error('The Cellmate socket is not open');
      this._errorCount += 1;
      this.fireError(error, msg, this._errorCount);
      throw error;
    }
    try {
      this._socket.send(JSON.stringify(msg));
      this._errorCount = 0;
    } catch (error) {
      this._errorCount += 1;
      this.fireError(error, msg, this._errorCount);
      throw error;
    }
  }

  end(): void {
    // The socket's owner closes it; nothing is buffered here.
  }
}
