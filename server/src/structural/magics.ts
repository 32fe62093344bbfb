/**
 * IPython syntax in a notebook cell, neutralised for parsing with every position kept
 * (SPEC AST-6): each magic becomes `0` padded with spaces to the same length, so a node's
 * offsets, lines and columns in the neutralised text are those of the original cell, and
 * matched text is read from the original. Unlike kernel-bridge's `magics/rewrite.ts`
 * (which turns magics into runnable calls of a different length for eval), nothing here
 * runs: it only has to parse (`%time stmt` keeps `stmt`: only `%time` becomes `0;`), and say which ranges were magic so a rewrite never touches
 * them. Handles line magics `%x`, shell `!cmd` / `!!cmd`, assignments `x = !cmd` /
 * `x = %sx cmd`, help `obj?` / `?obj`, backslash continuations, and cell magics: the whole
 * cell for `%%bash`, `%%html`… (not Python), only the first line for `%%time`, `%%timeit`,
 * `%%capture`, `%%prun` (their body is Python).
 */

/** A neutralised cell: same length as the original, plus the ranges that were magic. */
export interface NeutralisedCell {
  code: string;
  /** [start, end) offsets (UTF-16) of the neutralised text. */
  magic: Array<[number, number]>;
}

/** Cell magics whose body is Python (IPython runs it after the first line). */
const PYTHON_BODY_MAGICS = new Set(['time', 'timeit', 'capture', 'prun', 'debug']);

const LINE_MAGIC = /^(\s*)([%!].*)$/;
const ASSIGNED = /^(\s*[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*)([%!].*)$/;
/** `%time` / `%timeit` / `%prun` before a Python statement (no options). */
const TIMED = /^(\s*)(%(?:time|timeit|prun))(?=\s+[^\s-])/;
const HELP = /^(\s*)(\?{1,2}[\w.]+|[\w.]+\?{1,2})\s*$/;

/** Neutralises the IPython syntax of one Python cell. */
export function neutraliseMagics(source: string): NeutralisedCell {
  const lines = source.split('\n');
  const magic: Array<[number, number]> = [];
  const out: string[] = [];
  let offset = 0;
  const first = lines.findIndex((l) => l.trim().length > 0);
  const cellMagic = first >= 0 ? /^\s*%%([\w-]+)/.exec(lines[first]!) : null;
  let continuing = false;
  const foreignCell = cellMagic !== null && !PYTHON_BODY_MAGICS.has(cellMagic[1]!);
  lines.forEach((line, i) => {
    let from: number | undefined;
    // Spaces only where a `0` could break indentation: a foreign cell body, continuations.
    let spaces = false;
    if (foreignCell && i >= first) [from, spaces] = [0, true];
    else if (continuing) [from, spaces] = [0, true];
    else if (cellMagic && i === first) from = line.length - line.trimStart().length;
    else if (TIMED.test(line)) {
      // `%time stmt`: the statement is Python; only the magic word is blanked (`0;` keeps it parsing).
      const m = TIMED.exec(line)!;
      const start = m[1]!.length;
      out.push(`${line.slice(0, start)}0;${' '.repeat(m[2]!.length - 2)}${line.slice(start + m[2]!.length)}`);
      magic.push([offset + start, offset + start + m[2]!.length]);
      offset += line.length + 1;
      continuing = false;
      return;
    } else {
      const m = ASSIGNED.exec(line) ?? LINE_MAGIC.exec(line) ?? HELP.exec(line);
      if (m && !/^\s*!=/.test(m[2]!)) from = m[1]!.length;
    }
    if (from !== undefined && from < line.length) {
      out.push(line.slice(0, from) + (spaces ? ' '.repeat(line.length - from) : `0${' '.repeat(line.length - from - 1)}`));
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
