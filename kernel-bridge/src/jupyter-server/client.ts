/**
 * Kernel client over Jupyter Server (`@jupyterlab/services` in Node, with the server's
 * token): for kernels JupyterLab manages, on this machine or on a remote Jupyter Server
 * / Enterprise Gateway. The server signs and serializes the ZeroMQ messages; this side
 * speaks its WebSocket protocol through `@jupyterlab/services`, never a second copy.
 *
 * It is a connection of its own (its own WebSocket, so its own ZMQ identity on the
 * server): stdin `input_request`s of our executes come only here, never to the notebook's
 * connection (FACTS: JupyterLab would show "pending input" otherwise).
 */
// Types only at load time: @jupyterlab/services costs ~140 ms and ~30 MB to import, and
// only chats that use a notebook's kernel need it (loaded in `connect`).
import type { Kernel, KernelMessage } from '@jupyterlab/services';
import { Emitter, type Event } from '../common/event.js';
import { KernelBridgeError, throwIfAborted } from '../common/errors.js';
import type { AnyMessage, JSONObject, Message } from '../messaging/messages.js';
import type { KernelClient } from '../eval/kernel-client.js';
import { executeRequestContent, type ExecuteOptions, type ExecuteResult, type RequestOptions } from '../zmq/client.js';

export interface JupyterServerConnectOptions {
  /** Jupyter Server base URL, e.g. `http://127.0.0.1:8888/` (with its base path). */
  baseUrl: string;
  token?: string;
  kernelId: string;
  /** Kernelspec name (informational). */
  kernelName?: string;
  /** Until the kernel answers kernel_info. Default 30 s. */
  timeoutMs?: number;
}

const DEAD_STATES = new Set<Kernel.Status>(['dead', 'restarting', 'autorestarting']);

export class JupyterServerKernelClient implements KernelClient {
  private readonly restartEmitter = new Emitter<void>();
  /** The kernel restarted or died: its state is gone. */
  readonly onRestart: Event<void> = this.restartEmitter.event;
  private readonly deathEmitter = new Emitter<KernelBridgeError>();
  private readonly debugEventEmitter = new Emitter<JSONObject>();
  /** `debug_event`s on this connection's IOPub (the kernel debugger's DAP events). */
  readonly onDebugEvent: Event<JSONObject> = this.debugEventEmitter.event;
  private disposed = false;

  private constructor(readonly kernel: Kernel.IKernelConnection) {
    kernel.iopubMessage.connect((_, msg) => {
      // A debug_event's content is the adapter's DAP event as JSON; @jupyterlab types it as its own JSON value type.
      if (msg.header.msg_type === 'debug_event') this.debugEventEmitter.fire(msg.content as unknown as JSONObject);
    });
    kernel.statusChanged.connect((_, status) => {
      if (DEAD_STATES.has(status)) {
        this.deathEmitter.fire(new KernelBridgeError('kernel_dead', `the kernel is ${status}`));
        this.restartEmitter.fire();
      }
    });
  }

  /** Connects to a running kernel by id and waits until it answers. */
  static async connect(opts: JupyterServerConnectOptions): Promise<JupyterServerKernelClient> {
    const baseUrl = opts.baseUrl.endsWith('/') ? opts.baseUrl : `${opts.baseUrl}/`;
    const { KernelConnection, ServerConnection } = await import('@jupyterlab/services');
    const serverSettings = ServerConnection.makeSettings({
      baseUrl,
      wsUrl: baseUrl.replace(/^http/, 'ws'),
      token: opts.token ?? '',
      appendToken: true
    });
    const kernel = new KernelConnection({
      model: { id: opts.kernelId, name: opts.kernelName ?? '' },
      serverSettings,
      username: 'cellmate',
      handleComms: false
    });
    const client = new JupyterServerKernelClient(kernel);
    try {
      const ms = opts.timeoutMs ?? 30_000;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        kernel.info,
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new KernelBridgeError('timeout', `kernel ${opts.kernelId} did not answer within ${ms} ms`)),
            ms
          );
        })
      ]).finally(() => clearTimeout(timer));
    } catch (e) {
      client.dispose();
      throw e instanceof KernelBridgeError
        ? e
        : new KernelBridgeError('launch_failed', `cannot connect to kernel ${opts.kernelId}: ${(e as Error).message}`, {
            cause: e
          });
    }
    return client;
  }

  async execute(code: string, opts: ExecuteOptions = {}): Promise<ExecuteResult> {
    if (this.disposed) throw new KernelBridgeError('disposed', 'execute: client is disposed');
    throwIfAborted(opts.signal, 'execute');
    const future = this.kernel.requestExecute(
      // user_expressions is re-stated only because lumino's JSONObject type differs from ours.
      { ...executeRequestContent(code, opts), user_expressions: {} },
      true,
      opts.metadata as KernelMessage.IExecuteRequestMsg['metadata']
    );
    const iopub: AnyMessage[] = [];
    // The session id of the kernel process running this cell (its IOPub messages carry it).
    let runner = '';
    future.onIOPub = (msg) => {
      runner ||= msg.header.session;
      // @jupyterlab/services' message types and this package's wire types describe the same Jupyter messages.
      const m = msg as unknown as AnyMessage;
      iopub.push(m);
      opts.onIOPub?.(m);
    };
    future.onStdin = (msg) => {
      if (msg.header.msg_type !== 'input_request' || !opts.onInputRequest) return;
      // The msg_type was checked above; @jupyterlab's message type and ours describe the same message.
      const req = msg as unknown as Message<'input_request'>;
      void Promise.resolve(opts.onInputRequest(req)).then(
        (value) =>
          !future.isDisposed &&
          this.kernel.sendInputReply(
            { status: 'ok', value },
            msg.header as KernelMessage.IInputReplyMsg['parent_header']
          ),
        () => undefined
      );
    };
    let onDeath: { dispose(): void } | undefined;
    const died = new Promise<never>((_, reject) => (onDeath = this.deathEmitter.event(reject)));
    died.catch(() => undefined);
    // A restart another client asks for (JupyterLab's Restart Kernel) may reach this connection
    // with no "restarting" (the socket can reconnect in between): a status from another
    // process says it — the one running this cell is gone and will never reply. Only a status:
    // the server also sends streams of its own (its session), e.g. "IOPub data rate exceeded".
    const replaced = (_: unknown, msg: KernelMessage.IIOPubMessage) => {
      if (msg.header.msg_type !== 'status' || !runner || !msg.header.session || msg.header.session === runner) return;
      this.deathEmitter.fire(new KernelBridgeError('kernel_dead', 'the kernel was restarted'));
      this.restartEmitter.fire();
    };
    this.kernel.iopubMessage.connect(replaced);
    try {
      const reply = await Promise.race([future.done, died]);
      // The future of an execute request resolves with its execute_reply; @jupyterlab's type and ours describe the same message.
      return { reply: reply as unknown as Message<'execute_reply'>, iopub };
    } catch (e) {
      if (e instanceof KernelBridgeError) throw e;
      // A future disposed by a restart rejects with "Canceled future…": the kernel went away.
      throw new KernelBridgeError('kernel_dead', `execute did not finish: ${(e as Error).message}`, { cause: e });
    } finally {
      this.kernel.iopubMessage.disconnect(replaced);
      onDeath?.dispose();
    }
  }

  async interrupt(_opts: RequestOptions = {}): Promise<void> {
    await this.kernel.interrupt();
  }

  async debugRequest(request: JSONObject, opts: RequestOptions = {}): Promise<JSONObject> {
    if (this.disposed) throw new KernelBridgeError('disposed', 'debugRequest: client is disposed');
    throwIfAborted(opts.signal, 'debugRequest');
    // lumino's JSON types differ from ours; the content is a DAP request either way.
    const future = this.kernel.requestDebug(request as unknown as KernelMessage.IDebugRequestMsg['content']);
    let onDeath: { dispose(): void } | undefined;
    const died = new Promise<never>((_, reject) => (onDeath = this.deathEmitter.event(reject)));
    died.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      if (opts.timeoutMs !== undefined)
        timer = setTimeout(
          () =>
            reject(
              new KernelBridgeError(
                'timeout',
                `debug_request ${String(request.command)}: no reply within ${opts.timeoutMs} ms`
              )
            ),
          opts.timeoutMs
        );
    });
    timedOut.catch(() => undefined);
    try {
      const reply = await Promise.race([future.done, died, timedOut]);
      // A debug reply's content is the adapter's DAP response as JSON; @jupyterlab types it as its own JSON value type.
      return reply.content as unknown as JSONObject;
    } catch (e) {
      if (e instanceof KernelBridgeError) throw e;
      throw new KernelBridgeError('kernel_dead', `debug_request did not finish: ${(e as Error).message}`, { cause: e });
    } finally {
      clearTimeout(timer);
      onDeath?.dispose();
      if (!future.isDisposed) future.dispose();
    }
  }

  /** Restarts the kernel through Jupyter Server (the notebook sees it restart). */
  async restart(): Promise<void> {
    await this.kernel.restart();
    await this.kernel.info;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.kernel.dispose(); // closes our WebSocket only; the kernel keeps running
    this.restartEmitter.dispose();
    this.deathEmitter.dispose();
    this.debugEventEmitter.dispose();
  }
}
