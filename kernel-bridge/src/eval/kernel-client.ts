/**
 * The one client interface the eval session needs, with two transports: ZeroMQ from a
 * connection file (`ZmqKernelClient`) and Jupyter Server (`JupyterServerKernelClient`,
 * for kernels JupyterLab manages, local or remote). Message signing and serialization
 * live once per transport: `messaging/wire.ts` for ZeroMQ, the server for WebSockets.
 */
import type { Disposable, Event } from '../common/event.js';
import type { JSONObject } from '../messaging/messages.js';
import type { ExecuteOptions, ExecuteResult, RequestOptions } from '../zmq/client.js';

export interface KernelClient extends Disposable {
  /** Runs code; resolves once the reply and IOPub `idle` arrived. */
  execute(code: string, opts?: ExecuteOptions): Promise<ExecuteResult>;
  /** Interrupts the running cell. */
  interrupt(opts?: RequestOptions): Promise<void>;
  /**
   * One DAP request to the kernel's own debugger (`debug_request` on the control channel,
   * ipykernel ≥ 6 with debugpy); resolves with the `debug_reply` content, a DAP response.
   */
  debugRequest(request: JSONObject, opts?: RequestOptions): Promise<JSONObject>;
  /** The kernel debugger's DAP events (`debug_event` on IOPub, from any client's session). */
  readonly onDebugEvent: Event<JSONObject>;
}
