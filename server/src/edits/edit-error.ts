/**
 * The one error type of the multi-file edit (EDIT-2, RENAME-1). It is a `ToolInputError`:
 * a tool that lets it through hands the model a message saying which file, what happened
 * and that nothing was changed (or, after a failed rollback, exactly what was).
 */
import { ToolInputError } from '../base/tool-errors.js';

/** Why an edit was not applied. */
export type EditErrorCode =
  /** A file or cell is not the text the change was computed from (or exists / is missing against expectation). */
  | 'conflict'
  /** Two edits of one text overlap. */
  | 'overlap'
  /** The change set itself is wrong: a path twice, a range outside the text, a notebook that does not parse. */
  | 'invalid'
  /** A write failed; what was already written was rolled back (the message says if that failed too). */
  | 'write-failed';

/** See the module comment; `files` are the workspace-relative paths the error is about. */
export class EditError extends ToolInputError {
  constructor(
    readonly code: EditErrorCode,
    message: string,
    readonly files: readonly string[] = [],
    options?: { cause?: unknown }
  ) {
    super(message, options);
    this.name = 'EditError';
  }
}
