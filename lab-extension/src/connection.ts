/**
 * The pane's connection to the Cellmate companion server: JSON-RPC over the Jupyter
 * server's authenticated WebSocket route `<wsUrl>/cellmate/ws`, reconnecting forever.
 *
 * Each socket gets its own vscode-jsonrpc connection; `cellmate/hello` is always the
 * first request on it, and other requests are refused until hello succeeded.
 */
import { URLExt } from '@jupyterlab/coreutils';
import type { ServerConnection } from '@jupyterlab/services';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';
import {
  CancellationToken,
  CancellationTokenSource,
  createMessageConnection,
  Logger,
  MessageConnection,
  ResponseError
} from 'vscode-jsonrpc/browser';

import {
  ErrorCodes,
  HelloResult,
  Notifications,
  NotificationMethod,
  PROTOCOL_VERSION,
  RequestMethod,
  Requests,
  Routes
} from '@cellmate/protocol';
import { resultProblem } from '@cellmate/protocol/lib/wire-schemas';

import { isChatEventParams, isChatListParams, isInlineDelta } from './guards';
import { MalformedMessageError, WebSocketMessageReader, WebSocketMessageWriter } from './transport';

/** `connecting` until the first hello; `reconnecting` after any drop or failed attempt. */
export type ConnectionState = 'connecting' | 'connected' | 'reconnecting' | 'disposed';

/** What the pane shows about the connection. */
export interface IConnectionStatus {
  readonly state: ConnectionState;
  /** When the next attempt starts (epoch ms), while waiting to reconnect. */
  readonly retryAt?: number;
  /** Why the last socket closed or the last attempt failed, in words. */
  readonly reason?: string;
}

/** A server → pane notification, discriminated on `method`. */
export type IncomingNotification = {
  [K in NotificationMethod]: { method: K; params: Notifications[K] };
}[NotificationMethod];

/** A request the server answered with an error, or that could not be sent. */
export class CellmateRequestError extends Error {
  constructor(
    readonly method: RequestMethod,
    /**
     * The JSON-RPC error code (see `ErrorCodes`), -1 when not connected, or
     * {@link CellmateRequestError.MALFORMED_RESULT} when the answer has the wrong shape.
     */
    readonly code: number,
    message: string,
    options?: { cause?: unknown }
  ) {
    super(message, options);
    this.name = 'CellmateRequestError';
  }

  /** The code of an answer that is not the shape its request promises (a server of another version). */
  static readonly MALFORMED_RESULT = -2;
}

/** Close codes the pane explains to the user. */
const CLOSE_REASONS: Record<number, string> = {
  1001: 'the Jupyter server is going away',
  1006: 'the connection dropped',
  1011: 'the Cellmate server failed',
  1012: 'the Cellmate server is restarting',
  1013: 'the Cellmate server is not ready yet',
  4001: 'the Cellmate server did not answer hello in time'
};

const HELLO_TIMEOUT_MS = 10_000;

/** A live, self-healing JSON-RPC connection to the companion server. */
export class CellmateConnection implements IDisposable {
  constructor(options: CellmateConnection.IOptions) {
    this._settings = options.serverSettings;
    this._initialDelay = options.initialDelayMs ?? 500;
    this._maxDelay = options.maxDelayMs ?? 5000;
  }

  /** The URL of the socket (with the token when the server settings append it). */
  get url(): string {
    const settings = this._settings;
    let url = URLExt.join(settings.wsUrl, Routes.websocket);
    // Same rule as @jupyterlab/services' kernel sockets.
    if (settings.appendToken && settings.token !== '') {
      url += `?token=${encodeURIComponent(settings.token)}`;
    }
    return url;
  }

  get status(): IConnectionStatus {
    return this._status;
  }

  /** The last hello answer (null before the first successful hello). */
  get hello(): HelloResult | null {
    return this._hello;
  }

  get isDisposed(): boolean {
    return this._status.state === 'disposed';
  }

  /** Emitted whenever `status` changes. */
  get statusChanged(): ISignal<this, IConnectionStatus> {
    return this._statusChanged;
  }

  /** Emitted after each successful hello: first connect and every reconnect. */
  get connected(): ISignal<this, HelloResult> {
    return this._connected;
  }

  /** Server notifications, already checked for shape. */
  get notified(): ISignal<this, IncomingNotification> {
    return this._notified;
  }

  /** Something arrived that the pane could not use (malformed message, bad params). */
  get problem(): ISignal<this, string> {
    return this._problem;
  }

  /** Opens the first socket. Idempotent. */
  start(): void {
    if (!this._started && !this.isDisposed) {
      this._started = true;
      this._open();
    }
  }

  /** Closes the current socket now and reconnects at once (e.g. a "retry" button). */
  reconnectNow(): void {
    if (this.isDisposed) {
      return;
    }
    this._clearTimer();
    this._failures = 0;
    if (this._socket) {
      this._socket.close(1000, 'reconnect requested');
    } else {
      this._open();
    }
  }

  /**
   * Sends a request once connected (after hello).
   * Rejects with {@link CellmateRequestError} when not connected or the server errs.
   */
  async request<K extends RequestMethod>(
    method: K,
    params: Requests[K]['params'],
    signal?: AbortSignal
  ): Promise<Requests[K]['result']> {
    const rpc = this._rpc;
    if (!rpc || this._status.state !== 'connected') {
      throw new CellmateRequestError(method, -1, 'Not connected to the Cellmate server');
    }
    return this._send(rpc, method, params, signal);
  }

  /**
   * Serves a server → pane request (the notebook port, `PaneRequests`) on this and every
   * later socket. Register before `start()`.
   */
  handleServerRequest(method: string, handler: (params: unknown, token: CancellationToken) => Promise<unknown>): void {
    this._serverRequests.set(method, handler);
    this._rpc?.onRequest(method, (params: unknown, token) => handler(params, token));
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._clearTimer();
    this._setStatus({ state: 'disposed' });
    this._teardown();
    this._socket?.close(1000, 'disposed');
    this._socket = null;
    Signal.clearData(this);
  }

  // -------------------------------------------------------------------------------------

  private _open(): void {
    const socket = new this._settings.WebSocket(this.url);
    const reader = new WebSocketMessageReader(socket);
    const writer = new WebSocketMessageWriter(socket);
    const rpc = createMessageConnection(reader, writer, this._logger);
    this._socket = socket;
    this._rpc = rpc;

    rpc.onNotification((method, params) => this._onNotification(method, params));
    for (const [method, handler] of this._serverRequests) {
      rpc.onRequest(method, (params: unknown, token) => handler(params, token));
    }
    rpc.onError(([error]) => {
      if (error instanceof MalformedMessageError) {
        this._report(`${error.message}: ${error.sample}`);
      }
    });
    rpc.listen();

    socket.addEventListener('open', () => {
      if (this._socket === socket) {
        void this._greet(rpc, socket);
      }
    });
    // A failed socket reports 'error' then 'close'; the close handler does the work.
    socket.addEventListener('error', () => undefined);
    socket.addEventListener('close', (event) => {
      if (this._socket === socket) {
        this._onClosed(event.code, event.reason);
      }
    });
  }

  private async _greet(rpc: MessageConnection, socket: WebSocket): Promise<void> {
    const timer = setTimeout(() => socket.close(4001, 'hello timeout'), HELLO_TIMEOUT_MS);
    try {
      // The secret names this pane to the server: only the pane that started a chat's work
      // may answer its cards, and a reload of this tab stays that pane.
      const hello = await this._send(rpc, 'cellmate/hello', {
        protocolVersion: PROTOCOL_VERSION,
        interactive: true,
        ...(this._paneSecret ? { paneSecret: this._paneSecret } : {})
      });
      if (this._socket !== socket) {
        return;
      }
      this._hello = hello;
      if (typeof hello.paneSecret === 'string') {
        this._paneSecret = hello.paneSecret;
        writePaneSecret(hello.paneSecret);
      }
      this._failures = 0;
      this._setStatus({ state: 'connected' });
      this._connected.emit(hello);
    } catch (error) {
      if (this._socket !== socket) {
        return;
      }
      if (error instanceof CellmateRequestError && error.code === CellmateRequestError.MALFORMED_RESULT) {
        socket.close(4002, 'bad hello');
        return;
      }
      if (error instanceof CellmateRequestError && error.code === ErrorCodes.ProtocolMismatch) {
        this._mismatch = error.message || 'Protocol version mismatch: reload the page';
      }
      socket.close(4003, 'hello failed');
    } finally {
      clearTimeout(timer);
    }
  }

  private async _send<K extends RequestMethod>(
    rpc: MessageConnection,
    method: K,
    params: Requests[K]['params'],
    signal?: AbortSignal
  ): Promise<Requests[K]['result']> {
    const source = new CancellationTokenSource();
    const abort = (): void => source.cancel();
    signal?.addEventListener('abort', abort);
    let result: unknown;
    try {
      result = await rpc.sendRequest<unknown>(method, params, source.token);
    } catch (error) {
      if (error instanceof ResponseError) {
        throw new CellmateRequestError(method, error.code, error.message, { cause: error });
      }
      const message = error instanceof Error ? error.message : String(error);
      throw new CellmateRequestError(method, -1, message, { cause: error });
    } finally {
      signal?.removeEventListener('abort', abort);
      source.dispose();
    }
    // The server may be another version (or broken): a wrong shape stops here, in words.
    const problem = resultProblem(method, result);
    if (problem !== undefined) {
      const why = `The Cellmate server answered ${method} with something unexpected (${problem}): ${sample(result)}`;
      this._report(why);
      throw new CellmateRequestError(method, CellmateRequestError.MALFORMED_RESULT, why);
    }
    // Checked against the method's result schema just above.
    return result as Requests[K]['result'];
  }

  private _onNotification(method: string, params: unknown): void {
    switch (method) {
      case 'chat/event':
        if (isChatEventParams(params)) {
          this._notified.emit({ method, params });
        } else {
          this._report(`Ignored a malformed chat event: ${sample(params)}`);
        }
        return;
      case 'chat/listChanged':
        if (isChatListParams(params)) {
          this._notified.emit({ method, params });
        } else {
          this._report(`Ignored a malformed chat list: ${sample(params)}`);
        }
        return;
      case 'inline/delta':
        if (isInlineDelta(params)) {
          this._notified.emit({ method, params });
        }
        return;
      default:
        // A newer server may notify about things this pane does not know yet.
        return;
    }
  }

  private _onClosed(code: number, reason: string): void {
    this._teardown();
    this._socket = null;
    if (this.isDisposed) {
      return;
    }
    this._failures += 1;
    const delay = reconnectDelay(this._failures, this._initialDelay, this._maxDelay);
    const why = this._mismatch ?? (reason || CLOSE_REASONS[code] || `the socket closed (code ${code})`);
    this._mismatch = null;
    this._setStatus({ state: 'reconnecting', retryAt: Date.now() + delay, reason: why });
    this._timer = setTimeout(() => {
      this._timer = null;
      this._open();
    }, delay);
  }

  private _teardown(): void {
    const rpc = this._rpc;
    this._rpc = null;
    // Rejects pending requests ("connection got disposed").
    rpc?.dispose();
  }

  private _clearTimer(): void {
    if (this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
  }

  private _setStatus(status: IConnectionStatus): void {
    this._status = status;
    this._statusChanged.emit(status);
  }

  private _report(message: string): void {
    // A real problem worth a console line: the server sent something we cannot use.
    console.warn(`Cellmate: ${message}`);
    this._problem.emit(message);
  }

  private readonly _logger: Logger = {
    error: (message) => this._report(message),
    warn: (message) => this._report(message),
    info: () => undefined,
    log: () => undefined
  };

  private readonly _settings: ServerConnection.ISettings;
  private readonly _initialDelay: number;
  private readonly _maxDelay: number;
  private readonly _serverRequests = new Map<string, (params: unknown, token: CancellationToken) => Promise<unknown>>();
  private _started = false;
  private _socket: WebSocket | null = null;
  private _rpc: MessageConnection | null = null;
  private _hello: HelloResult | null = null;
  private _paneSecret: string | undefined = readPaneSecret();
  private _failures = 0;
  private _mismatch: string | null = null;
  private _timer: ReturnType<typeof setTimeout> | null = null;
  private _status: IConnectionStatus = { state: 'connecting' };
  private readonly _statusChanged = new Signal<this, IConnectionStatus>(this);
  private readonly _connected = new Signal<this, HelloResult>(this);
  private readonly _notified = new Signal<this, IncomingNotification>(this);
  private readonly _problem = new Signal<this, string>(this);
}

export namespace CellmateConnection {
  export interface IOptions {
    /** JupyterLab's server settings (`wsUrl`, `token`, `appendToken`, `WebSocket`). */
    serverSettings: ServerConnection.ISettings;
    /** First reconnect delay; doubles per failure. Default 500 ms. */
    initialDelayMs?: number;
    /** Longest reconnect delay. Default 5 s. */
    maxDelayMs?: number;
  }
}

/** Where this browser tab keeps its pane secret (per tab, kept across reloads). */
const PANE_SECRET_KEY = 'cellmate:pane-secret';

function readPaneSecret(): string | undefined {
  try {
    return globalThis.sessionStorage?.getItem(PANE_SECRET_KEY) ?? undefined;
  } catch {
    return undefined; // storage disabled: the secret lives as long as the page
  }
}

function writePaneSecret(secret: string): void {
  try {
    globalThis.sessionStorage?.setItem(PANE_SECRET_KEY, secret);
  } catch {
    // storage disabled: a reload is a new pane
  }
}

/** The wait before reconnect attempt `failures` (1-based): doubling, capped. */
export function reconnectDelay(failures: number, initialMs: number, maxMs: number): number {
  return Math.min(initialMs * 2 ** Math.max(0, failures - 1), maxMs);
}

function sample(value: unknown): string {
  try {
    return JSON.stringify(value)?.slice(0, 200) ?? String(value);
  } catch {
    return String(value);
  }
}
