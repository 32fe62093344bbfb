/**
 * kernel-bridge: Jupyter messaging over ZeroMQ, the kernel launcher and Cellmate's
 * JavaScript kernel (SPEC EVAL). Dependency direction: `server → kernel-bridge`.
 *
 * - `messaging/` — Jupyter message types and the ZeroMQ wire format (pure);
 * - `zmq/`      — `ZmqKernelClient`;
 * - `jupyter-server/` — the same client over Jupyter Server's kernel WebSocket;
 * - `tool-channel/` — the `tool()` channel: cells call Cellmate's tools over stdin
 *   (`channel.ts` wire format, the Python and JS kernel-side helpers);
 * - `magics/`, `eval/` — magic rewriting, `EvalSession`;
 * - `launch/`   — start a kernel process with a fresh connection file;
 * - `js-kernel/` — the JS kernel (`dist/js-kernel/main.js -f <connection_file>`).
 */
export const KERNEL_BRIDGE_VERSION = '0.1.0';

export * from './common/errors.js';
export * from './common/event.js';
export * from './messaging/index.js';
export * from './zmq/connection.js';
export * from './zmq/client.js';
export * from './launch/connection-file.js';
export * from './launch/launcher.js';
export * from './magics/rewrite-magics.js';
export * from './tool-channel/channel.js';
export * from './eval/kernel-client.js';
export * from './eval/eval-session.js';
export * from './jupyter-server/client.js';
