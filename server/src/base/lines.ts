/**
 * Splitting text into lines, one function for every caller. Callers differ on one point,
 * and each says which it means: a lone `\r` either ends a line (`readline`, and the line
 * numbers `read` and `grep` give a file) or stays inside it (a tool's output, where a
 * progress bar redrawn in place is one line of output, not hundreds).
 */

export interface SplitLinesOptions {
  /** `'ends-line'`: `\n`, `\r\n` and a lone `\r` end a line; `'in-line'`: only `\n` and `\r\n` do. */
  loneCR: 'ends-line' | 'in-line';
}

/** The lines of `text`; a final line break adds no empty line, and empty text has none. */
export function splitLines(text: string, options: SplitLinesOptions): string[] {
  const lines = text.split(options.loneCR === 'ends-line' ? /\r?\n|\r(?!\n)/ : /\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  return lines;
}
