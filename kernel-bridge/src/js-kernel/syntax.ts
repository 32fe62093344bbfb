/** Syntax questions about a cell: `is_complete` and formatting syntax errors. Pure. */
import { parseCell } from './top-level.js';

export type Completeness = 'complete' | 'incomplete' | 'invalid';

interface AcornSyntaxError extends SyntaxError {
  pos: number;
  raisedAt?: number;
  loc?: { line: number; column: number };
}

export function isAcornSyntaxError(e: unknown): e is AcornSyntaxError {
  return e instanceof SyntaxError && typeof (e as Partial<AcornSyntaxError>).pos === 'number';
}

/**
 * `complete` if the cell parses; `incomplete` if the parser ran off the end of the input
 * (an open bracket, string template, block comment, trailing operator…); else `invalid`.
 */
export function checkCompleteness(code: string): { status: Completeness; indent?: string } {
  try {
    parseCell(code);
    return { status: 'complete' };
  } catch (e) {
    if (!isAcornSyntaxError(e)) return { status: 'invalid' };
    const end = code.trimEnd().length;
    // The parser failed at the end of the input: more text could complete the cell.
    if (e.pos >= end || /^Unterminated (template|comment)/.test(e.message)) {
      const lastLine = code.split('\n').pop() ?? '';
      const indent = /^\s*/.exec(lastLine)?.[0] ?? '';
      return { status: 'incomplete', indent: /[{[(]\s*$/.test(code) ? indent + '  ' : indent };
    }
    return { status: 'invalid' };
  }
}

/** Traceback lines for a syntax error: the offending line, a caret, the message. */
export function syntaxErrorTraceback(code: string, e: SyntaxError): string[] {
  const loc = isAcornSyntaxError(e) ? e.loc : undefined;
  if (!loc) return [`SyntaxError: ${e.message}`];
  const line = code.split('\n')[loc.line - 1] ?? '';
  return [`cell, line ${loc.line}`, `    ${line}`, `    ${' '.repeat(loc.column)}^`, `SyntaxError: ${e.message}`];
}
