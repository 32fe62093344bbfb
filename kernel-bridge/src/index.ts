/**
 * kernel-bridge: Jupyter messaging (ZeroMQ and Jupyter Server transports), Cellmate's
 * JavaScript kernel, magic rewriting and the `tool()` bridge (SPEC EVAL-1…6).
 *
 * Empty until the eval issue lands; the package exists so the dependency direction
 * `server → kernel-bridge` is fixed from the start.
 */
export const KERNEL_BRIDGE_VERSION = '0.1.0';
