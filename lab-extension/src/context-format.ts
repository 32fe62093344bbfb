/**
 * Pure wording of the context meter, the per-turn usage line and the compaction card
 * (CTX-1, CTX-3): token counts, levels, tooltips. No DOM: unit-tested in Node.
 */
import type { CompactionItem, ContextStatus, TokenUsage, UsageItem } from '@cellmate/protocol';
import type { TranslationBundle } from '@jupyterlab/translation';

/** The meter is amber from this share of the room before compaction (of the window when there is no compaction point). */
export const WARN_SHARE = 0.8;

/** How full the context is: `warn` nearing the compaction point, `error` at or past it (the next step compacts first). */
export type ContextLevel = 'ok' | 'warn' | 'error' | 'unknown';

/** `950`, `9.8k`, `12.3k`, `128k`, `1.2M`: a token count short enough for the composer. */
export function formatTokens(count: number): string {
  const n = Number.isFinite(count) ? Math.max(0, Math.round(count)) : 0;
  if (n < 1000) {
    return String(n);
  }
  const k = n / 1000;
  // One decimal below 100k; rounding up to 1000k is shown as 1M.
  const kText = k < 99.95 ? trimZero(k.toFixed(1)) : String(Math.round(k));
  if (Number(kText) < 1000) {
    return `${kText}k`;
  }
  const m = n / 1_000_000;
  return `${m < 99.95 ? trimZero(m.toFixed(1)) : String(Math.round(m))}M`;
}

/** `≈ $0.004`, `≈ $1.23`: an estimate, with enough digits to say something about small sums. */
export function formatCost(usd: number): string {
  const v = Number.isFinite(usd) ? Math.max(0, usd) : 0;
  if (v === 0) {
    return '≈ $0';
  }
  return `≈ $${v >= 1 ? v.toFixed(2) : trimZero(v.toFixed(v < 0.01 ? 4 : 3), 1)}`;
}

/**
 * The meter's level for `status` (see {@link ContextLevel}). Amber is measured against the
 * compaction point, not the whole window: the point sits below 80 % of the window whenever
 * a quarter of it is kept for the answer (16k window: compaction at 10.2k), so "80 % of the
 * window" would go from calm straight to red, or never warn at all.
 */
export function contextLevel(status: ContextStatus): ContextLevel {
  if (!status.window) {
    return 'unknown';
  }
  const limit = status.compactAtTokens;
  if (limit !== undefined && status.usedTokens >= limit) {
    return 'error';
  }
  return status.usedTokens >= WARN_SHARE * Math.min(limit ?? status.window, status.window) ? 'warn' : 'ok';
}

/** The bar's fill, 0–1 (0 without a known window). */
export function contextShare(status: ContextStatus): number {
  return status.window ? Math.min(1, Math.max(0, status.usedTokens / status.window)) : 0;
}

/** Where the compaction threshold sits on the bar, 0–1; null when there is none. */
export function compactMark(status: ContextStatus): number | null {
  return status.window && status.compactAtTokens !== undefined
    ? Math.min(1, Math.max(0, status.compactAtTokens / status.window))
    : null;
}

/** The meter's text: `12.3k / 16k`, or `12.3k · window unknown`. */
export function contextLabel(status: ContextStatus, trans: TranslationBundle): string {
  const used = `${status.estimated ? '~' : ''}${formatTokens(status.usedTokens)}`;
  return status.window ? `${used} / ${formatTokens(status.window)}` : trans.__('%1 · window unknown', used);
}

/** The meter's tooltip: model, window and its source, reserved output, compaction point, chat totals and cost. */
export function contextTooltip(status: ContextStatus, trans: TranslationBundle): string {
  const lines = [trans.__('Model: %1', status.model)];
  lines.push(
    status.estimated
      ? trans.__('Last request: about %1 tokens (estimated)', exact(status.usedTokens))
      : trans.__('Last request: %1 tokens', exact(status.usedTokens))
  );
  if (status.window) {
    lines.push(
      trans.__('Context window: %1 tokens (%2)', exact(status.window), windowSource(status.windowSource, trans))
    );
    lines.push(trans.__('Kept free for the answer: %1 tokens', exact(status.reservedOutput)));
    if (status.compactAtTokens !== undefined) {
      lines.push(trans.__('Compacts before a request past %1 tokens', exact(status.compactAtTokens)));
    }
  } else {
    lines.push(
      trans.__(
        'Context window: unknown. The conversation is compacted when the provider refuses a request as too long.'
      )
    );
  }
  lines.push(trans.__('This chat so far: %1', usageSummary(status.total, trans)));
  if (status.costUsd !== undefined) {
    lines.push(trans.__('Estimated cost so far: %1', formatCost(status.costUsd)));
  }
  return lines.join('\n');
}

/** `↑ 12.3k in (9.8k cached) · ↓ 450 out · 3 requests · ≈ $0.004`: one turn's usage. */
export function usageLine(item: UsageItem, trans: TranslationBundle): string {
  const parts = [inPart(item.usage, trans), trans.__('↓ %1 out', formatTokens(item.usage.output))];
  parts.push(trans._n('%1 request', '%1 requests', item.requests));
  if (item.costUsd !== undefined) {
    parts.push(formatCost(item.costUsd));
  }
  return parts.join(' · ');
}

/** The usage line's tooltip: exact figures and the model. */
export function usageTooltip(item: UsageItem, trans: TranslationBundle): string {
  const u = item.usage;
  const lines = [
    trans.__('Model: %1', item.model),
    trans.__(
      'Input: %1 tokens, %2 read from the cache, %3 written to it',
      exact(u.input),
      exact(u.cachedInput),
      exact(u.cacheWrite)
    ),
    trans.__('Output: %1 tokens', exact(u.output))
  ];
  if (u.reasoning !== undefined) {
    lines.push(trans.__('Reasoning: %1 tokens (part of the output)', exact(u.reasoning)));
  }
  return lines.join('\n');
}

/** `12.3k in (9.8k cached) · 450 out`: totals for a tooltip. */
export function usageSummary(usage: TokenUsage, trans: TranslationBundle): string {
  const cached = usage.cachedInput > 0 ? ` ${trans.__('(%1 cached)', formatTokens(usage.cachedInput))}` : '';
  return `${trans.__('%1 in', formatTokens(usage.input))}${cached} · ${trans.__('%1 out', formatTokens(usage.output))}`;
}

/** The compaction card's headline: why, what was pruned and summarised, tokens before → after. */
export function compactionHeadline(item: CompactionItem, trans: TranslationBundle): string {
  const parts = [compactionTrigger(item.trigger, trans)];
  if (item.prunedOutputs > 0) {
    parts.push(trans._n('%1 old output pruned', '%1 old outputs pruned', item.prunedOutputs));
  }
  if (item.summarizedMessages > 0) {
    parts.push(trans._n('%1 message summarised', '%1 messages summarised', item.summarizedMessages));
  }
  parts.push(`${formatTokens(item.tokensBefore)} → ${trans.__('%1 tokens', formatTokens(item.tokensAfter))}`);
  return parts.join(' · ');
}

/** `Context compacted (auto)` and its two siblings. */
export function compactionTrigger(trigger: CompactionItem['trigger'], trans: TranslationBundle): string {
  switch (trigger) {
    case 'manual':
      return trans.__('Context compacted (on request)');
    case 'overflow':
      return trans.__("Context compacted (after the provider's overflow error)");
    default:
      return trans.__('Context compacted (auto)');
  }
}

function inPart(usage: TokenUsage, trans: TranslationBundle): string {
  const text = trans.__('↑ %1 in', formatTokens(usage.input));
  return usage.cachedInput > 0 ? `${text} ${trans.__('(%1 cached)', formatTokens(usage.cachedInput))}` : text;
}

function windowSource(source: ContextStatus['windowSource'], trans: TranslationBundle): string {
  switch (source) {
    case 'settings':
      return trans.__('from Settings');
    case 'server':
      return trans.__("from the model server's model list");
    case 'catalog':
      return trans.__('from the models.dev catalog');
    default:
      return trans.__('source unknown');
  }
}

/** `12,345` (in the reader's locale): exact counts in tooltips. */
function exact(n: number): string {
  return Math.round(n).toLocaleString();
}

/** `12.0` → `12`, `0.0040` → `0.004` (keeping at least `keep` decimals). */
function trimZero(text: string, keep = 0): string {
  if (!text.includes('.')) {
    return text;
  }
  const [whole, fraction] = text.split('.');
  let f = fraction.replace(/0+$/, '');
  if (f.length < keep) {
    f = f.padEnd(keep, '0');
  }
  return f ? `${whole}.${f}` : whole;
}
