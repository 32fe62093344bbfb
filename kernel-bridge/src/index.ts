/**
 * kernel-bridge: Jupyter messaging over ZeroMQ, the kernel launcher and Cellmate's
 * JavaScript kernel (SPEC EVAL). Dependency direction: `server → kernel-bridge`.
 *
 * - `protocol/` — message types and the wire format (pure);
 * - `zmq/`      — `ZmqKernelClient`;
 * - `launch/`   — start a kernel process with a fresh connection file;
 * - `js-kernel/` — the JS kernel (`dist/js-kernel/main.js -f <connection_file>`).
 */
export const KERNEL_BRIDGE_VERSION = '0.1.0';

export * from './common/errors.js';
export * from './common/event.js';
export * from './protocol/index.js';
export * from './zmq/connection.js';
export * from './zmq/client.js';
export * from './launch/connection-file.js';
export * from './launch/launcher.js';
export * from './magics/rewrite.js';
export * from './bridge/protocol.js';
export * from './eval/kernel-client.js';
export * from './eval/eval-session.js';
export * from './jupyter-server/client.js';
