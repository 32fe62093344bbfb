import {
  APICallError,
  type LanguageModelV3,
  type LanguageModelV3CallOptions,
  type LanguageModelV3FunctionTool,
  type LanguageModelV3StreamPart,
  type LanguageModelV3StreamResult
} from '@ai-sdk/provider';
import { setTimeout as delay } from 'node:timers/promises';
import type { LanguageModel, ModelMessage } from 'ai';
import type { ToolDeclaration } from '../gate/catalog.js';
import type { TokenUsage } from '@cellmate/protocol';
import { stepPrompt } from './step-prompt.js';
import { StreamIdleTimeoutError } from './provider-errors.js';
import { cacheOptions } from './prompt-cache.js';
import { usageFromProvider } from './usage.js';

/** One tool call the model asked for in a step. */
export interface ModelToolCall {
  toolCallId: string;
  toolName: string;
  /** Parsed JSON input, or the raw text when it was not valid JSON. */
  input: unknown;
}

/** How one model step ended. */
export type StepEnd =
  { kind: 'finished'; finishReason: string } | { kind: 'aborted' } | { kind: 'error'; error: unknown };

/** The result of {@link streamStep}: what the model produced, and how the stream ended. */
export interface StepOutcome {
  text: string;
  toolCalls: ModelToolCall[];
  end: StepEnd;
  /** The provider's usage report of the request (CTX-1), when it sent one. */
  usage?: TokenUsage;
}

/** Callbacks while the step streams. */
export interface StepCallbacks {
  onTextDelta(delta: string): void;
  onToolCall(call: ModelToolCall): void;
}

/** Inputs of {@link streamStep}. */
export interface StepInput {
  model: LanguageModel;
  system: string;
  messages: ModelMessage[];
  /** The tools declared to the model (no `execute`: the agent loop runs them). */
  tools: readonly ToolDeclaration[];
  /** The user's stop. */
  signal: AbortSignal;
  /** Abort when no stream part arrives for this long. */
  idleTimeoutMs: number;
  /** Retries of a retryable provider error (HTTP 408/409/429/5xx) before the stream starts. */
  maxRetries: number;
  /** Cap on the answer's tokens (the summariser's). */
  maxOutputTokens?: number;
  /**
   * Why Cellmate asks, under its own provider-options namespace (no provider reads it):
   * `summary` for a compaction, `sidecar` for the Auto reviewer's verdict.
   */
  purpose?: 'summary' | 'sidecar';
  /**
   * Prompt caching (CTX-2): the chat (OpenAI's `prompt_cache_key`) and how many of
   * `messages` the previous request of this turn carried (Anthropic's breakpoint on the
   * boundary it cached). Absent: no cache hints.
   */
  cache?: { key: string; previousLength: number };
}

/**
 * Streams one model step straight from the provider's `doStream` (AI SDK `LanguageModelV3`),
 * with the tools declared without `execute`, so the step ends at the first batch of tool
 * calls and the agent loop runs them. `streamText` is not used: the agent already owns the
 * loop, the prompt conversion (`step-prompt.ts`), argument validation (the registry) and
 * the idle guard, and streamText's per-step machinery (stream transforms, telemetry spans,
 * its own prompt standardisation) cost more than the rest of a scripted step.
 * Never throws: provider errors, malformed chunks, aborts and stalls all come back as
 * `end`. The first `error` part ends the step at once (a provider may keep the connection
 * open after a bad chunk).
 */
export async function streamStep(input: StepInput, callbacks: StepCallbacks): Promise<StepOutcome> {
  const stop = new AbortController();
  const signal = AbortSignal.any([input.signal, stop.signal]);
  let idleTimer: NodeJS.Timeout | undefined;
  const armIdle = (): void => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => stop.abort(new StreamIdleTimeoutError(input.idleTimeoutMs)), input.idleTimeoutMs);
  };

  let text = '';
  const toolCalls: ModelToolCall[] = [];
  let end: StepEnd | undefined;
  let usage: TokenUsage | undefined;
  armIdle();
  try {
    const { model, prompt } = await stepPrompt(input.model, input.system, input.messages, signal);
    const declared = input.tools.map((d): LanguageModelV3FunctionTool => ({
      type: 'function',
      name: d.name,
      description: d.description,
      inputSchema: d.parameters
    }));
    const cached = input.cache
      ? cacheOptions(model.provider, prompt, declared, input.cache)
      : { prompt, tools: declared };
    const tools = cached.tools;
    const options: LanguageModelV3CallOptions = {
      prompt: cached.prompt,
      abortSignal: signal,
      ...(tools.length > 0 ? { tools, toolChoice: { type: 'auto' } } : {}),
      ...(input.maxOutputTokens ? { maxOutputTokens: input.maxOutputTokens } : {}),
      ...(cached.providerOptions || input.purpose
        ? {
            providerOptions: {
              ...cached.providerOptions,
              ...(input.purpose ? { cellmate: { purpose: input.purpose } } : {})
            }
          }
        : {})
    };
    const { stream } = await withRetries(model, options, input.maxRetries, signal);
    const reader = stream.getReader();
    try {
      for (;;) {
        const { done, value: part } = await reader.read();
        if (done) break;
        armIdle();
        if (part.type === 'text-delta') {
          if (part.delta.length === 0) continue;
          text += part.delta;
          callbacks.onTextDelta(part.delta);
        } else if (part.type === 'tool-call') {
          if (part.providerExecuted) continue; // the provider ran it itself; nothing for the loop
          const call = { toolCallId: part.toolCallId, toolName: part.toolName, input: parseToolInput(part.input) };
          toolCalls.push(call);
          callbacks.onToolCall(call);
        } else if (part.type === 'error') {
          end = { kind: 'error', error: part.error };
          stop.abort(part.error);
          break;
        } else if (part.type === 'finish') {
          end = { kind: 'finished', finishReason: finishReasonOf(part) };
          usage = usageFromProvider(part.usage);
        }
      }
    } finally {
      reader.cancel().catch(() => undefined);
    }
  } catch (error) {
    end ??= { kind: 'error', error };
  } finally {
    clearTimeout(idleTimer);
  }
  const counted = usage ? { usage } : {};
  if (input.signal.aborted) return { text, toolCalls, end: { kind: 'aborted' }, ...counted };
  if (stop.signal.reason instanceof StreamIdleTimeoutError) {
    return { text, toolCalls, end: { kind: 'error', error: stop.signal.reason }, ...counted };
  }
  return {
    text,
    toolCalls,
    end: end ?? { kind: 'error', error: new Error('the model stream ended without finishing') },
    ...counted
  };
}

/** A tool call's input text as JSON (empty → `{}`, as the AI SDK reads it); invalid JSON stays text for the registry to reject. */
function parseToolInput(raw: string): unknown {
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

function finishReasonOf(part: Extract<LanguageModelV3StreamPart, { type: 'finish' }>): string {
  const reason = part.finishReason as unknown;
  if (typeof reason === 'string') return reason;
  const unified = (reason as { unified?: unknown } | undefined)?.unified;
  return typeof unified === 'string' ? unified : 'unknown';
}

/** First retry waits this long, doubling after (the AI SDK's defaults). */
const RETRY_INITIAL_MS = 2_000;
/** A server's `retry-after` is honoured up to this long. */
const RETRY_AFTER_MAX_MS = 60_000;

/**
 * `doStream`, retried on a retryable provider error (`APICallError.isRetryable`: 408, 409,
 * 429, 5xx, connection failures) up to `maxRetries` times with exponential backoff or the
 * server's `retry-after`. The last error is thrown as it is, so its status reaches the user.
 */
async function withRetries(
  model: LanguageModelV3,
  options: LanguageModelV3CallOptions,
  maxRetries: number,
  signal: AbortSignal
): Promise<LanguageModelV3StreamResult> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await model.doStream(options);
    } catch (error) {
      if (signal.aborted || attempt >= maxRetries || !APICallError.isInstance(error) || !error.isRetryable) throw error;
      await delay(retryDelay(error, attempt), undefined, { signal });
    }
  }
}

function retryDelay(error: APICallError, attempt: number): number {
  const headers = error.responseHeaders ?? {};
  const ms = Number(headers['retry-after-ms']);
  if (Number.isFinite(ms) && ms >= 0 && ms <= RETRY_AFTER_MAX_MS) return ms;
  const seconds = Number(headers['retry-after']);
  if (Number.isFinite(seconds) && seconds >= 0 && seconds * 1000 <= RETRY_AFTER_MAX_MS) return seconds * 1000;
  return RETRY_INITIAL_MS * 2 ** attempt;
}
