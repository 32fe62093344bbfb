/**
 * The one client interface the eval session needs, with two transports: ZeroMQ from a
 * connection file (`ZmqKernelClient`) and Jupyter Server (`JupyterServerKernelClient`,
 * for kernels JupyterLab manages, local or remote). Message signing and serialization
 * live once per transport: `messaging/wire.ts` for ZeroMQ, the server for WebSockets.
 */
import type { Disposable } from '../common/event.js';
import type { ExecuteOptions, ExecuteResult, RequestOptions } from '../zmq/client.js';

export interface KernelClient extends Disposable {
  /** Runs code; resolves once the reply and IOPub `idle` arrived. */
  execute(code: string, opts?: ExecuteOptions): Promise<ExecuteResult>;
  /** Interrupts the running cell. */
  interrupt(opts?: RequestOptions): Promise<void>;
}
