/**
 * The two kinds of error that cross the tool boundary (after codex's `FunctionCallError`):
 *
 * - {@link ToolInputError}: goes back to the model as the tool's result, saying what to do
 *   next ("rewrite the arguments and call read again"). The turn continues.
 * - {@link FatalToolError}: ends the turn; the message becomes a notice for the user.
 *
 * Any other exception thrown by a tool is treated like a `ToolInputError` whose message
 * names the tool, because the model can usually react (try another path, give up).
 */
export class ToolInputError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ToolInputError';
  }
}

/** A tool failure that must end the turn (infrastructure broken, not the model's fault). */
export class FatalToolError extends Error {
  constructor(
    message: string,
    readonly code: string,
    options?: { cause?: unknown }
  ) {
    super(message, options);
    this.name = 'FatalToolError';
  }
}

/** A path argument was refused by workspace confinement. Respond-to-model kind. */
export class PathRefusedError extends ToolInputError {
  constructor(message: string) {
    super(message);
    this.name = 'PathRefusedError';
  }
}
