/**
 * Shape checks for what arrives on the wire. The server is trusted to be well-meaning,
 * not to be the same version as the pane: anything that does not fit is reported and
 * dropped, never rendered half-way. Pure: runs in Node.
 */
import {
  chatModeOf,
  PROVIDER_KINDS,
  type TierModel,
  type Chat,
  type ChatEvent,
  type ChatSummary,
  type ContextStatus,
  type Notifications,
  type TokenUsage,
  type TranscriptItem,
  type WorkerSummary
} from '@cellmate/protocol';

/** True when `value` looks like a transcript item the pane can render. */
export function isTranscriptItem(value: unknown): value is TranscriptItem {
  if (!isRecord(value) || typeof value.id !== 'string' || typeof value.turnId !== 'string') {
    return false;
  }
  switch (value.kind) {
    case 'user':
      return typeof value.text === 'string';
    case 'assistant':
      return typeof value.text === 'string' && typeof value.streaming === 'boolean';
    case 'tool':
      return (
        typeof value.name === 'string' &&
        typeof value.callId === 'string' &&
        ['running', 'ok', 'withheld', 'error', 'aborted'].includes(value.status as string)
      );
    case 'notice':
      return typeof value.text === 'string' && ['info', 'warning', 'error'].includes(value.level as string);
    case 'question':
      return (
        typeof value.questionId === 'string' &&
        typeof value.question === 'string' &&
        ['ask', 'approval'].includes(value.type as string) &&
        ['pending', 'answered', 'skipped', 'expired', 'cancelled'].includes(value.state as string) &&
        Array.isArray(value.options) &&
        (value.options as unknown[]).every((o) => isRecord(o) && typeof o.label === 'string')
      );
    case 'usage':
      return (
        typeof value.model === 'string' &&
        isTokenUsage(value.usage) &&
        isCount(value.requests) &&
        (value.costUsd === undefined || isCount(value.costUsd))
      );
    case 'compaction':
      return (
        ['auto', 'manual', 'overflow'].includes(value.trigger as string) &&
        isCount(value.prunedOutputs) &&
        isCount(value.summarizedMessages) &&
        isCount(value.tokensBefore) &&
        isCount(value.tokensAfter) &&
        (value.summary === undefined || typeof value.summary === 'string')
      );
    default:
      return false;
  }
}

/** True when `value` is a chat event this pane understands. */
export function isChatEvent(value: unknown): value is ChatEvent {
  if (!isRecord(value)) {
    return false;
  }
  switch (value.type) {
    case 'turn-started':
      return typeof value.turnId === 'string';
    case 'item-added':
    case 'item-updated':
      return isTranscriptItem(value.item);
    case 'text-delta':
      return typeof value.itemId === 'string' && typeof value.delta === 'string';
    case 'turn-ended':
      return typeof value.turnId === 'string' && typeof value.reason === 'string';
    case 'tool-progress':
      return (
        typeof value.itemId === 'string' &&
        (value.lastLine === undefined || typeof value.lastLine === 'string') &&
        (value.elapsedMs === undefined || typeof value.elapsedMs === 'number')
      );
    case 'items-removed':
      return Array.isArray(value.itemIds) && (value.itemIds as unknown[]).every((id) => typeof id === 'string');
    case 'mode-changed':
      return chatModeOf(value.mode) !== undefined;
    case 'auto-changed':
      return typeof value.auto === 'boolean';
    case 'model-changed':
      return value.model === null || isTierModel(value.model);
    case 'worker-updated':
      return isWorkerSummary(value.worker);
    case 'context':
      return isContextStatus(value.context);
    default:
      return false;
  }
}

/**
 * Checks a `chat/get` or `chat/create` result. Returns the chat with only the items the
 * pane can render (a newer server may send kinds this pane does not know), and how many
 * were dropped; null when it is not a chat at all.
 */
export function sanitizeChat(value: unknown): { chat: Chat; dropped: number } | null {
  if (!isRecord(value) || !isChatSummary(value) || !Array.isArray(value.items)) {
    return null;
  }
  const raw: unknown[] = value.items;
  const items = raw.filter(isTranscriptItem);
  const { context, model, running, olderCount, items: _unchecked, ...summary } = value;
  const chat: Chat = {
    ...summary,
    items,
    running: running === true,
    ...(typeof olderCount === 'number' ? { olderCount } : {}),
    // A context status this pane cannot read is left out: the meter waits for the next `context` event.
    ...(isContextStatus(context) ? { context } : {}),
    ...(isTierModel(model) ? { model } : {})
  };
  return { chat, dropped: raw.length - items.length };
}

/** True when `value` is a provider's token counts (CTX-1). */
export function isTokenUsage(value: unknown): value is TokenUsage {
  return (
    isRecord(value) &&
    isCount(value.input) &&
    isCount(value.cachedInput) &&
    isCount(value.cacheWrite) &&
    isCount(value.output) &&
    (value.reasoning === undefined || isCount(value.reasoning))
  );
}

/** True when `value` is the context meter's figures (CTX-1). */
export function isContextStatus(value: unknown): value is ContextStatus {
  return (
    isRecord(value) &&
    typeof value.model === 'string' &&
    isCount(value.usedTokens) &&
    typeof value.estimated === 'boolean' &&
    (value.window === undefined || (isCount(value.window) && value.window > 0)) &&
    ['settings', 'server', 'catalog', 'unknown'].includes(value.windowSource as string) &&
    isCount(value.reservedOutput) &&
    (value.compactAtTokens === undefined || isCount(value.compactAtTokens)) &&
    isTokenUsage(value.total) &&
    (value.costUsd === undefined || isCount(value.costUsd))
  );
}

/** True when `value` looks like a background worker's summary. */
export function isWorkerSummary(value: unknown): value is WorkerSummary {
  return (
    isRecord(value) &&
    typeof value.id === 'string' &&
    typeof value.chatId === 'string' &&
    typeof value.label === 'string' &&
    typeof value.state === 'string' &&
    typeof value.tier === 'string' &&
    typeof value.elapsedMs === 'number'
  );
}

/** `chat/event`'s params: a chat id and an event this pane understands. */
export function isChatEventParams(value: unknown): value is Notifications['chat/event'] {
  return isRecord(value) && typeof value.chatId === 'string' && isChatEvent(value.event);
}

/** `chat/listChanged`'s params: every entry a chat summary. */
export function isChatListParams(value: unknown): value is Notifications['chat/listChanged'] {
  return isRecord(value) && Array.isArray(value.chats) && value.chats.every(isChatSummary);
}

/** `inline/delta`'s params. */
export function isInlineDelta(value: unknown): value is Notifications['inline/delta'] {
  return isRecord(value) && typeof value.requestId === 'string' && typeof value.text === 'string';
}

/** True when `value` looks like a chat summary. */
export function isChatSummary(value: unknown): value is ChatSummary {
  return isRecord(value) && typeof value.id === 'string' && typeof value.title === 'string';
}

/** A finite, non-negative number (token counts, dollars). */
function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/** A JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True when `value` names a tier's or a chat's model (`model-changed`, `chat/get`'s `model`). */
export function isTierModel(value: unknown): value is TierModel {
  return (
    isRecord(value) &&
    typeof value.provider === 'string' &&
    (PROVIDER_KINDS as readonly string[]).includes(value.provider) &&
    typeof value.model === 'string' &&
    (value.baseUrl === undefined || typeof value.baseUrl === 'string')
  );
}
