import type { LanguageModelV3Usage } from '@ai-sdk/provider';
import type { TokenUsage } from '@cellmate/protocol';

/** No tokens. */
export const ZERO_USAGE: Readonly<TokenUsage> = Object.freeze({ input: 0, cachedInput: 0, cacheWrite: 0, output: 0 });

/**
 * The provider's report of one request as Cellmate counts it (CTX-1). `input` is every
 * input token, cached ones included: providers differ in whether their own `total` counts
 * the cache (Anthropic reports the uncached part apart), and the meter compares the whole
 * request with the window. Undefined when the provider reported nothing usable.
 */
export function usageFromProvider(usage: LanguageModelV3Usage | undefined): TokenUsage | undefined {
  if (!usage) return undefined;
  const n = (v: number | undefined): number =>
    typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.round(v) : 0;
  const cachedInput = n(usage.inputTokens?.cacheRead);
  const cacheWrite = n(usage.inputTokens?.cacheWrite);
  const noCache = n(usage.inputTokens?.noCache);
  const input = Math.max(n(usage.inputTokens?.total), noCache + cachedInput + cacheWrite);
  const output = n(usage.outputTokens?.total);
  const reasoning = n(usage.outputTokens?.reasoning);
  if (input === 0 && output === 0) return undefined;
  return { input, cachedInput, cacheWrite, output, ...(reasoning > 0 ? { reasoning } : {}) };
}

/** The sum of two usages. Pure. */
export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  const reasoning = (a.reasoning ?? 0) + (b.reasoning ?? 0);
  return {
    input: a.input + b.input,
    cachedInput: a.cachedInput + b.cachedInput,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    output: a.output + b.output,
    ...(reasoning > 0 ? { reasoning } : {})
  };
}
