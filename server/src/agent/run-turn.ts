import type {
  AssistantItem,
  ChatEvent,
  ModelSettings,
  NoticeItem,
  ToolCallItem,
  ToolReview,
  TurnEndReason
} from '@cellmate/protocol';
import type { AutoApprovalPort } from '../ports/gate-ports.js';
import type { LanguageModel, ModelMessage, ToolResultPart } from 'ai';
import { newItemId } from '../base/ids.js';
import { isParallelSafe, type ToolCallResult, type ToolRegistry } from '../gate/registry.js';
import { FatalToolError } from '../base/tool-errors.js';
import { modelAcceptsImages } from '../providers/capabilities.js';
import { describeProviderError, isContextOverflow } from './provider-errors.js';
import type { ContextManager } from './context-manager.js';
import { streamStep, type ModelToolCall } from './stream-step.js';
import {
  declarations,
  dispatchTarget,
  loadedTools,
  type DispatchTarget,
  type ToolDeclaration
} from '../gate/catalog.js';
import type { CapabilityProfile } from '../ports/vocabulary.js';
import type { ToolContext } from '../gate/define-tool.js';

/** Default cap on model steps per turn. */
export const DEFAULT_MAX_STEPS = 25;
/** Default stream inactivity timeout. */
export const DEFAULT_STREAM_IDLE_TIMEOUT_MS = 120_000;

/**
 * Marks the nudge's user message in the history (provider options under a namespace no
 * provider reads), so `chat/retry` and `chat/edit` find the person's last message, not it.
 */
const NUDGE_OPTIONS = { cellmate: { nudge: true } } as const;

/** Whether a history message is a mode's nudge (MODE-3), not something the person wrote. */
export function isNudgeMessage(message: ModelMessage): boolean {
  const options = (message as { providerOptions?: { cellmate?: { nudge?: unknown } } }).providerOptions;
  return message.role === 'user' && options?.cellmate?.nudge === true;
}

/** Where a turn reports what happens. */
export interface TurnSink {
  /** A transcript event (already in order). */
  emit(event: ChatEvent): void;
  /** Model messages to append to the chat's history (a completed step). */
  appendMessages(messages: ModelMessage[]): void;
}

/** Everything one turn needs. */
export interface TurnInput {
  chatId: string;
  turnId: string;
  workspace: string;
  model: LanguageModel;
  settings: ModelSettings;
  registry: ToolRegistry;
  /**
   * What every step declares (the cached prefix; computed once by the caller with the
   * system prompt, `surfaceCatalog`). Default: the registry's catalog on its default surface.
   */
  declared?: readonly ToolDeclaration[];
  /**
   * The turn's capability profile (MODE-2): the declared tools and every call's context
   * come from it, so the registry judges the model's calls, and a kernel's `tool()` calls
   * re-entering it, against the same surface. Default: the registry's own profile.
   */
  profile?: CapabilityProfile;
  /**
   * The mode's completion nudge (MODE-3): when the model stops without a successful call of
   * `verb` in this turn, `text` is given to it once as a user message and the loop goes on.
   */
  nudge?: { verb: string; text: string };
  system: string;
  /** The history including the new user message. Not mutated. */
  history: readonly ModelMessage[];
  signal: AbortSignal;
  maxSteps?: number;
  idleTimeoutMs?: number;
  maxRetries?: number;
  /** Removes secrets from text shown to the user (error messages may echo a request). */
  redact?: (text: string) => string;
  /** The background worker this turn is the run of (every call's `ctx.worker`). */
  worker?: ToolContext['worker'];
  /**
   * Keeps the requests inside the model's window (CTX-1/3): each step is sent its view of
   * the history, usage is counted, and an overflow compacts and retries once. Chats' turns
   * and workers' runs have one (`run-context.ts`). Absent: the whole history is sent (tests).
   */
  context?: ContextManager;
  /**
   * The chat's Auto approval (SIDE-1): a call the policy would ask about is judged by the
   * reviewer first, started as soon as the call's arguments are complete in the stream.
   */
  autoApproval?: AutoApprovalPort;
}

/** How the turn ended. */
export interface TurnResult {
  reason: TurnEndReason;
  error?: string;
}

/**
 * The agent loop: stream a step, run the tool calls it asked for through the registry,
 * append results, repeat until the model stops, the user aborts, an error happens or the
 * step cap is reached. Emits transcript events in order and never throws.
 */
export async function runTurn(input: TurnInput, sink: TurnSink): Promise<TurnResult> {
  const maxSteps = input.maxSteps ?? DEFAULT_MAX_STEPS;
  const redact = input.redact ?? ((t: string) => t);
  const messages = [...input.history];
  const now = (): string => new Date().toISOString();
  const notice = (level: NoticeItem['level'], text: string): void => {
    const item: NoticeItem = {
      kind: 'notice',
      id: newItemId(),
      time: now(),
      turnId: input.turnId,
      level,
      text: redact(text)
    };
    sink.emit({ type: 'item-added', item });
  };
  const end = (reason: TurnEndReason, error?: string): TurnResult => {
    const usage = input.context?.usageItem();
    if (usage) sink.emit({ type: 'item-added', item: usage });
    const safe = error === undefined ? undefined : redact(error);
    sink.emit({ type: 'turn-ended', turnId: input.turnId, reason, ...(safe !== undefined ? { error: safe } : {}) });
    return safe === undefined ? { reason } : { reason, error: safe };
  };

  /** Shows the reviewer's state on a call's card (kept on the card for its final update). */
  const reviewCards = new Map<string, ToolCallItem>();
  /** Reviews being started during the stream: a call waits for its own start, so it finds the verdict. */
  const reviewStarts = new Map<string, Promise<void>>();
  const reviewer =
    (callId: string) =>
    (review: ToolReview): void => {
      const card = reviewCards.get(callId);
      if (!card || card.status !== 'running') return;
      card.review = review;
      sink.emit({ type: 'item-updated', item: { ...card } });
    };
  const callContext = (callId: string): ToolContext => ({
    workspace: input.workspace,
    signal: input.signal,
    actor: 'model',
    chatId: input.chatId,
    turnId: input.turnId,
    callId,
    ...(input.profile ? { profile: input.profile } : {}),
    modelSettings: input.settings,
    ...(input.worker ? { worker: input.worker } : {}),
    ...(input.autoApproval
      ? { autoApproval: input.autoApproval, note: (level: 'info' | 'warning', text: string) => notice(level, text) }
      : {})
  });

  let artifactDone = false;
  let nudged = false;
  let overflowRetried = false;
  try {
    const tools = input.declared ?? declarations(input.registry, input.profile);
    for (let step = 1; ; step++) {
      let assistant: AssistantItem | undefined;
      const cards = new Map<string, ToolCallItem>();
      // A `call_tool` call stands for the loaded tool it names (HARN-11): card, gate and audit see that tool.
      const targets = new Map<string, DispatchTarget>();
      let loaded: Set<string> | undefined;
      const isLoaded = (name: string): boolean => (loaded ??= loadedTools(messages)).has(name);
      const closeAssistant = (): void => {
        if (!assistant) return;
        assistant = { ...assistant, streaming: false };
        sink.emit({ type: 'item-updated', item: assistant });
        assistant = undefined;
      };
      let streamedText = '';
      const view = input.context ? await input.context.beforeStep(messages, input.signal) : messages;
      const outcome = await streamStep(
        {
          model: input.model,
          system: input.system,
          messages: view,
          tools,
          signal: input.signal,
          idleTimeoutMs: input.idleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS,
          maxRetries: input.maxRetries ?? 2,
          // Keyed by the conversation the history is (a worker's own, not its parent chat's): one prefix per key.
          ...(input.context
            ? { cache: { key: input.context.conversationId, previousLength: input.context.cacheBoundary() } }
            : {})
        },
        {
          onTextDelta(delta) {
            if (!assistant) {
              assistant = {
                kind: 'assistant',
                id: newItemId(),
                time: now(),
                turnId: input.turnId,
                text: '',
                streaming: true
              };
              sink.emit({ type: 'item-added', item: { ...assistant } });
            }
            assistant.text += delta;
            streamedText += delta;
            sink.emit({ type: 'text-delta', itemId: assistant.id, delta });
          },
          onToolCall(call) {
            closeAssistant(); // text before a tool call is final; the card follows it
            const target = dispatchTarget(call.toolName, call.input, isLoaded);
            targets.set(call.toolCallId, target);
            const card: ToolCallItem = {
              kind: 'tool',
              id: newItemId(),
              time: now(),
              turnId: input.turnId,
              callId: call.toolCallId,
              name: target.kind === 'tool' ? target.name : call.toolName,
              args: target.kind === 'tool' ? target.args : call.input,
              actor: 'model',
              status: 'running'
            };
            cards.set(call.toolCallId, card);
            reviewCards.set(call.toolCallId, card);
            sink.emit({ type: 'item-added', item: { ...card } });
            // SIDE-2: the reviewer starts now, while the model keeps streaming; the card says so at once.
            if (input.autoApproval && target.kind === 'tool') {
              reviewStarts.set(
                call.toolCallId,
                input.registry.startReview(target.name, target.args, callContext(call.toolCallId)).then((started) => {
                  if (started) reviewer(call.toolCallId)({ state: 'checking' });
                })
              );
            }
          }
        }
      );
      closeAssistant();
      input.context?.afterStep(outcome.usage, view);

      if (
        outcome.end.kind === 'error' &&
        input.context &&
        !overflowRetried &&
        !input.signal.aborted &&
        outcome.toolCalls.length === 0 &&
        streamedText === '' &&
        isContextOverflow(outcome.end.error)
      ) {
        // The provider refused the request as too long: compact harder and send the step once more (CTX-3).
        overflowRetried = true;
        if (await input.context.onOverflow(messages, input.signal, outcome.end.error)) {
          step--;
          continue;
        }
      }

      if (outcome.end.kind === 'aborted') {
        const results = outcome.toolCalls.map((c) =>
          finishCard(sink, cards, c, abortedResult('The user stopped the turn before this tool ran.'))
        );
        commitStep(sink, messages, streamedText, outcome.toolCalls, results);
        notice('info', 'Stopped by user.');
        return end('aborted');
      }
      if (outcome.end.kind === 'error') {
        const message = describeProviderError(outcome.end.error, input.settings);
        const results = outcome.toolCalls.map((c) =>
          finishCard(sink, cards, c, abortedResult('Not run: the model stream failed.'))
        );
        commitStep(sink, messages, streamedText, outcome.toolCalls, results);
        notice('error', message);
        return end('error', message);
      }

      const calls = outcome.toolCalls;
      const results: ToolCallResult[] = new Array<ToolCallResult>(calls.length);
      const targetOf = (call: ModelToolCall): DispatchTarget =>
        targets.get(call.toolCallId) ?? dispatchTarget(call.toolName, call.input, isLoaded);
      const runCall = async (call: ModelToolCall, index: number): Promise<void> => {
        if (input.signal.aborted) {
          results[index] = finishCard(
            sink,
            cards,
            call,
            abortedResult('The user stopped the turn before this tool ran.')
          );
          return;
        }
        const card = cards.get(call.toolCallId);
        const target = targetOf(call);
        if (target.kind === 'invalid') {
          results[index] = finishCard(sink, cards, call, {
            ok: false,
            status: 'error',
            output: target.message,
            title: 'call_tool: invalid call',
            durationMs: 0
          });
          return;
        }
        await reviewStarts.get(call.toolCallId);
        reviewStarts.delete(call.toolCallId);
        const result = await input.registry.call(target.name, target.args, {
          ...callContext(call.toolCallId),
          ...(card
            ? {
                progress: progressReporter(sink, card, Date.parse(card.time), redact),
                review: reviewer(call.toolCallId)
              }
            : {})
        });
        reviewCards.delete(call.toolCallId);
        if (result.ok && target.name === input.nudge?.verb) artifactDone = true;
        results[index] = finishCard(sink, cards, call, result);
      };
      // HARN-8: a run of read-tier calls in one step runs concurrently (a few at a time); a
      // write or exec call runs alone, after the calls before it and before those after it.
      // The results reach the model in call order whatever order they finish in.
      const parallelSafe = (call: ModelToolCall): boolean => {
        const target = targetOf(call);
        if (target.kind === 'invalid') return true;
        const definition = input.registry.get(target.name);
        return definition !== undefined && isParallelSafe(definition);
      };
      for (const batch of parallelBatches(calls, parallelSafe)) {
        await forEachBounded(batch, MAX_PARALLEL_CALLS, (index) => runCall(calls[index]!, index));
      }
      commitStep(sink, messages, streamedText, outcome.toolCalls, results, modelAcceptsImages(input.settings));

      if (input.signal.aborted) {
        notice('info', 'Stopped by user.');
        return end('aborted');
      }
      if (outcome.toolCalls.length === 0) {
        if (!input.nudge || artifactDone || nudged || step >= maxSteps) return end('stop');
        // One gentle nudge (MODE-3), which explicitly allows "no plan needed".
        nudged = true;
        notice('info', `Reminded the agent once that this mode expects ${input.nudge.verb} (or a plain "not needed").`);
        const reminder: ModelMessage = { role: 'user', content: input.nudge.text, providerOptions: NUDGE_OPTIONS };
        messages.push(reminder);
        sink.appendMessages([reminder]);
        continue;
      }
      if (step >= maxSteps) {
        notice(
          'warning',
          `Stopped after ${maxSteps} model steps (the per-turn limit). Send a message to let the agent continue.`
        );
        return end('max-steps');
      }
    }
  } catch (error) {
    const message =
      error instanceof FatalToolError
        ? `A tool failed in a way that ends the turn (${error.code}): ${error.message}`
        : `Internal error in the agent loop: ${error instanceof Error ? error.message : String(error)}. This is a bug in Cellmate.`;
    notice('error', message);
    return end('error', message);
  }
}

function abortedResult(output: string): ToolCallResult {
  return { ok: false, status: 'aborted', output, title: 'aborted', durationMs: 0 };
}

/** How often a card's progress may go out (the last update of a burst always does). */
const PROGRESS_INTERVAL_MS = 250;

/**
 * A throttled `tool-progress` emitter for one card. An approval wait is not throttled: the
 * card is updated when it starts (`waiting`) and ends (`waitMs` so far), so its timer shows
 * run time with the person's wait apart.
 */
function progressReporter(
  sink: TurnSink,
  card: ToolCallItem,
  startedAt: number,
  redact: (t: string) => string
): NonNullable<ToolContext['progress']> {
  const itemId = card.id;
  let last = 0;
  let pending: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  const flush = (): void => {
    timer = undefined;
    last = Date.now();
    const lastLine = pending === undefined ? undefined : redact(pending).slice(0, 500);
    sink.emit({
      type: 'tool-progress',
      itemId,
      elapsedMs: last - startedAt,
      ...(lastLine !== undefined ? { lastLine } : {})
    });
  };
  return (update) => {
    if (update.waiting !== undefined) {
      if (update.waiting) card.waiting = true;
      else delete card.waiting;
      if (update.waitedMs !== undefined) card.waitMs = update.waitedMs;
      sink.emit({ type: 'item-updated', item: { ...card } });
      if (update.lastLine === undefined) return;
    }
    if (typeof update.lastLine === 'string') pending = update.lastLine;
    if (timer) return;
    const wait = PROGRESS_INTERVAL_MS - (Date.now() - last);
    if (wait <= 0) flush();
    else timer = setTimeout(flush, wait).unref();
  };
}

function finishCard(
  sink: TurnSink,
  cards: Map<string, ToolCallItem>,
  call: ModelToolCall,
  result: ToolCallResult
): ToolCallResult {
  const card = cards.get(call.toolCallId);
  if (card) {
    const status = result.ok ? (result.outcome ?? 'ok') : result.status;
    const display = result.ok && result.display ? { display: result.display } : {};
    const { waiting: _waiting, ...rest } = card;
    sink.emit({
      type: 'item-updated',
      item: {
        ...rest,
        status,
        durationMs: result.durationMs,
        ...(result.waitMs !== undefined ? { waitMs: result.waitMs } : {}),
        output: result.output,
        title: result.title,
        ...display
      }
    });
  }
  return result;
}

/** Appends the step's assistant message and tool results to the history (kept valid: every call has a result). */
function commitStep(
  sink: TurnSink,
  messages: ModelMessage[],
  text: string,
  calls: readonly ModelToolCall[],
  results: readonly ToolCallResult[],
  acceptsImages = false
): void {
  const added: ModelMessage[] = [];
  if (text.length > 0 || calls.length > 0) {
    added.push({
      role: 'assistant',
      content: [
        ...(text.length > 0 ? [{ type: 'text' as const, text }] : []),
        ...calls.map((c) => ({
          type: 'tool-call' as const,
          toolCallId: c.toolCallId,
          toolName: c.toolName,
          input: c.input
        }))
      ]
    });
  }
  if (calls.length > 0) {
    added.push({
      role: 'tool',
      content: calls.map((c, i): ToolResultPart => {
        const r = results[i]!;
        return {
          type: 'tool-result',
          toolCallId: c.toolCallId,
          toolName: c.toolName,
          output: toolResultOutput(r, acceptsImages)
        };
      })
    });
  }
  if (added.length === 0) return;
  messages.push(...added);
  sink.appendMessages(added);
}

/** A tool result for the model: text, plus its images as media parts when the model takes images (SPEC EVAL-3). */
function toolResultOutput(r: ToolCallResult, acceptsImages: boolean): ToolResultPart['output'] {
  if (!r.ok) return { type: 'error-text', value: r.output };
  if (!acceptsImages || !r.attachments?.length) return { type: 'text', value: r.output };
  return {
    type: 'content',
    value: [
      { type: 'text', text: r.output },
      ...r.attachments.map((a) => ({ type: 'image-data' as const, data: a.data, mediaType: a.mediaType }))
    ]
  };
}

/** How many parallel-safe calls of one step run at the same time (HARN-8). */
export const MAX_PARALLEL_CALLS = 4;

/**
 * The step's calls as batches of indexes, in order: each run of consecutive parallel-safe
 * calls is one batch, every other call a batch of its own.
 */
export function parallelBatches<T>(calls: readonly T[], parallelSafe: (call: T) => boolean): number[][] {
  const batches: number[][] = [];
  let open: number[] | undefined;
  calls.forEach((call, index) => {
    if (!parallelSafe(call)) {
      open = undefined;
      batches.push([index]);
    } else if (open) {
      open.push(index);
    } else {
      open = [index];
      batches.push(open);
    }
  });
  return batches;
}

/**
 * Runs `run` for every item, at most `limit` at a time. A failure (a fatal tool error) is
 * thrown once every started item has settled, so no call outlives the step that started it.
 */
async function forEachBounded<T>(items: readonly T[], limit: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (next < items.length && !failed) {
      try {
        await run(items[next++]!);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failed) throw failed.error;
}
