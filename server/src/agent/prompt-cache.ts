/**
 * Prompt-cache hints for one request (CTX-2). The prefix Cellmate sends is byte-stable
 * from step to step (same system prompt, same declared tools, history only appended), so
 * a provider's cache can serve it:
 * - Anthropic caches only up to explicit `cache_control` breakpoints (at most four): one on
 *   the system prompt (covering the tools, which come first, and the system text), one on
 *   the message that ended the previous request (read from the cache now) and one on the
 *   newest message (written for the next step).
 * - OpenAI caches prefixes by itself; `prompt_cache_key` routes a chat's requests to the
 *   same cache.
 * Other providers get nothing.
 */
import type {
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  SharedV3ProviderOptions
} from '@ai-sdk/provider';

const EPHEMERAL = { cacheControl: { type: 'ephemeral' } } as const;

/** The request's prompt, tools and provider options with the provider's cache hints. Never mutates its inputs. */
export function cacheOptions(
  provider: string,
  prompt: LanguageModelV3Prompt,
  tools: LanguageModelV3FunctionTool[],
  cache: { key: string; previousLength: number }
): { prompt: LanguageModelV3Prompt; tools: LanguageModelV3FunctionTool[]; providerOptions?: SharedV3ProviderOptions } {
  if (provider.startsWith('anthropic')) {
    const marks = new Set<number>();
    if (prompt[0]?.role === 'system') marks.add(0);
    // The prompt is the system message, then the messages: message i of the view is prompt[i + 1].
    if (cache.previousLength > 0 && cache.previousLength < prompt.length - 1) marks.add(cache.previousLength);
    if (prompt.length > 1) marks.add(prompt.length - 1);
    return { prompt: prompt.map((m, i) => (marks.has(i) ? withAnthropicCache(m) : m)), tools };
  }
  if (provider.startsWith('openai.'))
    return { prompt, tools, providerOptions: { openai: { promptCacheKey: cache.key } } };
  return { prompt, tools };
}

function withAnthropicCache(message: LanguageModelV3Message): LanguageModelV3Message {
  const options = message.providerOptions ?? {};
  return {
    ...message,
    providerOptions: { ...options, anthropic: { ...(options.anthropic ?? {}), ...EPHEMERAL } }
  } as LanguageModelV3Message;
}

/**
 * How many view messages the previous request carried, for the first step of a turn: the
 * previous turn's last request ended right before its final answer (the last assistant
 * message before the new user message). 0 when there is none.
 */
export function previousRequestLength(view: ReadonlyArray<{ role: string }>): number {
  for (let i = view.length - 2; i >= 0; i--) if (view[i]!.role === 'assistant') return i;
  return 0;
}
