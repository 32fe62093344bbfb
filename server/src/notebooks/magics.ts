/**
 * IPython syntax in a notebook cell, neutralised into plain Python with every position kept
 * (SPEC LSP-6, AST-6). This is the one view of a cell that both the language servers (`lsp`)
 * and structural search (`ast_grep`, the def/use graph) read, so a cell is Python to one
 * exactly when it is Python to the other.
 *
 * Each magic is replaced by a placeholder of the same length — `...` padded with spaces — so
 * the text has the same length, the same lines and the same columns: a node's offsets and a
 * server's positions are those of the original cell, and matched text is read from the
 * original. The placeholder is a statement (an indented block holding only a magic still
 * parses) and one a type checker does not flag as an unused expression. Nothing here runs:
 * kernel-bridge's `magics/rewrite-magics.ts` turns magics into runnable calls for `eval` instead.
 *
 * Handled: line magics `%x`, shell `!cmd` / `!!cmd`, assignments `x = !cmd` / `x = %sx cmd`
 * (`x` stays bound), `%time stmt` (the statement stays Python), help `obj?` / `?obj`,
 * backslash continuations of a magic line, and cell magics: only the first line of one whose
 * body is Python (`%%time`, `%%capture`, `%%python` …), the whole cell of any other
 * (`%%bash`, `%%html`, `%%sql` …), which is left as spaces.
 */

/** A neutralised cell: same length as the original, plus the ranges that were magic. */
export interface NeutralisedCell {
  code: string;
  /** [start, end) offsets (UTF-16) of the neutralised text. */
  magic: Array<[number, number]>;
}

/** Cell magics whose body is Python (IPython runs it, or hands it to a Python, after the first line). */
export const PYTHON_BODY_CELL_MAGICS: ReadonlySet<string> = new Set([
  'time',
  'timeit',
  'capture',
  'prun',
  'debug',
  'python',
  'python3',
  'pypy',
  'memit',
  'cython_inline'
]);

const LINE_MAGIC = /^(\s*)([%!].*)$/;
const ASSIGNED = /^(\s*[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*)([%!].*)$/;
/** `%time` / `%timeit` / `%prun` before a Python statement (no options). */
const TIMED = /^(\s*)(%(?:time|timeit|prun))(?=\s+[^\s-])/;
const HELP = /^(\s*)(\?{1,2}[\w.]+|[\w.]+\?{1,2})\s*$/;
const CELL_MAGIC = /^\s*%%([\w-]+)/;

/**
 * A same-length Python stand-in for `length` characters of magic: `...` (a statement no
 * checker reports as unused) when it fits, else `''`, else `0`.
 */
function placeholder(length: number): string {
  const word = length >= 3 ? '...' : length === 2 ? "''" : '0';
  return word + ' '.repeat(length - word.length);
}

/** Neutralises the IPython syntax of one Python cell (see the module comment). */
export function neutraliseMagics(source: string): NeutralisedCell {
  const lines = source.split('\n');
  const magic: Array<[number, number]> = [];
  const out: string[] = [];
  let offset = 0;
  const first = lines.findIndex((l) => l.trim().length > 0);
  const cellMagic = first >= 0 ? CELL_MAGIC.exec(lines[first]!) : null;
  const foreignCell = cellMagic !== null && !PYTHON_BODY_CELL_MAGICS.has(cellMagic[1]!);
  let continuing = false;
  lines.forEach((line, i) => {
    let from: number | undefined;
    // Spaces only where a statement could break indentation: a foreign cell's body, continuations.
    let spaces = false;
    if (foreignCell && i >= first) [from, spaces] = [0, true];
    else if (continuing) [from, spaces] = [0, true];
    else if (cellMagic && i === first) from = line.length - line.trimStart().length;
    else if (TIMED.test(line)) {
      // `%time stmt`: the statement is Python; only the magic word becomes `...;`.
      const m = TIMED.exec(line)!;
      const start = m[1]!.length;
      const word = m[2]!;
      out.push(`${line.slice(0, start)}...;${' '.repeat(word.length - 4)}${line.slice(start + word.length)}`);
      magic.push([offset + start, offset + start + word.length]);
      offset += line.length + 1;
      continuing = false;
      return;
    } else {
      const m = ASSIGNED.exec(line) ?? LINE_MAGIC.exec(line) ?? HELP.exec(line);
      if (m && !/^\s*!=/.test(m[2]!)) from = m[1]!.length;
    }
    if (from !== undefined && from < line.length) {
      const length = line.length - from;
      out.push(line.slice(0, from) + (spaces ? ' '.repeat(length) : placeholder(length)));
      magic.push([offset + from, offset + line.length]);
      continuing = line.trimEnd().endsWith('\\');
    } else {
      out.push(line);
      continuing = false;
    }
    offset += line.length + 1;
  });
  return { code: out.join('\n'), magic };
}

/** Whether [start, end) touches a neutralised range. */
export function touchesMagic(cell: NeutralisedCell, start: number, end: number): boolean {
  return cell.magic.some(([a, b]) => start < b && end > a);
}
