import type { LanguageModel, ModelMessage, Tool } from 'ai';
import { loadAiSdk } from './ai-sdk.js';
import { modelWithPrompt, PLACEHOLDER_MESSAGES } from './step-prompt.js';
import { StreamIdleTimeoutError } from './provider-errors.js';

/** One tool call the model asked for in a step. */
export interface ModelToolCall {
  toolCallId: string;
  toolName: string;
  /** Parsed JSON input, or the raw text when it was not valid JSON. */
  input: unknown;
}

/** How one model step ended. */
export type StepEnd =
  | { kind: 'finished'; finishReason: string }
  | { kind: 'aborted' }
  | { kind: 'error'; error: unknown };

/** The result of {@link streamStep}: what the model produced, and how the stream ended. */
export interface StepOutcome {
  text: string;
  toolCalls: ModelToolCall[];
  end: StepEnd;
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
  tools: Record<string, Tool>;
  /** The user's stop. */
  signal: AbortSignal;
  /** Abort when no stream part arrives for this long. */
  idleTimeoutMs: number;
  maxRetries: number;
}

/**
 * Streams one model step with tools declared without `execute`, so the step ends at the
 * first batch of tool calls and the agent loop runs them. Never throws: provider errors,
 * malformed chunks, aborts and stalls all come back as `end`. The first `error` part
 * ends the step at once (a provider may keep the connection open after a bad chunk).
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
  armIdle();
  try {
    const { streamText } = await loadAiSdk();
    // The history is validated once per message and converted here, not by streamText on
    // every step (step-prompt.ts).
    const model = await modelWithPrompt(input.model, input.system, input.messages, signal);
    const result = streamText({
      model,
      messages: PLACEHOLDER_MESSAGES,
      tools: input.tools,
      abortSignal: signal,
      maxRetries: input.maxRetries,
      onError: () => {} // reported through the `error` part below; the default logs to the console
    });
    for await (const part of result.fullStream) {
      armIdle();
      if (part.type === 'text-delta') {
        if (part.text.length === 0) continue;
        text += part.text;
        callbacks.onTextDelta(part.text);
      } else if (part.type === 'tool-call') {
        const call = { toolCallId: part.toolCallId, toolName: part.toolName, input: part.input };
        toolCalls.push(call);
        callbacks.onToolCall(call);
      } else if (part.type === 'error') {
        end = { kind: 'error', error: part.error };
        stop.abort(part.error);
        break;
      } else if (part.type === 'abort') {
        break;
      } else if (part.type === 'finish') {
        end = { kind: 'finished', finishReason: part.finishReason };
      }
    }
  } catch (error) {
    end ??= { kind: 'error', error };
  } finally {
    clearTimeout(idleTimer);
  }
  if (input.signal.aborted) return { text, toolCalls, end: { kind: 'aborted' } };
  if (stop.signal.reason instanceof StreamIdleTimeoutError) {
    return { text, toolCalls, end: { kind: 'error', error: stop.signal.reason } };
  }
  return { text, toolCalls, end: end ?? { kind: 'error', error: new Error('the model stream ended without finishing') } };
}
