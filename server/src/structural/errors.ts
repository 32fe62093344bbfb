/** Typed errors of structural search and staged rewrites; all go back to the model. */
import { ToolInputError } from '../base/tool-errors.js';

/** No scaffold of the ladder accepts the pattern (SPEC AST-4): never "0 matches". */
export class UnparseablePatternError extends ToolInputError {
  constructor(
    readonly pattern: string,
    readonly language: string,
    readonly complaint: string
  ) {
    super(
      `Unparseable pattern ${JSON.stringify(pattern)} for ${language}: ${complaint}. It was tried as a statement, an expression, a class member and at top level; fix the syntax (metavariables are $NAME, $$$NAME, $_).`
    );
    this.name = 'UnparseablePatternError';
  }
}

/** A staged edit cannot be resolved: unknown, expired, dropped by a restart, or stale. */
export class StagedEditError extends ToolInputError {
  constructor(
    message: string,
    readonly editId: string,
    readonly file?: string
  ) {
    super(message);
    this.name = 'StagedEditError';
  }
}
