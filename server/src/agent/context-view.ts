/**
 * The conversation the model is sent (CTX-3): the chat's whole history (`messages`, kept in
 * the journal) seen through its compaction state — a summary in place of the messages
 * before `summaryUpTo`, and one-line placeholders in place of the tool outputs before
 * `pruneBefore`. Every derived message is made once per source message and reused, so the
 * view of step n+1 starts with the very objects of step n: the prompt conversion reuses its
 * work (`step-prompt.ts`) and the bytes of the cached prefix never change between steps.
 */
import type { ModelMessage, ToolResultPart } from 'ai';

/**
 * What the model is sent in place of the whole history (CTX-3): `messages` stay whole in
 * the journal; the view the model reads is derived from them and this (below).
 */
export interface CompactionState {
  /** Messages before this index are replaced by `summary` (0: no summary). */
  summaryUpTo: number;
  /** The summary the model reads first, with the live kernel state. */
  summary?: string;
  /** Tool results in messages before this index are sent as one-line placeholders. */
  pruneBefore: number;
  /** The person's messages the summary stands for (a scripted model counts turns by them). */
  summarizedUsers?: number;
}

/** Characters per token assumed by the estimate: deliberately low (tables and JSON tokenise densely), so it errs towards compacting early. */
export const CHARS_PER_TOKEN = 3;
/** Tokens one image costs a model (a matplotlib figure is about 1–1.5k). */
export const IMAGE_TOKENS = 1_500;
/** Outputs shorter than this stay as they are: a placeholder would not be much shorter. */
export const MIN_PRUNABLE_CHARS = 600;
/** Folder of the saved outputs a placeholder names (workspace-relative; `read` reopens them). */
export const PRUNED_OUTPUTS_DIR = '.cellmate/outputs';

const estimates = new WeakMap<object, number>();

/** Estimated tokens of a text. */
export function textTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/** Estimated tokens of one model message (computed once per message object). */
export function messageTokens(message: ModelMessage): number {
  const known = estimates.get(message);
  if (known !== undefined) return known;
  let chars = 16;
  let images = 0;
  const content = message.content as unknown;
  if (typeof content === 'string') chars += content.length;
  else if (Array.isArray(content)) {
    for (const part of content as Array<Record<string, unknown>>) {
      if (part.type === 'text' || part.type === 'reasoning') chars += String(part.text ?? '').length;
      else if (part.type === 'image' || part.type === 'file') images++;
      else if (part.type === 'tool-call') chars += String(part.toolName ?? '').length + safeLength(part.input);
      else if (part.type === 'tool-result') {
        const output = part.output as { type?: string; value?: unknown } | undefined;
        if (output?.type === 'content' && Array.isArray(output.value)) {
          for (const v of output.value as Array<Record<string, unknown>>) {
            if (v.type === 'text') chars += String(v.text ?? '').length;
            else images++;
          }
        } else chars += typeof output?.value === 'string' ? output.value.length : safeLength(output?.value);
      }
    }
  }
  const tokens = Math.ceil(chars / CHARS_PER_TOKEN) + images * IMAGE_TOKENS;
  estimates.set(message, tokens);
  return tokens;
}

function safeLength(value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value === 'string') return value.length;
  try {
    return JSON.stringify(value).length;
  } catch {
    return 0;
  }
}

/** Estimated tokens of several messages. */
export function messagesTokens(messages: readonly ModelMessage[]): number {
  let sum = 0;
  for (const m of messages) sum += messageTokens(m);
  return sum;
}

/** Workspace-relative path where the full output of a pruned tool call is saved (one per call, stable across restarts). */
export function prunedOutputPath(chatId: string, toolCallId: string): string {
  const safe = toolCallId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 80) || 'call';
  return `${PRUNED_OUTPUTS_DIR}/${chatId}--pruned-${safe}.txt`;
}

/** The full text of a tool result (what a pruned placeholder saves), and how many images it had. */
export function toolResultText(part: ToolResultPart): { text: string; images: number } {
  const output = part.output as { type?: string; value?: unknown };
  if (output.type === 'content' && Array.isArray(output.value)) {
    const texts: string[] = [];
    let images = 0;
    for (const v of output.value as Array<Record<string, unknown>>) {
      if (v.type === 'text') texts.push(String(v.text ?? ''));
      else images++;
    }
    return { text: texts.join('\n'), images };
  }
  return {
    text:
      typeof output.value === 'string' ? output.value : safeLength(output.value) ? JSON.stringify(output.value) : '',
    images: 0
  };
}

/** Whether a tool result is worth a placeholder. */
export function isPrunable(part: ToolResultPart): boolean {
  const { text, images } = toolResultText(part);
  return images > 0 || text.length >= MIN_PRUNABLE_CHARS;
}

/** The one-line placeholder the model reads instead of an old output. Pure and deterministic. */
export function placeholderText(chatId: string, part: ToolResultPart): string {
  const { text, images } = toolResultText(part);
  const first =
    text
      .split('\n')
      .find((l) => l.trim().length > 0)
      ?.trim() ?? '';
  const began = first ? ` It began: ${JSON.stringify(first.length > 120 ? `${first.slice(0, 117)}...` : first)}.` : '';
  const figures = images > 0 ? ` It showed ${images} figure${images > 1 ? 's' : ''} (not kept).` : '';
  const lines = text ? text.split('\n').length : 0;
  return `[Old output of ${part.toolName} pruned to keep the conversation inside the context window (${lines} line${lines === 1 ? '' : 's'}).${began}${figures} The full text is saved at ${prunedOutputPath(chatId, part.toolCallId)}; call read on it if you need it again.]`;
}

const prunedCache = new WeakMap<object, ModelMessage>();

/** A tool message with its large outputs replaced by placeholders (the same object for the same input). */
export function prunedMessage(message: ModelMessage, chatId: string): ModelMessage {
  if (message.role !== 'tool') return message;
  const cached = prunedCache.get(message);
  if (cached) return cached;
  let changed = false;
  const content = message.content.map((part) => {
    if (part.type !== 'tool-result' || !isPrunable(part)) return part;
    changed = true;
    return { ...part, output: { type: 'text' as const, value: placeholderText(chatId, part) } };
  });
  const result: ModelMessage = changed ? { ...message, content } : message;
  prunedCache.set(message, result);
  return result;
}

/** The text that opens a summary message. */
export const SUMMARY_HEADING =
  '[Context compacted by Cellmate: the conversation before this point was replaced by the summary below. The person still sees the whole transcript; saved outputs can be reopened with read.]';

let lastSummary: { text: string; users: number; message: ModelMessage } | undefined;

/**
 * The user message that carries a summary (the same object for the same summary). It says
 * under Cellmate's own provider-options namespace, which no provider reads, how many of the
 * person's messages it stands for.
 */
export function summaryMessage(summary: string, summarizedUsers = 1): ModelMessage {
  if (lastSummary?.text === summary && lastSummary.users === summarizedUsers) return lastSummary.message;
  const message: ModelMessage = {
    role: 'user',
    content: `${SUMMARY_HEADING}\n\n${summary}`,
    providerOptions: { cellmate: { summarizedUsers } }
  };
  lastSummary = { text: summary, users: summarizedUsers, message };
  return message;
}

/** The messages the model is sent for `messages` under `state` (all of them without a state). */
export function contextView(
  messages: readonly ModelMessage[],
  state: CompactionState | undefined,
  chatId: string
): ModelMessage[] {
  if (!state || (state.summaryUpTo <= 0 && state.pruneBefore <= 0)) return [...messages];
  const from = state.summary && state.summaryUpTo > 0 ? Math.min(state.summaryUpTo, messages.length) : 0;
  const view: ModelMessage[] = from > 0 ? [summaryMessage(state.summary!, state.summarizedUsers ?? 1)] : [];
  for (let i = from; i < messages.length; i++)
    view.push(i < state.pruneBefore ? prunedMessage(messages[i]!, chatId) : messages[i]!);
  return view;
}
