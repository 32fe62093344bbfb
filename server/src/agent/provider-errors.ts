import { APICallError } from '@ai-sdk/provider';
import type { ModelSettings } from '@cellmate/protocol';
import { InvalidHistoryError } from './step-prompt.js';

/** The stream sent nothing for too long; raised by the agent's inactivity guard. */
export class StreamIdleTimeoutError extends Error {
  constructor(readonly idleMs: number) {
    super(`the model stream sent nothing for ${Math.round(idleMs / 1000)} s`);
    this.name = 'StreamIdleTimeoutError';
  }
}

/**
 * A clear, actionable sentence for a provider failure (HTTP error, unreachable server,
 * malformed stream, stall). Never includes request headers, so never a key. Pure.
 */
export function describeProviderError(error: unknown, settings: ModelSettings): string {
  const who = providerLabel(settings);
  if (error instanceof StreamIdleTimeoutError) {
    return `${who} sent nothing for ${Math.round(error.idleMs / 1000)} s, so the turn was stopped. Check that the model server is running and responsive, then send your message again.`;
  }
  if (error instanceof InvalidHistoryError) return error.message; // ours, not the provider's
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    const detail = shorten(error.message);
    if (status === 401 || status === 403) {
      return `${who} rejected the API key (HTTP ${status}): ${detail}. Check the key configured on the server (see Settings → Cellmate for where it comes from).`;
    }
    if (status === 404)
      return `${who} answered HTTP 404: ${detail}. Check the model id "${settings.model}"${settings.baseUrl ? ` and the base URL ${settings.baseUrl}` : ''}.`;
    if (status === 429) return `${who} is rate-limiting requests (HTTP 429): ${detail}. Wait a moment and send again.`;
    if (status !== undefined)
      return `${who} returned HTTP ${status}: ${detail}. Try again; if it persists, check the provider's status and your settings.`;
    return `Could not reach ${who.replace(/^The /, 'the ')}: ${detail}. Check the network${settings.baseUrl ? ` and that a server listens at ${settings.baseUrl}` : ''}.`;
  }
  const name = error instanceof Error ? error.name : '';
  const message = error instanceof Error ? error.message : String(error);
  if (/JSONParseError|TypeValidationError/.test(name) || /JSON/i.test(message)) {
    return `${who} sent a malformed response the client could not parse (${shorten(message)}). The turn was stopped; if this repeats, the server is not speaking the expected API.`;
  }
  if (/ended without/i.test(message)) {
    return `${who} ended its response without completing it (${shorten(message)}). ${settings.baseUrl ? 'Check that the base URL points at an OpenAI-compatible API (usually ending in /v1), then send again.' : 'Send your message again.'}`;
  }
  const cause = error instanceof Error && error.cause instanceof Error ? ` (${shorten(error.cause.message)})` : '';
  return `${who} failed: ${shorten(message)}${cause}.`;
}

/**
 * Wordings of a provider refusing a request as longer than the model's context: OpenAI
 * (`context_length_exceeded`, "maximum context length"), Anthropic ("prompt is too long"),
 * vLLM ("maximum context length … However, you requested"), llama.cpp ("exceeds the
 * available context size", `exceed_context_size_error`), Ollama ("prompt too long",
 * "exceeds the context length"), and gateways' "context window" / "too many tokens".
 */
const OVERFLOW_PATTERNS = [
  /context_length_exceeded/i,
  /maximum context length/i,
  /prompt is too long/i,
  /prompt too long/i,
  /exceeds? the (available )?context (size|length|window)/i,
  /exceed_context_size/i,
  /context (length|window) (exceeded|is exceeded|limit)/i,
  /(input|prompt) (is )?(too long|longer than) .*context/i,
  /too many (input )?tokens/i,
  /reduce the length of the (messages|prompt)/i
];

/** Whether a provider error says the request is longer than the model's context window (CTX-3). */
export function isContextOverflow(error: unknown): boolean {
  const texts: string[] = [];
  if (APICallError.isInstance(error)) {
    if (
      error.statusCode !== undefined &&
      error.statusCode !== 400 &&
      error.statusCode !== 413 &&
      error.statusCode !== 422 &&
      error.statusCode !== 500
    )
      return false;
    texts.push(error.message, error.responseBody ?? '');
  } else if (error instanceof Error) texts.push(error.message);
  else if (typeof error === 'object' && error !== null) texts.push(JSON.stringify(error));
  else texts.push(String(error));
  return texts.some((t) => OVERFLOW_PATTERNS.some((p) => p.test(t)));
}

/**
 * The window an overflow error states, and the request's size when it says: "maximum context
 * length is N tokens … resulted in M", "M tokens > N maximum", "(M tokens) exceeds the
 * available context size (N tokens)", llama.cpp's `n_ctx`. Undefined figures when it says none.
 */
export function overflowFigures(error: unknown): { window?: number; tokens?: number } {
  const text = APICallError.isInstance(error)
    ? `${error.message} ${error.responseBody ?? ''}`
    : error instanceof Error
      ? error.message
      : String(error);
  const num = (m: RegExpMatchArray | null): number | undefined => (m ? Number(m[1]) : undefined);
  const window =
    num(text.match(/maximum context length is (\d+)/i)) ??
    num(text.match(/> ?(\d+) maximum/i)) ??
    num(text.match(/context size \((\d+) tokens?\)/i)) ??
    num(text.match(/"n_ctx":\s*(\d+)/));
  const tokens =
    num(text.match(/resulted in (\d+) tokens/i)) ??
    num(text.match(/has (\d+) input tokens/i)) ??
    num(text.match(/too long: (\d+) tokens/i)) ??
    num(text.match(/\((\d+) tokens\) exceeds/i)) ??
    num(text.match(/"n_prompt_tokens":\s*(\d+)/));
  return { ...(window ? { window } : {}), ...(tokens ? { tokens } : {}) };
}

function providerLabel(settings: ModelSettings): string {
  switch (settings.provider) {
    case 'openai-compatible':
      return `The openai-compatible server${settings.baseUrl ? ` at ${settings.baseUrl}` : ''}`;
    case 'scripted':
      return 'The scripted provider';
    default:
      return `The ${settings.provider} provider`;
  }
}

function shorten(text: string): string {
  const flat = text
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[.\s]+$/, '');
  return flat.length > 300 ? `${flat.slice(0, 297)}...` : flat;
}
