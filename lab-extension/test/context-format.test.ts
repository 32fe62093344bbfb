import { describe, expect, it } from 'vitest';

import type { CompactionItem, ContextStatus, UsageItem } from '@cellmate/protocol';
import type { TranslationBundle } from '@jupyterlab/translation';

import {
  compactionHeadline,
  compactMark,
  contextLabel,
  contextLevel,
  contextShare,
  contextTooltip,
  formatCost,
  formatTokens,
  usageLine
} from '../src/context-format';

/** `__`/`_n` with `%1` substitution, like JupyterLab's null translator. */
const trans = {
  __: (text: string, ...args: unknown[]) => args.reduce<string>((t, a, i) => t.replace(`%${i + 1}`, String(a)), text),
  _n: (one: string, many: string, n: number, ...args: unknown[]) =>
    [n, ...args].reduce<string>((t, a, i) => t.replace(`%${i + 1}`, String(a)), n === 1 ? one : many)
} as unknown as TranslationBundle;

const status = (extra: Partial<ContextStatus> = {}): ContextStatus => ({
  model: 'openai-compatible/llama3.1',
  usedTokens: 12_345,
  estimated: false,
  window: 16_000,
  windowSource: 'settings',
  reservedOutput: 2_000,
  compactAtTokens: 11_900,
  total: { input: 45_600, cachedInput: 30_100, cacheWrite: 0, output: 1_234 },
  ...extra
});

describe('formatTokens (CTX-1)', () => {
  it.each([
    [0, '0'],
    [950, '950'],
    [999, '999'],
    [1_000, '1k'],
    [9_849, '9.8k'],
    [12_345, '12.3k'],
    [16_000, '16k'],
    [99_949, '99.9k'],
    [99_960, '100k'],
    [128_000, '128k'],
    [999_499, '999k'],
    [999_999, '1M'],
    [1_234_567, '1.2M'],
    [2_000_000, '2M']
  ])('%i → %s', (n, text) => {
    expect(formatTokens(n)).toBe(text);
  });

  it('treats nonsense as 0 and rounds fractions', () => {
    expect(formatTokens(Number.NaN)).toBe('0');
    expect(formatTokens(-5)).toBe('0');
    expect(formatTokens(949.6)).toBe('950');
  });
});

describe('formatCost', () => {
  it.each([
    [0, '≈ $0'],
    [0.0042, '≈ $0.0042'],
    [0.004, '≈ $0.004'],
    [0.0123, '≈ $0.012'],
    [0.5, '≈ $0.5'],
    [2.5, '≈ $2.50'],
    [12.345, '≈ $12.35']
  ])('%f → %s', (usd, text) => {
    expect(formatCost(usd)).toBe(text);
  });
});

describe('the context meter (CTX-1)', () => {
  it('is amber from 80 % of the way to the compaction point and red from the point itself', () => {
    // 16k window, 4k kept for the answer, compaction at 85 % of the rest: 10,200.
    const at = (usedTokens: number) =>
      contextLevel(status({ usedTokens, reservedOutput: 4_000, compactAtTokens: 10_200 }));
    expect(at(5_000)).toBe('ok');
    expect(at(8_159)).toBe('ok');
    expect(at(8_160)).toBe('warn');
    expect(at(10_199)).toBe('warn');
    expect(at(10_200)).toBe('error');
    expect(at(15_000)).toBe('error');
    // No compaction point: amber from 80 % of the window, never red.
    expect(contextLevel(status({ usedTokens: 12_799, compactAtTokens: undefined }))).toBe('ok');
    expect(contextLevel(status({ usedTokens: 12_800, compactAtTokens: undefined }))).toBe('warn');
    expect(contextLevel(status({ usedTokens: 15_999, compactAtTokens: undefined }))).toBe('warn');
    expect(contextLevel(status({ window: undefined, windowSource: 'unknown', compactAtTokens: undefined }))).toBe(
      'unknown'
    );
  });

  it('fills the bar by the share of the window and marks the compaction point', () => {
    expect(contextShare(status({ usedTokens: 4_000 }))).toBe(0.25);
    expect(contextShare(status({ usedTokens: 40_000 }))).toBe(1);
    expect(contextShare(status({ window: undefined }))).toBe(0);
    expect(compactMark(status({ compactAtTokens: 12_000 }))).toBe(0.75);
    expect(compactMark(status({ compactAtTokens: undefined }))).toBeNull();
  });

  it('reads "12.3k / 16k", marks estimates, and says when the window is unknown', () => {
    expect(contextLabel(status(), trans)).toBe('12.3k / 16k');
    expect(contextLabel(status({ estimated: true }), trans)).toBe('~12.3k / 16k');
    expect(contextLabel(status({ window: undefined, windowSource: 'unknown' }), trans)).toBe('12.3k · window unknown');
  });

  it('has model, window and its source, reserved output, compaction point, totals and cost in the tooltip', () => {
    const tip = contextTooltip(status({ costUsd: 0.0123 }), trans);
    expect(tip).toContain('openai-compatible/llama3.1');
    expect(tip).toMatch(/Context window: 16.000 tokens \(from Settings\)/);
    expect(tip).toMatch(/Kept free for the answer: 2.000 tokens/);
    expect(tip).toMatch(/past 11.900 tokens/);
    expect(tip).toContain('45.6k in (30.1k cached) · 1.2k out');
    expect(tip).toContain('≈ $0.012');
    const unknown = contextTooltip(
      status({ window: undefined, windowSource: 'unknown', compactAtTokens: undefined }),
      trans
    );
    expect(unknown).toMatch(/unknown.*compacted when the provider refuses/);
    expect(unknown).not.toContain('$');
    expect(contextTooltip(status({ windowSource: 'catalog' }), trans)).toContain('models.dev');
  });
});

describe('per-turn usage and the compaction card (CTX-1, CTX-3)', () => {
  const usage = (extra: Partial<UsageItem> = {}): UsageItem => ({
    kind: 'usage',
    id: 'u',
    turnId: 't',
    time: '2026-12-03T10:00:00.000Z',
    model: 'anthropic/claude-sonnet-4-5',
    usage: { input: 12_345, cachedInput: 9_800, cacheWrite: 0, output: 450 },
    requests: 3,
    costUsd: 0.004,
    ...extra
  });

  it('one line: in (cached), out, requests, cost', () => {
    expect(usageLine(usage(), trans)).toBe('↑ 12.3k in (9.8k cached) · ↓ 450 out · 3 requests · ≈ $0.004');
    expect(
      usageLine(
        usage({ costUsd: undefined, requests: 1, usage: { input: 900, cachedInput: 0, cacheWrite: 0, output: 12 } }),
        trans
      )
    ).toBe('↑ 900 in · ↓ 12 out · 1 request');
  });

  it('says why, what went and the tokens before and after', () => {
    const item: CompactionItem = {
      kind: 'compaction',
      id: 'c',
      turnId: 't',
      time: '2026-12-03T10:00:00.000Z',
      trigger: 'auto',
      prunedOutputs: 7,
      summarizedMessages: 12,
      tokensBefore: 14_200,
      tokensAfter: 5_100
    };
    expect(compactionHeadline(item, trans)).toBe(
      'Context compacted (auto) · 7 old outputs pruned · 12 messages summarised · 14.2k → 5.1k tokens'
    );
    expect(compactionHeadline({ ...item, trigger: 'manual', summarizedMessages: 0, prunedOutputs: 1 }, trans)).toBe(
      'Context compacted (on request) · 1 old output pruned · 14.2k → 5.1k tokens'
    );
    expect(compactionHeadline({ ...item, trigger: 'overflow' }, trans)).toMatch(
      /^Context compacted \(after the provider's overflow error\)/
    );
  });
});
