/**
 * Typed infrastructure errors for the kernel bridge. Every failure that crosses a public
 * API carries a `code` (stable, machine-readable) and, where there is one, a `cause`.
 */
export type KernelBridgeErrorCode =
  /** HMAC signature of an incoming message did not match. */
  | 'bad_signature'
  /** Frames did not form a Jupyter wire message (missing delimiter, bad JSON, …). */
  | 'malformed_message'
  /** Connection file missing or invalid. */
  | 'bad_connection_info'
  /** An operation did not finish in time. */
  | 'timeout'
  /** The caller aborted the operation through its AbortSignal. */
  | 'aborted'
  /** The object was disposed while (or before) the operation ran. */
  | 'disposed'
  /** The kernel process exited or stopped answering. */
  | 'kernel_dead'
  /** The kernel process could not be started or never became ready. */
  | 'launch_failed'
  /** Interrupt is impossible (message mode unsupported and no pid known). */
  | 'interrupt_unavailable'
  /** `inputReply` without a pending `input_request`. */
  | 'no_pending_input';

/** An infrastructure error of the kernel bridge. */
export class KernelBridgeError extends Error {
  override readonly name = 'KernelBridgeError';
  constructor(
    readonly code: KernelBridgeErrorCode,
    message: string,
    options?: { cause?: unknown }
  ) {
    super(message, options);
  }
}

/** True when `e` is a KernelBridgeError, optionally with the given code. */
export function isKernelBridgeError(e: unknown, code?: KernelBridgeErrorCode): e is KernelBridgeError {
  return e instanceof KernelBridgeError && (code === undefined || e.code === code);
}

/** Throws `aborted` if the signal is already aborted. */
export function throwIfAborted(signal: AbortSignal | undefined, what: string): void {
  if (signal?.aborted) {
    throw new KernelBridgeError('aborted', `${what} aborted`, { cause: signal.reason });
  }
}
