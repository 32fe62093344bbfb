/**
 * Cellmate's JavaScript kernel: Jupyter messaging 5.3 over zeromq.
 * ROUTER shell/control/stdin, PUB iopub, REP heartbeat (on a worker thread).
 */
import { randomUUID } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { Publisher, Router } from 'zeromq';
import type { Disposable } from '../common/event.js';
import {
  createMessage,
  PROTOCOL_VERSION,
  type AnyMessage,
  type ContentMap,
  type Header,
  type JSONObject,
  type Message,
  type MimeBundle,
  type MsgType
} from '../messaging/messages.js';
import { deserialize, serialize } from '../messaging/wire.js';
import { socketUrl, type ConnectionInfo } from '../zmq/connection.js';
import { readLoop, serialSender } from '../zmq/socket-util.js';
import { complete, inspectAt } from './complete.js';
import { errorContent, Evaluator, InterruptError } from './evaluator.js';
import { resultBundle } from './display.js';
import { checkCompleteness } from './syntax.js';

export const JS_KERNEL_VERSION = '0.1.0';

/** Raised inside a cell by `input()` when the request did not allow stdin. */
export class StdinNotImplementedError extends Error {
  override readonly name = 'StdinNotImplementedError';
}

interface RunningCell {
  request: Message<'execute_request'>;
  abort: AbortController;
}

interface InputWait {
  resolve: (value: string) => void;
  reject: (e: Error) => void;
}

export interface JsKernelOptions {
  /** Called after shutdown_request was answered and sockets closed. */
  onShutdown?: () => void;
  cwd?: string;
}

export class JsKernel implements Disposable {
  readonly session = randomUUID();
  readonly evaluator: Evaluator;
  private readonly shell = new Router({ linger: 1000 });
  private readonly control = new Router({ linger: 1000 });
  private readonly stdin = new Router({ linger: 1000 });
  private readonly iopub = new Publisher({ linger: 1000 });
  private heartbeat: Worker | undefined;
  private readonly sendShell = serialSender(this.shell);
  private readonly sendControl = serialSender(this.control);
  private readonly sendStdin = serialSender(this.stdin);
  private readonly sendIOPub = serialSender(this.iopub);
  private executionCount = 0;
  private running: RunningCell | undefined;
  /** Where output produced outside a running cell goes (the last request). */
  private lastParent: Header | undefined;
  private inputWait: InputWait | undefined;
  private disposed = false;

  private constructor(
    private readonly info: ConnectionInfo,
    private readonly options: JsKernelOptions
  ) {
    this.evaluator = new Evaluator(
      {
        stream: (name, text) => this.publish('stream', { name, text }),
        display: (data, metadata) => this.publish('display_data', { data, metadata, transient: {} }),
        requestInput: (prompt, password) => this.requestInput(prompt, password)
      },
      options.cwd
    );
  }

  /** Binds all sockets of `info` and starts serving. */
  static async start(info: ConnectionInfo, options: JsKernelOptions = {}): Promise<JsKernel> {
    const k = new JsKernel(info, options);
    await Promise.all([
      k.shell.bind(socketUrl(info, 'shell')),
      k.control.bind(socketUrl(info, 'control')),
      k.stdin.bind(socketUrl(info, 'stdin')),
      k.iopub.bind(socketUrl(info, 'iopub')),
      k.startHeartbeat()
    ]);
    // Shell is handled one request at a time (a cell finishes before the next starts);
    // control and stdin have their own loops so interrupts and input replies get through.
    void readLoop(k.shell, (f) => k.onShell(f));
    void readLoop(k.control, (f) => k.onControl(f));
    void readLoop(k.stdin, (f) => k.onStdin(f));
    await k.publish('status', { execution_state: 'starting' });
    return k;
  }

  private startHeartbeat(): Promise<void> {
    const worker = new Worker(new URL('./heartbeat-worker.js', import.meta.url), {
      workerData: { url: socketUrl(this.info, 'hb') }
    });
    this.heartbeat = worker;
    return new Promise((resolve, reject) => {
      worker.once('message', () => resolve());
      worker.once('error', reject);
    });
  }

  /**
   * Asks the client that sent the running `execute_request` for a line of input
   * (`input_request` on stdin, addressed to its shell identity). This is the seam the
   * `await tool()` bridge rides on. Rejects with StdinNotImplementedError when the
   * request did not allow stdin, InterruptError when the cell is interrupted.
   */
  requestInput(prompt: string, password = false): Promise<string> {
    const cell = this.running;
    if (!cell || !cell.request.content.allow_stdin) {
      return Promise.reject(new StdinNotImplementedError('input() needs a client that allows stdin (allow_stdin)'));
    }
    if (this.inputWait) return Promise.reject(new Error('another input() is already waiting for a reply'));
    const req = createMessage({
      msgType: 'input_request',
      content: { prompt, password },
      session: this.session,
      parent: cell.request.header,
      identities: cell.request.identities
    });
    return new Promise<string>((resolve, reject) => {
      this.inputWait = { resolve, reject };
      this.sendStdin(serialize(req, this.info.key)).catch((e: Error) => {
        this.inputWait = undefined;
        reject(e);
      });
    });
  }

  /** Interrupts the running cell (and a pending input()). No-op when idle. */
  interrupt(): void {
    this.running?.abort.abort();
    const wait = this.inputWait;
    this.inputWait = undefined;
    wait?.reject(new InterruptError('input interrupted'));
  }

  private decode(frames: Buffer[]): AnyMessage | undefined {
    try {
      return deserialize(frames, this.info.key);
    } catch (e) {
      // Unsigned or garbled frames are dropped, as ipykernel does; log for the operator.
      process.stderr.write(`cellmate-js: dropped message: ${(e as Error).message}\n`);
      return undefined;
    }
  }

  /** Sends on iopub with the current parent. Topic frame as ipykernel: `kernel.<session>.<type>`. */
  publish<T extends MsgType>(
    msgType: T,
    content: ContentMap[T],
    parent = this.running?.request.header ?? this.lastParent
  ): Promise<void> {
    if (this.disposed) return Promise.resolve();
    const msg = createMessage({
      msgType,
      content,
      session: this.session,
      parent,
      identities: [Buffer.from(`kernel.${this.session}.${msgType}`)]
    });
    return this.sendIOPub(serialize(msg, this.info.key)).catch(() => undefined);
  }

  private reply<T extends MsgType>(
    send: (f: Buffer[]) => Promise<void>,
    req: AnyMessage,
    msgType: T,
    content: ContentMap[T],
    metadata: JSONObject = {}
  ): Promise<void> {
    const msg = createMessage({
      msgType,
      content,
      metadata,
      session: this.session,
      parent: req.header as Header,
      identities: req.identities
    });
    return send(serialize(msg, this.info.key));
  }

  private async onShell(frames: Buffer[]): Promise<void> {
    const msg = this.decode(frames);
    if (!msg) return;
    const parent = msg.header as Header;
    this.lastParent = parent;
    await this.publish('status', { execution_state: 'busy' }, parent);
    try {
      await this.handleShell(msg);
    } catch (e) {
      process.stderr.write(`cellmate-js: ${msg.header.msg_type} failed: ${(e as Error).stack}\n`);
    }
    await this.publish('status', { execution_state: 'idle' }, parent);
  }

  private async handleShell(msg: AnyMessage): Promise<void> {
    const send = this.sendShell;
    switch (msg.header.msg_type) {
      case 'execute_request':
        return this.execute(msg as Message<'execute_request'>);
      case 'kernel_info_request':
        return this.reply(send, msg, 'kernel_info_reply', this.kernelInfo());
      case 'complete_request': {
        const { code, cursor_pos } = msg.content as ContentMap['complete_request'];
        const c = complete(this.evaluator.context, code, cursor_pos);
        return this.reply(send, msg, 'complete_reply', {
          status: 'ok',
          matches: c.matches,
          cursor_start: c.cursorStart,
          cursor_end: c.cursorEnd,
          metadata: {}
        });
      }
      case 'inspect_request': {
        const { code, cursor_pos } = msg.content as ContentMap['inspect_request'];
        const r = inspectAt(this.evaluator.context, code, cursor_pos);
        return this.reply(send, msg, 'inspect_reply', { status: 'ok', ...r, metadata: {} });
      }
      case 'is_complete_request':
        return this.reply(
          send,
          msg,
          'is_complete_reply',
          checkCompleteness((msg.content as ContentMap['is_complete_request']).code)
        );
      case 'comm_info_request':
        return this.reply(send, msg, 'comm_info_reply', { status: 'ok', comms: {} });
      case 'history_request':
        return this.reply(send, msg, 'history_reply', { status: 'ok', history: [] });
      case 'shutdown_request':
        return this.shutdown(send, msg as Message<'shutdown_request'>);
      default:
        // Unknown requests get no reply, as in ipykernel; note it for the operator.
        process.stderr.write(`cellmate-js: unsupported shell message ${msg.header.msg_type}\n`);
    }
  }

  private async onControl(frames: Buffer[]): Promise<void> {
    const msg = this.decode(frames);
    if (!msg) return;
    switch (msg.header.msg_type) {
      case 'interrupt_request':
        this.interrupt();
        return this.reply(this.sendControl, msg, 'interrupt_reply', { status: 'ok' });
      case 'shutdown_request':
        return this.shutdown(this.sendControl, msg as Message<'shutdown_request'>);
      case 'kernel_info_request':
        return this.reply(this.sendControl, msg, 'kernel_info_reply', this.kernelInfo());
      default:
        process.stderr.write(`cellmate-js: unsupported control message ${msg.header.msg_type}\n`);
    }
  }

  private onStdin(frames: Buffer[]): void {
    const msg = this.decode(frames);
    if (!msg || msg.header.msg_type !== 'input_reply') return;
    const wait = this.inputWait;
    this.inputWait = undefined;
    wait?.resolve(String((msg.content as ContentMap['input_reply']).value ?? ''));
  }

  private kernelInfo(): ContentMap['kernel_info_reply'] {
    return {
      status: 'ok',
      protocol_version: PROTOCOL_VERSION,
      implementation: 'cellmate-js',
      implementation_version: JS_KERNEL_VERSION,
      language_info: {
        name: 'javascript',
        version: process.versions.node,
        mimetype: 'text/javascript',
        file_extension: '.js',
        pygments_lexer: 'javascript',
        codemirror_mode: 'javascript'
      },
      banner: `Cellmate JavaScript kernel ${JS_KERNEL_VERSION} (Node ${process.versions.node}) — top-level await, display(), await input()`,
      help_links: []
    };
  }

  private async execute(req: Message<'execute_request'>): Promise<void> {
    const { code, silent, store_history } = req.content;
    if (store_history && !silent) this.executionCount++;
    const count = this.executionCount;
    const filename = `<cell ${count}>`;
    const running: RunningCell = { request: req, abort: new AbortController() };
    // Running from before execute_input goes out: a client interrupts once it sees it.
    this.running = running;
    if (!silent) await this.publish('execute_input', { code, execution_count: count });
    const cellmate = req.metadata.cellmate as JSONObject | undefined;
    const syncTimeout = Number(cellmate?.sync_timeout_ms) || undefined;
    // Whether the running request is the agent's (the `tool()` bridge checks it, like the
    // Python helper checks the parent's metadata): a notebook's own cell never uses stdin for it.
    (this.evaluator.context as Record<string, unknown>).__cellmate_bridge__ = cellmate?.bridge === true;
    try {
      const r = await this.evaluator.evaluate(code, {
        filename,
        signal: running.abort.signal,
        syncTimeoutMs: syncTimeout
      });
      if (r.hasResult && r.value !== undefined && !silent) {
        let data: MimeBundle;
        try {
          data = resultBundle(r.value);
        } catch (e) {
          data = { 'text/plain': `<unprintable result: ${(e as Error).message}>` };
        }
        await this.publish('execute_result', { execution_count: count, data, metadata: {} });
      }
      await this.reply(this.sendShell, req, 'execute_reply', {
        status: 'ok',
        execution_count: count,
        payload: [],
        user_expressions: {}
      });
    } catch (e) {
      const err = errorContent(e, code, filename);
      if (!silent) await this.publish('error', err);
      await this.reply(this.sendShell, req, 'execute_reply', { status: 'error', execution_count: count, ...err });
    } finally {
      if (this.running === running) this.running = undefined;
      if (this.inputWait) this.interrupt();
    }
  }

  private async shutdown(send: (f: Buffer[]) => Promise<void>, req: Message<'shutdown_request'>): Promise<void> {
    const content = { status: 'ok' as const, restart: req.content.restart };
    await this.reply(send, req, 'shutdown_reply', content);
    await this.publish('shutdown_reply', content, req.header);
    this.interrupt();
    // Let zmq flush the reply before closing (linger covers the rest).
    setTimeout(() => {
      void this.close().then(() => this.options.onShutdown?.());
    }, 50);
  }

  /**
   * Closes all sockets and waits for the heartbeat thread to end. (Terminating a worker
   * that holds a zeromq socket aborts the process in the addon's finalizer, so the
   * worker closes its socket and exits by itself.)
   */
  async close(): Promise<void> {
    const hb = this.heartbeat;
    this.dispose();
    if (hb) await new Promise((r) => hb.once('exit', r));
  }

  /** Closes all sockets and asks the heartbeat thread to stop. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.interrupt();
    for (const s of [this.shell, this.control, this.stdin, this.iopub]) s.close();
    this.heartbeat?.postMessage('close');
  }
}
