import { cut, page } from '../../workspace/output-shaping.js';

/** Lines longer than this are cut with a marker. */
export const MAX_LINE_CHARS = 2000;

/** Input of {@link formatReadResult}. */
export interface ReadWindow {
  /** Workspace-relative path shown to the model. */
  path: string;
  /** The lines from `offset` on (at most `limit` of them). */
  lines: readonly string[];
  /** 1-based number of `lines[0]`. */
  offset: number;
  /** Number of lines in the whole file. */
  total: number;
  /** Character budget for the numbered lines. */
  maxChars: number;
}

/**
 * Numbers the lines `cat -n` style, cuts long lines, stops at the character budget and
 * appends an explicit note whenever the result is not the whole file (the shaping module's
 * {@link page}). Pure.
 */
export function formatReadResult(input: ReadWindow): { title: string; output: string; shownLines: number } {
  const { path, lines, offset, total, maxChars } = input;
  if (total === 0) return { title: `${path} (empty)`, output: `(${path} is empty: 0 lines)`, shownLines: 0 };
  const entries = lines.map((line, i) => `${String(offset + i).padStart(6)}\t${cutLine(line, offset + i)}`);
  const p = page({
    entries,
    offset,
    limit: lines.length,
    total,
    maxChars,
    noun: { one: 'line', many: 'lines' },
    tool: 'read'
  });
  return {
    title: `${path} (lines ${p.first}–${p.last} of ${total})`,
    output: p.text,
    shownLines: p.last - p.first + 1
  };
}

function cutLine(line: string, n: number): string {
  return cut(
    line,
    MAX_LINE_CHARS,
    `read shows ${MAX_LINE_CHARS.toLocaleString('en-US')} characters of a line; see the rest of line ${n} with grep, shell or eval`
  );
}
