/**
 * A Jupyter kernel client over ZeroMQ (messaging spec 5.3).
 *
 * Sockets: shell and stdin are DEALERs sharing one routing id (the spec requires it:
 * the kernel addresses `input_request` to the identity of the shell client that sent
 * the running `execute_request`), control is a DEALER, iopub a SUB subscribed to
 * everything, heartbeat a REQ.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Dealer, Request, Subscriber } from 'zeromq';
import { Emitter, withDeadline, type Disposable, type Event } from '../common/event.js';
import { KernelBridgeError, throwIfAborted } from '../common/errors.js';
import {
  createMessage,
  isMsgType,
  parentMsgId,
  type AnyMessage,
  type ContentMap,
  type JSONObject,
  type Message,
  type ReplyMap,
  type RequestType
} from '../messaging/messages.js';
import { deserialize, serialize } from '../messaging/wire.js';
import { readConnectionFile, parseConnectionInfo, socketUrl, type ConnectionInfo } from './connection.js';
import { readLoop, serialSender } from './socket-util.js';

const require = createRequire(import.meta.url);
let zeromq: typeof import('zeromq') | undefined;
/**
 * `zeromq`, loaded when the first private kernel connects: a companion that only drives
 * notebook kernels over Jupyter Server (or none yet) never loads the native addon.
 */
function zmq(): typeof import('zeromq') {
  zeromq ??= require('zeromq') as typeof import('zeromq');
  return zeromq;
}

export interface ZmqKernelClientOptions {
  /** Kernel pid: enables SIGINT interrupts. */
  pid?: number;
  /** Default: `signal` when `pid` is known, else `message` (from the kernelspec). */
  interruptMode?: 'signal' | 'message';
  /** Handshake deadline (kernel_info_reply and a live IOPub). Default 30 s. */
  connectTimeoutMs?: number;
  signal?: AbortSignal;
  username?: string;
  /** Settles when the kernel process exits: pending calls then fail with `kernel_dead`. */
  processExit?: Promise<unknown>;
}

export interface RequestOptions {
  metadata?: JSONObject;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface ExecuteOptions extends RequestOptions {
  allowStdin?: boolean;
  silent?: boolean;
  storeHistory?: boolean;
  stopOnError?: boolean;
  /** Each IOPub message of this request, in order, as it arrives. */
  onIOPub?: (msg: AnyMessage) => void;
  /** Answers this request's `input_request`s; without it use `client.inputReply()`. */
  onInputRequest?: (req: Message<'input_request'>) => string | Promise<string>;
}

/**
 * The `execute_request` content for `code` under `opts` — one place for the defaults, so
 * both transports (ZeroMQ here, Jupyter Server in `jupyter-server/client.ts`) send the same
 * request: history is stored unless silent, stdin is off unless asked for.
 */
export function executeRequestContent(code: string, opts: ExecuteOptions): ContentMap['execute_request'] {
  const silent = opts.silent ?? false;
  return {
    code,
    silent,
    store_history: opts.storeHistory ?? !silent,
    user_expressions: {},
    allow_stdin: opts.allowStdin ?? false,
    stop_on_error: opts.stopOnError ?? true
  };
}

export interface ExecuteResult {
  reply: Message<'execute_reply'>;
  /** IOPub messages whose parent is the request, in arrival order (incl. status). */
  iopub: AnyMessage[];
}

export interface StatusEvent {
  state: ContentMap['status']['execution_state'];
  parentMsgId: string | undefined;
}

interface PendingExecute {
  opts: ExecuteOptions;
  iopub: AnyMessage[];
  reply?: Message<'execute_reply'>;
  idle: boolean;
  resolve: (r: ExecuteResult) => void;
}

interface PendingReply {
  resolve: (m: AnyMessage) => void;
  reject: (e: Error) => void;
}

export class ZmqKernelClient implements Disposable {
  /** Every IOPub message. */
  readonly onIOPub: Event<AnyMessage>;
  /** Kernel status changes (from IOPub `status`). */
  readonly onStatus: Event<StatusEvent>;
  /** `input_request`s no per-execute handler answered; reply with `inputReply()`. */
  readonly onInputRequest: Event<Message<'input_request'>>;
  /** Frames that failed to decode (bad signature, malformed); they are dropped. */
  readonly onProtocolError: Event<KernelBridgeError>;
  /** `debug_event`s (DAP events of the kernel's debugger). */
  readonly onDebugEvent: Event<JSONObject>;

  readonly session = randomUUID();
  private readonly iopubEmitter = new Emitter<AnyMessage>();
  private readonly statusEmitter = new Emitter<StatusEvent>();
  private readonly inputEmitter = new Emitter<Message<'input_request'>>();
  private readonly protocolErrorEmitter = new Emitter<KernelBridgeError>();
  private readonly debugEventEmitter = new Emitter<JSONObject>();
  private readonly shell: Dealer;
  private readonly stdin: Dealer;
  private readonly control: Dealer;
  private readonly iopub: Subscriber;
  private hb: Request | undefined;
  private readonly send: Record<'shell' | 'stdin' | 'control', (f: Buffer[]) => Promise<void>>;
  private readonly replies = new Map<string, PendingReply>();
  private readonly executions = new Map<string, PendingExecute>();
  private readonly iopubWaiters = new Map<string, () => void>();
  private pendingInput: Message<'input_request'> | undefined;
  private deadReason: KernelBridgeError | undefined;
  private disposed = false;

  private constructor(
    readonly connectionInfo: ConnectionInfo,
    private readonly options: ZmqKernelClientOptions
  ) {
    this.onIOPub = this.iopubEmitter.event;
    this.onStatus = this.statusEmitter.event;
    this.onInputRequest = this.inputEmitter.event;
    this.onProtocolError = this.protocolErrorEmitter.event;
    this.onDebugEvent = this.debugEventEmitter.event;
    const routingId = `cellmate-${randomUUID()}`;
    const { Dealer, Subscriber } = zmq();
    this.shell = new Dealer({ routingId, linger: 0 });
    this.stdin = new Dealer({ routingId, linger: 0 });
    this.control = new Dealer({ linger: 0 });
    this.iopub = new Subscriber({ linger: 0 });
    this.iopub.subscribe();
    this.shell.connect(socketUrl(connectionInfo, 'shell'));
    // stdin connects only once the kernel answered (see connectStdin).
    this.control.connect(socketUrl(connectionInfo, 'control'));
    this.iopub.connect(socketUrl(connectionInfo, 'iopub'));
    this.send = {
      shell: serialSender(this.shell),
      stdin: serialSender(this.stdin),
      control: serialSender(this.control)
    };
    void readLoop(this.shell, (f) => this.onReply(f));
    void readLoop(this.control, (f) => this.onReply(f));
    void readLoop(this.stdin, (f) => this.onStdin(f));
    void readLoop(this.iopub, (f) => this.onIOPubFrames(f));
    options.processExit?.then(
      () => this.markDead(new KernelBridgeError('kernel_dead', 'kernel process exited')),
      () => undefined
    );
  }

  /**
   * Connects to a kernel and waits until it answers `kernel_info_request` and IOPub is
   * live (ZMQ SUB sockets miss what is published before they join, so the handshake
   * repeats kernel_info until its IOPub status arrives, as jupyter_client does).
   */
  static async connect(
    connection: ConnectionInfo | string,
    options: ZmqKernelClientOptions = {}
  ): Promise<{ client: ZmqKernelClient; kernelInfo: Message<'kernel_info_reply'> }> {
    const info =
      typeof connection === 'string' ? await readConnectionFile(connection) : parseConnectionInfo(connection);
    throwIfAborted(options.signal, 'connect');
    const client = new ZmqKernelClient(info, options);
    try {
      const kernelInfo = await client.handshake(options.connectTimeoutMs ?? 30_000, options.signal);
      await client.connectStdin(options.connectTimeoutMs ?? 30_000, options.signal);
      return { client, kernelInfo };
    } catch (e) {
      client.dispose();
      throw e;
    }
  }

  get interruptMode(): 'signal' | 'message' {
    return this.options.interruptMode ?? (this.options.pid !== undefined ? 'signal' : 'message');
  }

  /**
   * Connects stdin after the kernel is up and waits for the ZMTP handshake. Connected
   * earlier (before the kernel bound its ports), ipykernel's stdin ROUTER sometimes
   * never routes `input_request` to us — its ROUTER_HANDOVER is set only after bind
   * (ipykernel#270, libzmq#2892); measured here: 3 failures in 10 launches. A kernel only
   * sends on stdin in answer to our execute, so the handshake must be done before that.
   */
  private async connectStdin(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const handshake = new Promise<void>((resolve) => this.stdin.events.on('handshake', () => resolve()));
    this.stdin.connect(socketUrl(this.connectionInfo, 'stdin'));
    await withDeadline(handshake, {
      ms: timeoutMs,
      signal,
      onTimeout: () => new KernelBridgeError('timeout', `stdin handshake not done within ${timeoutMs} ms`),
      onAbort: () => new KernelBridgeError('aborted', 'connect aborted')
    });
  }

  private async handshake(timeoutMs: number, signal?: AbortSignal): Promise<Message<'kernel_info_reply'>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const remaining = deadline - Date.now();
      if (remaining <= 0)
        throw new KernelBridgeError('timeout', `kernel did not answer kernel_info within ${timeoutMs} ms`);
      const msg = this.message('kernel_info_request', {});
      const sawIOPub = new Promise<void>((r) => this.iopubWaiters.set(msg.header.msg_id, r));
      try {
        const [reply] = await Promise.all([
          this.sendRequest('shell', msg, { signal, timeoutMs: Math.min(1000, remaining) }),
          withDeadline(sawIOPub, {
            ms: Math.min(1000, remaining),
            signal,
            onTimeout: () => new KernelBridgeError('timeout', 'no IOPub status yet'),
            onAbort: () => new KernelBridgeError('aborted', 'connect aborted')
          })
        ]);
        return reply;
      } catch (e) {
        if (!(e instanceof KernelBridgeError) || e.code !== 'timeout') throw e;
      } finally {
        this.iopubWaiters.delete(msg.header.msg_id);
        this.replies.delete(msg.header.msg_id);
      }
    }
  }

  /** Builds a message in this client's session. */
  message<T extends keyof ContentMap>(msgType: T, content: ContentMap[T], metadata?: JSONObject): Message<T> {
    return createMessage({ msgType, content, session: this.session, username: this.options.username, metadata });
  }

  /** Sends a shell/control request and resolves with its reply (typed by `ReplyMap`). */
  request<K extends RequestType>(
    channel: 'shell' | 'control',
    msgType: K,
    content: ContentMap[K],
    opts: RequestOptions = {}
  ): Promise<Message<ReplyMap[K]>> {
    return this.sendRequest(channel, this.message(msgType, content, opts.metadata), opts);
  }

  private async sendRequest<K extends RequestType>(
    channel: 'shell' | 'control',
    msg: Message<K>,
    opts: RequestOptions
  ): Promise<Message<ReplyMap[K]>> {
    this.checkUsable(opts.signal, msg.header.msg_type);
    const id = msg.header.msg_id;
    const reply = new Promise<AnyMessage>((resolve, reject) => this.replies.set(id, { resolve, reject }));
    try {
      await this.send[channel](serialize(msg, this.connectionInfo.key));
      const m = await withDeadline(reply, {
        ms: opts.timeoutMs,
        signal: opts.signal,
        onTimeout: () =>
          new KernelBridgeError('timeout', `${msg.header.msg_type}: no reply within ${opts.timeoutMs} ms`),
        onAbort: () =>
          new KernelBridgeError('aborted', `${msg.header.msg_type} aborted`, { cause: opts.signal?.reason })
      });
      return m as Message<ReplyMap[K]>;
    } finally {
      this.replies.delete(id);
    }
  }

  /**
   * Runs code; resolves with the `execute_reply` and the request's IOPub messages once
   * both the reply and IOPub `status: idle` arrived. Aborting (signal/timeout) rejects
   * but does not interrupt the kernel: call `interrupt()` for that.
   */
  async execute(code: string, opts: ExecuteOptions = {}): Promise<ExecuteResult> {
    const msg = this.message('execute_request', executeRequestContent(code, opts), opts.metadata);
    this.checkUsable(opts.signal, 'execute');
    const id = msg.header.msg_id;
    const done = new Promise<ExecuteResult>((resolve) => {
      this.executions.set(id, { opts, iopub: [], idle: false, resolve });
    });
    // The reply is also routed through `replies` so kernel death/dispose reject it.
    const replied = new Promise<AnyMessage>((resolve, reject) => this.replies.set(id, { resolve, reject }));
    try {
      await this.send.shell(serialize(msg, this.connectionInfo.key));
      return await withDeadline(Promise.race([done, replied.then(() => done)]), {
        ms: opts.timeoutMs,
        signal: opts.signal,
        onTimeout: () => new KernelBridgeError('timeout', `execute: not finished within ${opts.timeoutMs} ms`),
        onAbort: () => new KernelBridgeError('aborted', 'execute aborted', { cause: opts.signal?.reason })
      });
    } finally {
      this.executions.delete(id);
      this.replies.delete(id);
    }
  }

  kernelInfo(opts: RequestOptions = {}): Promise<Message<'kernel_info_reply'>> {
    return this.request('shell', 'kernel_info_request', {}, opts);
  }

  complete(code: string, cursorPos: number, opts: RequestOptions = {}): Promise<Message<'complete_reply'>> {
    return this.request('shell', 'complete_request', { code, cursor_pos: cursorPos }, opts);
  }

  inspect(code: string, cursorPos: number, opts: RequestOptions = {}): Promise<Message<'inspect_reply'>> {
    return this.request('shell', 'inspect_request', { code, cursor_pos: cursorPos, detail_level: 0 }, opts);
  }

  isComplete(code: string, opts: RequestOptions = {}): Promise<Message<'is_complete_reply'>> {
    return this.request('shell', 'is_complete_request', { code }, opts);
  }

  /**
   * Interrupts the running cell: `interrupt_request` on control in `message` mode,
   * else SIGINT to the kernel pid. Throws `interrupt_unavailable` when neither works.
   */
  async interrupt(opts: RequestOptions = {}): Promise<void> {
    if (this.interruptMode === 'message') {
      await this.request('control', 'interrupt_request', {}, { timeoutMs: 10_000, ...opts });
      return;
    }
    const pid = this.options.pid;
    if (pid === undefined) {
      throw new KernelBridgeError('interrupt_unavailable', 'signal interrupt needs the kernel pid');
    }
    this.checkUsable(opts.signal, 'interrupt');
    try {
      process.kill(pid, 'SIGINT');
    } catch (e) {
      throw new KernelBridgeError('kernel_dead', `cannot signal kernel pid ${pid}`, { cause: e });
    }
  }

  /** One DAP request to the kernel's debugger (control channel); resolves with the reply content. */
  async debugRequest(request: JSONObject, opts: RequestOptions = {}): Promise<JSONObject> {
    const reply = await this.request('control', 'debug_request', request, opts);
    return reply.content;
  }

  /** Asks the kernel to shut down (control channel) and waits for the reply. */
  shutdown(opts: RequestOptions & { restart?: boolean } = {}): Promise<Message<'shutdown_reply'>> {
    return this.request(
      'control',
      'shutdown_request',
      { restart: opts.restart ?? false },
      { timeoutMs: 10_000, ...opts }
    );
  }

  /** Answers the pending `input_request` (see `onInputRequest`). */
  async inputReply(value: string): Promise<void> {
    const req = this.pendingInput;
    if (!req) throw new KernelBridgeError('no_pending_input', 'no input_request is waiting for a reply');
    this.pendingInput = undefined;
    await this.sendInputReply(req, value);
  }

  /** Heartbeat: true when the kernel echoes a ping within `timeoutMs` (default 1 s). */
  async isAlive(opts: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<boolean> {
    if (this.disposed || this.deadReason) return false;
    const hb = (this.hb ??= this.newHeartbeat());
    const ping = Buffer.from(randomUUID());
    const roundTrip = (async () => {
      await hb.send(ping);
      const [pong] = await hb.receive();
      return pong !== undefined && Buffer.compare(pong, ping) === 0;
    })();
    try {
      return await withDeadline(roundTrip, {
        ms: opts.timeoutMs ?? 1000,
        signal: opts.signal,
        onTimeout: () => new KernelBridgeError('timeout', 'heartbeat timeout'),
        onAbort: () => new KernelBridgeError('aborted', 'heartbeat aborted')
      });
    } catch (e) {
      // A REQ socket that missed its reply is stuck in "expect reply": replace it.
      roundTrip.catch(() => undefined);
      hb.close();
      this.hb = undefined;
      if (e instanceof KernelBridgeError && e.code === 'aborted') throw e;
      return false;
    }
  }

  private newHeartbeat(): Request {
    const hb = new (zmq().Request)({ linger: 0 });
    hb.connect(socketUrl(this.connectionInfo, 'hb'));
    return hb;
  }

  private decode(frames: Buffer[]): AnyMessage | undefined {
    try {
      return deserialize(frames, this.connectionInfo.key);
    } catch (e) {
      this.protocolErrorEmitter.fire(
        e instanceof KernelBridgeError ? e : new KernelBridgeError('malformed_message', String(e), { cause: e })
      );
      return undefined;
    }
  }

  private onReply(frames: Buffer[]): void {
    const msg = this.decode(frames);
    const parent = msg && parentMsgId(msg);
    if (!msg || !parent) return;
    const exec = this.executions.get(parent);
    if (exec && isMsgType(msg, 'execute_reply')) {
      exec.reply = msg;
      this.maybeFinish(exec);
      return;
    }
    this.replies.get(parent)?.resolve(msg);
  }

  private onIOPubFrames(frames: Buffer[]): void {
    const msg = this.decode(frames);
    if (!msg) return;
    msg.channel = 'iopub';
    const parent = parentMsgId(msg);
    if (parent) this.iopubWaiters.get(parent)?.();
    const exec = parent ? this.executions.get(parent) : undefined;
    if (exec) {
      exec.iopub.push(msg);
      exec.opts.onIOPub?.(msg);
    }
    this.iopubEmitter.fire(msg);
    if (isMsgType(msg, 'debug_event')) this.debugEventEmitter.fire(msg.content);
    if (isMsgType(msg, 'status')) {
      this.statusEmitter.fire({ state: msg.content.execution_state, parentMsgId: parent });
      if (exec && msg.content.execution_state === 'idle') {
        exec.idle = true;
        this.maybeFinish(exec);
      }
    }
  }

  private maybeFinish(exec: PendingExecute): void {
    if (exec.reply && exec.idle) exec.resolve({ reply: exec.reply, iopub: exec.iopub });
  }

  private async onStdin(frames: Buffer[]): Promise<void> {
    const msg = this.decode(frames);
    if (!msg || !isMsgType(msg, 'input_request')) return;
    const parent = parentMsgId(msg);
    const handler = parent ? this.executions.get(parent)?.opts.onInputRequest : undefined;
    if (!handler) {
      this.pendingInput = msg;
      this.inputEmitter.fire(msg);
      return;
    }
    // Answer without blocking the stdin read loop on the handler.
    void (async () => {
      let value: string;
      try {
        value = await handler(msg);
      } catch (e) {
        // Leave it pending: the caller can still answer with inputReply() or interrupt.
        this.pendingInput = msg;
        this.inputEmitter.fire(msg);
        return;
      }
      await this.sendInputReply(msg, value).catch(() => undefined);
    })();
  }

  private sendInputReply(req: Message<'input_request'>, value: string): Promise<void> {
    const reply = createMessage({
      msgType: 'input_reply',
      content: { value },
      session: this.session,
      username: this.options.username,
      parent: req.header
    });
    return this.send.stdin(serialize(reply, this.connectionInfo.key));
  }

  private checkUsable(signal: AbortSignal | undefined, what: string): void {
    if (this.disposed) throw new KernelBridgeError('disposed', `${what}: client is disposed`);
    if (this.deadReason) throw this.deadReason;
    throwIfAborted(signal, what);
  }

  private markDead(reason: KernelBridgeError): void {
    if (this.deadReason || this.disposed) return;
    this.deadReason = reason;
    for (const p of this.replies.values()) p.reject(reason);
    this.replies.clear();
  }

  /** Closes every socket; pending calls reject with `disposed`. Idempotent. */
  dispose(): void {
    if (this.disposed) return;
    const reason = new KernelBridgeError('disposed', 'client disposed');
    for (const p of this.replies.values()) p.reject(reason);
    this.replies.clear();
    this.disposed = true;
    for (const s of [this.shell, this.stdin, this.control, this.iopub, this.hb]) s?.close();
    this.hb = undefined;
    for (const e of [
      this.iopubEmitter,
      this.statusEmitter,
      this.inputEmitter,
      this.protocolErrorEmitter,
      this.debugEventEmitter
    ])
      e.dispose();
  }
}
