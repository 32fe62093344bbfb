/**
 * LSP-3: a position is a 1-based `line` plus a `symbol` substring on that line (`#N` picks
 * the N-th occurrence, `#1` the first), never a column. Pure. Errors say exactly what was
 * wrong and quote the line, so the model can fix the call.
 */
import { ToolInputError } from '../base/tool-errors.js';

/** A resolved position: 1-based line, 0-based UTF-16 character (LSP's default encoding). */
export interface LinePosition {
  line: number;
  character: number;
  /** The symbol without its `#N`. */
  symbol: string;
}

/** Splits `name#N` into the substring and the occurrence (default 1). */
export function parseSymbol(symbol: string): { text: string; occurrence: number } {
  const m = /^(.*\S)#(\d+)$/.exec(symbol);
  if (m) {
    const n = Number(m[2]);
    if (n < 1) throw new ToolInputError(`symbol "${symbol}": occurrences count from #1.`);
    return { text: m[1]!, occurrence: n };
  }
  return { text: symbol, occurrence: 1 };
}

/**
 * Finds `symbol` on `line` of `lines` (where: how the error names the place, e.g.
 * `src/a.py` or `nb.ipynb cell 3`).
 */
export function locateSymbol(lines: readonly string[], line: number, symbol: string, where: string): LinePosition {
  if (!Number.isInteger(line) || line < 1 || line > Math.max(lines.length, 1)) {
    throw new ToolInputError(
      `line ${line} is outside ${where}, which has ${lines.length} line${lines.length === 1 ? '' : 's'}.`
    );
  }
  const { text, occurrence } = parseSymbol(symbol);
  if (text.trim() === '')
    throw new ToolInputError('symbol must name the text on that line (e.g. a function name), not be empty.');
  const source = lines[line - 1] ?? '';
  const starts: number[] = [];
  for (let at = source.indexOf(text); at >= 0; at = source.indexOf(text, at + 1)) starts.push(at);
  if (starts.length === 0) {
    throw new ToolInputError(
      `"${text}" is not on line ${line} of ${where}; that line is: ${JSON.stringify(source)}. Give the line the symbol is on (read the file first).`
    );
  }
  if (occurrence > starts.length) {
    throw new ToolInputError(
      `"${text}" occurs ${starts.length} time${starts.length === 1 ? '' : 's'} on line ${line} of ${where} (${JSON.stringify(source)}), so #${occurrence} does not exist.`
    );
  }
  const start = starts[occurrence - 1]!;
  // Point at the first identifier character inside the match ("(foo" → f), else its start.
  const lead = /^[^\p{L}\p{N}_$]*/u.exec(text)![0].length;
  return { line, character: start + (lead < text.length ? lead : 0), symbol: text };
}
