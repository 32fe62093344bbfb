/**
 * Text-edit helpers of the multi-file edit (issue #10 item 5, issue #11 "overlaps reported
 * at staging"): offset edits → text with overlap detection; LSP ranges and 1-based line
 * ranges → offsets (LSP clamping rules, CRLF and CR line ends).
 */
import { describe, expect, it } from 'vitest';
import {
  applyLspEdits,
  applyOffsetEdits,
  EditError,
  findOverlaps,
  lineRangeEdit,
  offsetAt,
  positionAt,
  type OffsetEdit
} from '../../src/edits/index.js';

const e = (start: number, end: number, text = 'X'): OffsetEdit => ({ start, end, text });

describe('applyOffsetEdits', () => {
  it.each([
    ['abcdef', [e(1, 2, 'B'), e(4, 5, 'E')], 'aBcdEf'],
    ['abcdef', [e(4, 5, 'E'), e(1, 2, 'B')], 'aBcdEf'], // any order
    ['abc', [e(0, 0, '>'), e(3, 3, '<')], '>abc<'],
    ['abc', [e(1, 2, ''), e(2, 3, 'Z')], 'aZ'], // touching ranges are fine
    ['abc', [e(1, 1, '+'), e(1, 2, 'B')], 'a+Bc'], // an insert at the start of a replacement
    ['abc', [], 'abc']
  ])('%j with %j → %j', (text, edits, want) => {
    expect(applyOffsetEdits(text, edits)).toBe(want);
  });

  it.each([
    ['shared character', [e(1, 3), e(2, 4)]],
    ['nested', [e(0, 5), e(2, 3)]],
    ['insert inside a replacement', [e(1, 4), e(2, 2)]],
    ['two inserts at one offset', [e(2, 2, 'a'), e(2, 2, 'b')]],
    ['identical ranges', [e(1, 2), e(1, 2)]]
  ])('overlap (%s) → EditError naming both edits, nothing applied', (_, edits) => {
    let error: unknown;
    try {
      applyOffsetEdits('0123456789', edits, 'src/a.py');
    } catch (x) {
      error = x;
    }
    expect(error).toBeInstanceOf(EditError);
    expect((error as EditError).code).toBe('overlap');
    expect((error as EditError).message).toMatch(
      /^src\/a\.py: edits 1 \(1:\d+–1:\d+\) and 2 \(1:\d+–1:\d+\) overlap; combine them/
    );
  });

  it('findOverlaps lists every overlapping pair by index', () => {
    expect(findOverlaps([e(0, 2), e(5, 6), e(1, 3), e(5, 7)])).toEqual([
      [0, 2],
      [1, 3]
    ]);
    expect(findOverlaps([e(0, 1), e(1, 2), e(2, 3)])).toEqual([]);
  });

  it('a range outside the text or reversed is invalid', () => {
    expect(() => applyOffsetEdits('abc', [e(2, 9)])).toThrow(/outside 0–3/);
    expect(() => applyOffsetEdits('abc', [e(2, 1)])).toThrow(EditError);
  });
});

describe('LSP positions', () => {
  const text = 'def f():\r\n    return 1\rx = f()\ny';
  it('lines end at \\n, \\r\\n and \\r; characters are UTF-16 units; past the line end clamps to it', () => {
    expect(offsetAt(text, { line: 0, character: 4 })).toBe(4);
    expect(offsetAt(text, { line: 1, character: 4 })).toBe(14);
    expect(offsetAt(text, { line: 1, character: 99 })).toBe(22); // before the \r
    expect(offsetAt(text, { line: 2, character: 0 })).toBe(23);
    expect(offsetAt(text, { line: 3, character: 1 })).toBe(text.length);
    expect(offsetAt(text, { line: 9, character: 0 })).toBe(text.length);
    expect(positionAt(text, 14)).toEqual({ line: 1, character: 4 });
    expect(offsetAt('é🐍x', { line: 0, character: 3 })).toBe(3); // the snake is two UTF-16 units
    expect(() => offsetAt(text, { line: -1, character: 0 })).toThrow(EditError);
  });

  it('applyLspEdits applies a WorkspaceEdit-style list for one document (a rename in two places)', () => {
    const src = 'from h import greet\nprint(greet("a"))\n';
    const out = applyLspEdits(src, [
      { range: { start: { line: 1, character: 6 }, end: { line: 1, character: 11 } }, newText: 'hello' },
      { range: { start: { line: 0, character: 14 }, end: { line: 0, character: 19 } }, newText: 'hello' }
    ]);
    expect(out).toBe('from h import hello\nprint(hello("a"))\n');
  });
});

describe('lineRangeEdit', () => {
  const text = 'a\nb\nc\n';
  it.each([
    [2, 2, 'B\n', 'a\nB\nc\n'],
    [1, 3, '', ''],
    [2, 1, 'new\n', 'a\nnew\nb\nc\n'], // insert before line 2
    [4, 3, 'd\n', 'a\nb\nc\nd\n'] // append
  ])('lines %i–%i ← %j', (from, to, replacement, want) => {
    expect(applyOffsetEdits(text, [lineRangeEdit(text, from, to, replacement)])).toBe(want);
  });
  it('lines outside the text are invalid', () => {
    expect(() => lineRangeEdit(text, 2, 5, 'x')).toThrow(/outside the text's 1–3/);
  });
});
