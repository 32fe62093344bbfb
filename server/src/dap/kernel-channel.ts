/**
 * The notebook kernel's own debugger as a {@link DapChannel} (DBG-4 `kernel`): each DAP
 * request is a `debug_request` on the kernel's control channel and its `debug_reply` the
 * response; DAP events are `debug_event`s on IOPub (ipykernel ≥ 6 with debugpy; FACTS
 * "The kernel's own debugger"). Works over both kernel-bridge transports (ZeroMQ for a
 * chat's private kernel, Jupyter Server for the focused notebook's).
 */
import type { DebugProtocol } from '@vscode/debugprotocol';
import type { JSONObject, KernelClient } from '@cellmate/kernel-bridge';
import { Emitter, type Event } from 'vscode-jsonrpc/node.js';
import { DapRequestError, type DapChannel, type DapCommand, type DapRequests, type DapResponses } from './protocol.js';

/** Default bound on one debug request (the kernel's control thread answers at once). */
const REQUEST_TIMEOUT_MS = 30_000;

export class KernelDapChannel implements DapChannel {
  private readonly events = new Emitter<DebugProtocol.Event>();
  private readonly closes = new Emitter<Error>();
  readonly onEvent: Event<DebugProtocol.Event> = this.events.event;
  readonly onClose: Event<Error> = this.closes.event;
  private seq = 1;
  private closed = false;
  private readonly subscription: { dispose(): void };

  constructor(private readonly client: KernelClient) {
    this.subscription = client.onDebugEvent((content) => {
      if (content.type === 'event' && typeof content.event === 'string') {
        // The kernel relays the adapter's DAP event verbatim as JSON; its type and event name are checked above.
        this.events.fire(content as unknown as DebugProtocol.Event);
      }
    });
  }

  async request<K extends DapCommand>(
    command: K,
    args: DapRequests[K],
    opts: { timeoutMs?: number } = {}
  ): Promise<DapResponses[K]> {
    if (this.closed) throw new DapRequestError(command, `${command}: the kernel debugger session is closed`, 'closed');
    // DAP's argument interfaces have no index signature, so they do not fit JSONObject though every value is JSON.
    const message: JSONObject = {
      type: 'request',
      seq: this.seq++,
      command,
      ...(args !== undefined ? { arguments: args as unknown as JSONObject } : {})
    };
    let reply: JSONObject;
    try {
      reply = await this.client.debugRequest(message, { timeoutMs: opts.timeoutMs ?? REQUEST_TIMEOUT_MS });
    } catch (e) {
      const err = new DapRequestError(
        command,
        `${command}: the kernel did not answer the debug request (${(e as Error).message})`,
        'closed',
        { cause: e }
      );
      const code = (e as { code?: string }).code;
      if (code === 'kernel_dead' || code === 'disposed') this.close(err);
      throw err;
    }
    if (Object.keys(reply).length === 0) {
      // ipykernel answers `{}` when its debugger is unavailable (no debugpy) or not started.
      throw new DapRequestError(
        command,
        `${command}: the kernel's debugger gave no answer — it needs ipykernel ≥ 6 with debugpy installed in the kernel's environment`
      );
    }
    if (reply.success === false) {
      throw new DapRequestError(
        command,
        `${command} failed in the kernel's debugger: ${String(reply.message ?? 'no reason given')}`
      );
    }
    // A successful reply's body is the adapter's answer to `command`, whose shape DAP fixes per command.
    return reply.body as unknown as DapResponses[K];
  }

  /** Marks the channel closed (the session ends it; a dead kernel ends it too). */
  close(reason: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.closes.fire(reason);
  }

  dispose(): void {
    this.closed = true;
    this.subscription.dispose();
    this.events.dispose();
    this.closes.dispose();
  }
}
