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
 * appends an explicit note whenever the result is not the whole file. Pure.
 */
export function formatReadResult(input: ReadWindow): { title: string; output: string; shownLines: number } {
  const { path, lines, offset, total, maxChars } = input;
  if (total === 0) return { title: `${path} (empty)`, output: `(${path} is empty: 0 lines)`, shownLines: 0 };
  const out: string[] = [];
  let used = 0;
  let capped = false;
  for (let i = 0; i < lines.length; i++) {
    const numbered = `${String(offset + i).padStart(6)}\t${cutLine(lines[i]!)}`;
    if (out.length > 0 && used + numbered.length + 1 > maxChars) {
      capped = true;
      break;
    }
    out.push(numbered);
    used += numbered.length + 1;
  }
  const first = offset;
  const last = offset + out.length - 1;
  const whole = first === 1 && last === total;
  const range = `lines ${first}–${last} of ${total}`;
  if (!whole) {
    const next = last < total ? `; call read with offset=${last + 1} to continue` : '';
    const cap = capped ? `; output capped at ${maxChars.toLocaleString('en-US')} characters` : '';
    out.push(`(${range}${cap}${next})`);
  }
  return { title: `${path} (${range})`, output: out.join('\n'), shownLines: last - first + 1 };
}

function cutLine(line: string): string {
  if (line.length <= MAX_LINE_CHARS) return line;
  return `${line.slice(0, MAX_LINE_CHARS)}… [line truncated: ${line.length} characters, first ${MAX_LINE_CHARS} shown]`;
}

/**
 * Heuristic binary check on a file's first bytes: any NUL byte, or more than 30% control
 * bytes other than tab/newline/carriage return/form feed/escape. Pure.
 */
export function looksBinary(sample: Uint8Array): boolean {
  if (sample.length === 0) return false;
  let control = 0;
  for (const byte of sample) {
    if (byte === 0) return true;
    if (byte < 32 && byte !== 9 && byte !== 10 && byte !== 13 && byte !== 12 && byte !== 27) control += 1;
  }
  return control / sample.length > 0.3;
}
