/** Errors of {@link ProcessSupervisor} (`process-supervisor.ts`). */

/** Why the supervisor could not hand out a client. */
export type SupervisorErrorCode =
  /** The process could not be started (now, or recently: the failure is cached until `retryAt`). */
  | 'start-failed'
  /** The supervisor was disposed. */
  | 'disposed'
  /** The caller's signal aborted, or a stop cancelled the start. */
  | 'aborted';

/** A typed supervisor failure; the message says what happened and what to do. */
export class SupervisorError extends Error {
  /** For `start-failed`: when the next start is attempted (epoch ms). */
  readonly retryAt: number | undefined;

  constructor(
    readonly code: SupervisorErrorCode,
    message: string,
    options: { cause?: unknown; retryAt?: number } = {}
  ) {
    super(message, { cause: options.cause });
    this.name = 'SupervisorError';
    this.retryAt = options.retryAt;
  }
}
