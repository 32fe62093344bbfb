/**
 * The one line splitter: a tool's output keeps a lone `\r` inside its line (a redrawn
 * progress bar counts as one line when long output is cut to head and tail, SPEC HARN-4);
 * a file's lines end at one as `readline` does (the line numbers `grep` reports, HARN-3).
 */
import { describe, expect, it } from 'vitest';
import { splitLines } from '../../src/base/lines.js';

describe('SPEC HARN-3 / HARN-4 splitLines: one function, the lone-CR rule named by each caller', () => {
  it.each([
    ['', [], []],
    ['\n', [''], ['']],
    ['a', ['a'], ['a']],
    ['a\n', ['a'], ['a']],
    ['a\n\n', ['a', ''], ['a', '']],
    ['a\r\nb\n', ['a', 'b'], ['a', 'b']],
    ['10%\r50%\r100%\ndone\n', ['10%', '50%', '100%', 'done'], ['10%\r50%\r100%', 'done']],
    ['a\rb\r', ['a', 'b'], ['a\rb\r']]
  ])('%j', (text, endsLine, inLine) => {
    expect(splitLines(text, { loneCR: 'ends-line' })).toEqual(endsLine);
    expect(splitLines(text, { loneCR: 'in-line' })).toEqual(inLine);
  });
});
