/**
 * Text-edit helpers, pure: offset edits → new text with overlap detection, 1-based line
 * ranges and LSP `{ line, character }` ranges → offsets. Offsets and LSP characters are
 * UTF-16 code units (JavaScript string indices; LSP's default `positionEncoding`).
 */
import { EditError } from './edit-error.js';

/** Replace `text[start, end)` with `text` (UTF-16 offsets). `start === end` inserts. */
export interface OffsetEdit {
  start: number;
  end: number;
  text: string;
}

/** An LSP position: 0-based line, 0-based UTF-16 character. */
export interface LspPosition {
  line: number;
  character: number;
}

/** An LSP `TextEdit`. */
export interface LspTextEdit {
  range: { start: LspPosition; end: LspPosition };
  newText: string;
}

/**
 * Pairs of edits that overlap, by index into `edits`. Two ranges overlap when they share a
 * character; an insertion overlaps a range it falls strictly inside, and two insertions at
 * the same offset overlap (their order would be a guess). Touching ranges do not overlap.
 */
export function findOverlaps(edits: readonly OffsetEdit[]): Array<[number, number]> {
  const order = edits
    .map((_, i) => i)
    .sort((a, b) => edits[a]!.start - edits[b]!.start || edits[a]!.end - edits[b]!.end);
  const out: Array<[number, number]> = [];
  for (let k = 0; k < order.length; k++) {
    const a = edits[order[k]!]!;
    for (let m = k + 1; m < order.length; m++) {
      const b = edits[order[m]!]!;
      if (b.start > a.end || (b.start === a.end && !(a.start === a.end && b.start === b.end))) break;
      const shared = Math.min(a.end, b.end) > Math.max(a.start, b.start);
      const insertInside = (x: OffsetEdit, y: OffsetEdit) => x.start === x.end && x.start > y.start && x.start < y.end;
      const twoInserts = a.start === a.end && b.start === b.end && a.start === b.start;
      if (shared || insertInside(a, b) || insertInside(b, a) || twoInserts)
        out.push([order[k]!, order[m]!].sort((x, y) => x - y) as [number, number]);
    }
  }
  return out;
}

/**
 * `text` with `edits` applied (given in any order; each against the original text).
 * @param label names the text in errors (a path, `nb.ipynb cell 3`)
 * @throws EditError `invalid` for a range outside the text, `overlap` for overlapping edits
 */
export function applyOffsetEdits(text: string, edits: readonly OffsetEdit[], label = 'the text'): string {
  edits.forEach((e, i) => {
    if (
      !Number.isInteger(e.start) ||
      !Number.isInteger(e.end) ||
      e.start < 0 ||
      e.end < e.start ||
      e.end > text.length
    ) {
      throw new EditError(
        'invalid',
        `${label}: edit ${i + 1} has the range ${e.start}–${e.end}, outside 0–${text.length} (or reversed). Nothing was changed.`
      );
    }
  });
  const overlaps = findOverlaps(edits);
  if (overlaps.length > 0) {
    const [a, b] = overlaps[0]!;
    const where = (e: OffsetEdit) => `${describeOffset(text, e.start)}–${describeOffset(text, e.end)}`;
    throw new EditError(
      'overlap',
      `${label}: edits ${a + 1} (${where(edits[a]!)}) and ${b + 1} (${where(edits[b]!)}) overlap${overlaps.length > 1 ? ` (and ${overlaps.length - 1} more pair${overlaps.length > 2 ? 's' : ''})` : ''}; combine them into one edit. Nothing was changed.`
    );
  }
  const sorted = [...edits].sort((x, y) => x.start - y.start);
  let out = '';
  let at = 0;
  for (const e of sorted) {
    out += text.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + text.slice(at);
}

/** Offsets where each line starts (`\n`, `\r\n` and `\r` end lines, as in LSP). */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0d) {
      if (text.charCodeAt(i + 1) === 0x0a) i++;
      starts.push(i + 1);
    } else if (c === 0x0a) {
      starts.push(i + 1);
    }
  }
  return starts;
}

/** Offset where line `line` (0-based) ends, before its line break. */
function lineEnd(text: string, starts: readonly number[], line: number): number {
  let end = line + 1 < starts.length ? starts[line + 1]! : text.length;
  if (end > starts[line]! && text.charCodeAt(end - 1) === 0x0a) end--;
  if (end > starts[line]! && text.charCodeAt(end - 1) === 0x0d) end--;
  return end;
}

/**
 * The offset of an LSP position. As the LSP specification says, a character past the end
 * of its line means the line's end and a line past the last means the end of the text.
 */
export function offsetAt(text: string, position: LspPosition, starts: readonly number[] = lineStarts(text)): number {
  if (
    !Number.isInteger(position.line) ||
    !Number.isInteger(position.character) ||
    position.line < 0 ||
    position.character < 0
  ) {
    throw new EditError('invalid', `the position ${JSON.stringify(position)} is not a line and character ≥ 0.`);
  }
  if (position.line >= starts.length) return text.length;
  return Math.min(starts[position.line]! + position.character, lineEnd(text, starts, position.line));
}

/** The LSP position of an offset. */
export function positionAt(text: string, offset: number, starts: readonly number[] = lineStarts(text)): LspPosition {
  const o = Math.max(0, Math.min(offset, text.length));
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= o) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo, character: o - starts[lo]! };
}

/** LSP text edits as offset edits against `text`. */
export function fromLspEdits(text: string, edits: readonly LspTextEdit[]): OffsetEdit[] {
  const starts = lineStarts(text);
  return edits.map((e) => ({
    start: offsetAt(text, e.range.start, starts),
    end: offsetAt(text, e.range.end, starts),
    text: e.newText
  }));
}

/** `text` with LSP text edits applied (a `WorkspaceEdit`'s edits of one document). */
export function applyLspEdits(text: string, edits: readonly LspTextEdit[], label?: string): string {
  return applyOffsetEdits(text, fromLspEdits(text, edits), label);
}

/**
 * An edit replacing lines `from`…`to` (1-based, inclusive, with their line breaks) by
 * `replacement` (which should end with a line break unless it is the file's last line).
 * `to = from - 1` inserts before line `from`.
 */
export function lineRangeEdit(text: string, from: number, to: number, replacement: string): OffsetEdit {
  const starts = lineStarts(text);
  const lines = text.length === 0 ? 0 : text.endsWith('\n') || text.endsWith('\r') ? starts.length - 1 : starts.length;
  if (!Number.isInteger(from) || !Number.isInteger(to) || from < 1 || to < from - 1 || to > lines || from > lines + 1) {
    throw new EditError('invalid', `lines ${from}–${to} are outside the text's 1–${lines}. Nothing was changed.`);
  }
  const start = from - 1 < starts.length ? starts[from - 1]! : text.length;
  const end = to < starts.length ? starts[to]! : text.length;
  return { start, end: Math.max(start, end), text: replacement };
}

/** `line:column` (1-based) of an offset, for messages. */
export function describeOffset(text: string, offset: number): string {
  const p = positionAt(text, offset);
  return `${p.line + 1}:${p.character + 1}`;
}
