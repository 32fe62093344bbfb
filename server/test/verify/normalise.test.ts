/** What a re-run must reproduce (INTEL-1): the noise of a run folded away, real changes kept. */
import { describe, expect, it } from 'vitest';
import { outputDifference } from '../../src/verify/compare.js';
import { hammingDistance } from '../../src/verify/image-hash.js';
import { applyCarriageReturns, normaliseText } from '../../src/verify/normalise.js';

const out = (text: string, name = 'stdout') => ({ output_type: 'stream', name, text });

describe('normalised comparison of cell outputs (INTEL-1)', () => {
  it.each([
    ['memory addresses', '<Foo object at 0x7f3a2b1c9d40>', '<Foo object at 0x55d1e2f3a4b0>'],
    ['ISO timestamps', 'started 2024-01-02T03:04:05.678Z', 'started 2026-12-03T07:08:09.123456+01:00'],
    ['clock times', 'at 12:00:01', 'at 23:59:59.5'],
    [
      '%time reports',
      'CPU times: user 1.2 ms, sys: 0 ns, total: 1.2 ms\nWall time: 2 ms\n5',
      'CPU times: user 9 ms, sys: 1 ms, total: 10 ms\nWall time: 12.5 ms\n5'
    ],
    [
      '%timeit reports',
      '1.23 µs ± 4.5 ns per loop (mean ± std. dev. of 7 runs, 1,000,000 loops each)',
      '2.5 µs ± 9 ns per loop (mean ± std. dev. of 7 runs, 100,000 loops each)'
    ],
    ['temporary paths', 'saved /tmp/tmpa1b2c3/out.csv', 'saved /tmp/tmpzz9y8x/out.csv'],
    [
      'progress bars redrawn with \\r',
      '  0%|          | 0/3 [00:00<?, ?it/s]\r100%|██████████| 3/3 [00:00<00:00, 3000.00it/s]\ndone',
      '100%|██████████| 3/3 [00:01<00:00, 2.9it/s]\ndone'
    ],
    ['ANSI colours', '\u001b[31mred\u001b[0m', 'red']
  ])('%s are not a change', (_what, stored, fresh) => {
    expect(outputDifference([out(stored)], [out(fresh)])).toBeUndefined();
  });

  it('execution counts are not a change; a stream split differently is the same stream', () => {
    const stored = [
      { output_type: 'execute_result', execution_count: 3, data: { 'text/plain': ['42'] }, metadata: {} }
    ];
    const fresh = [{ output_type: 'execute_result', execution_count: 17, data: { 'text/plain': '42' }, metadata: {} }];
    expect(outputDifference(stored, fresh)).toBeUndefined();
    expect(outputDifference([out('a\nb\n')], [out('a\n'), out('b\n')])).toBeUndefined();
  });

  it('a different value, a missing output, a new error are changes, said in words', () => {
    expect(outputDifference([out('42\n')], [out('43\n')])).toBe('output 1 (stdout) line 1: "42" → "43"');
    expect(outputDifference([out('42\n')], [])).toBe('output 1: stored stdout "42", now nothing');
    expect(outputDifference([], [{ output_type: 'error', ename: 'KeyError', evalue: "'a'", traceback: [] }])).toBe(
      "output 1: stored nothing, now KeyError: 'a'"
    );
    // A number inside a line is content, not noise.
    expect(normaliseText('took 3 s to load 1200 rows')).toBe('took 3 s to load 1200 rows');
  });

  it('carriage returns keep what was drawn last on each line', () => {
    expect(applyCarriageReturns('10%\r50%\r100%\nnext')).toBe('100%\nnext');
  });

  it('hamming distance counts differing bits of two hex hashes', () => {
    expect(hammingDistance('f0', 'f0')).toBe(0);
    expect(hammingDistance('f0', '0f')).toBe(8);
    expect(hammingDistance('f', 'ff')).toBe(Number.POSITIVE_INFINITY);
  });
});
