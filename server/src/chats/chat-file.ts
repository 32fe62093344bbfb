import {
  CHAT_MODES,
  chatModeOf,
  PROVIDER_KINDS,
  type Chat,
  type ChatSummary,
  type NoticeItem,
  type TranscriptItem
} from '@cellmate/protocol';
import type { ModelMessage } from 'ai';
import { z } from 'zod';
import { newItemId } from '../base/ids.js';
import type { CompactionState } from '../agent/context-view.js';

/**
 * Layout version of the snapshot file `<id>.json`. 2: the snapshot of a chat journal
 * (`seq` = the last journal record it includes, see `chat-journal.md`). 1 (releases before
 * the journal): the whole chat, rewritten on every change; still read as a snapshot at seq 0.
 */
export const CHAT_FILE_VERSION = 2;

/** How a chat got its title: `user` titles are never replaced by the first message. */
export type TitleSource = 'default' | 'auto' | 'user';

/** Everything the server keeps about one chat (one file under `.cellmate/chats/`). */
export interface ChatRecord {
  chat: Chat;
  titleSource: TitleSource;
  /** The model-side history (AI SDK messages) needed to continue the conversation. */
  messages: ModelMessage[];
  /** How the history is compacted for the model; absent: sent whole. */
  compaction?: CompactionState;
}

/** The JSON layout of a chat snapshot file. */
interface ChatFileJson {
  version: number;
  /** The last journal record included (absent in version 1). */
  seq?: number;
  chat: Chat;
  titleSource: TitleSource;
  messages: ModelMessage[];
  compaction?: CompactionState;
}

/** Chat ids are generated here and validated before any lookup (they name files). */
export const CHAT_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Text of the notice added to a chat that was mid-turn when the server stopped. */
export const INTERRUPTED_NOTICE = 'The companion server restarted; the turn was interrupted.';

const itemSchema = z.looseObject({
  id: z.string(),
  time: z.string(),
  turnId: z.string(),
  kind: z.enum(['user', 'assistant', 'tool', 'notice', 'question', 'usage', 'compaction'])
});

const fileSchema = z.looseObject({
  version: z.union([z.literal(1), z.literal(CHAT_FILE_VERSION)]),
  seq: z.number().int().nonnegative().optional(),
  chat: z.looseObject({
    id: z.string().regex(CHAT_ID_PATTERN),
    title: z.string(),
    mode: z.preprocess((value) => chatModeOf(value) ?? value, z.enum(CHAT_MODES)), // files written before the Agent mode had its own name say `chat`
    auto: z.boolean().optional(),
    createdAt: z.string(),
    updatedAt: z.string(),
    items: z.array(itemSchema),
    running: z.boolean(),
    // A choice that does not fit is dropped (the chat runs on the settings' model), not a reason to refuse the file.
    model: z
      .strictObject({
        provider: z.enum(PROVIDER_KINDS),
        model: z.string().min(1).max(200),
        baseUrl: z.string().max(2_000).optional()
      })
      .optional()
      .catch(undefined)
  }),
  titleSource: z.enum(['default', 'auto', 'user']),
  messages: z.array(z.looseObject({ role: z.enum(['system', 'user', 'assistant', 'tool']) }))
});

/** Serialises a record as a snapshot that includes journal records up to `seq`. Pure. */
export function serializeChat(record: ChatRecord, seq: number): string {
  const json: ChatFileJson = { version: CHAT_FILE_VERSION, seq, ...record };
  return `${JSON.stringify(json)}\n`;
}

/**
 * Parses a chat snapshot file (version 1 or 2); the id must match the file name.
 * @throws Error describing why the file is unusable (the caller keeps the file)
 */
export function parseChatFile(text: string, expectedId: string): ChatRecord & { seq: number } {
  const parsed = fileSchema.safeParse(JSON.parse(text));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`unexpected layout at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? '?'}`);
  }
  // The schema checks the file's layout and each item's kind; items and messages are what this program wrote, their full shapes are not re-checked.
  const data = parsed.data as unknown as ChatFileJson;
  if (data.chat.id !== expectedId) throw new Error(`chat id "${data.chat.id}" does not match the file name`);
  return {
    chat: data.chat,
    titleSource: data.titleSource,
    messages: data.messages,
    ...(isCompactionState(data.compaction) ? { compaction: data.compaction } : {}),
    seq: data.seq ?? 0
  };
}

/** Whether a value read from disk is a usable compaction state. */
export type { CompactionState };

export function isCompactionState(value: unknown): value is CompactionState {
  const v = value as Partial<CompactionState> | undefined;
  return (
    typeof v === 'object' &&
    v !== null &&
    Number.isInteger(v.summaryUpTo) &&
    Number.isInteger(v.pruneBefore) &&
    (v.summary === undefined || typeof v.summary === 'string')
  );
}

/**
 * The compaction state after the history was cut to `length` messages (retry, edit): marks
 * past the end come back to it, and a summary that covered cut messages is dropped. Pure.
 */
export function clampCompaction(state: CompactionState | undefined, length: number): CompactionState | undefined {
  if (!state) return undefined;
  if (state.summaryUpTo > length)
    return state.pruneBefore > 0 ? { summaryUpTo: 0, pruneBefore: Math.min(state.pruneBefore, length) } : undefined;
  return { ...state, pruneBefore: Math.min(state.pruneBefore, length) };
}

/**
 * Repairs a chat that was saved mid-turn (server stopped or crashed): streaming text
 * ends, running tool calls become `aborted`, a notice says what happened, and the chat
 * is no longer running. Returns whether anything changed. Mutates `record`.
 */
export function recoverInterruptedTurn(record: ChatRecord, now: string): boolean {
  const { chat } = record;
  if (!chat.running) return false;
  chat.items = chat.items.map((item): TranscriptItem => {
    if (item.kind === 'assistant' && item.streaming) return { ...item, streaming: false };
    if (item.kind === 'tool' && item.status === 'running') return { ...item, status: 'aborted' };
    if (item.kind === 'question' && item.state === 'pending') return { ...item, state: 'cancelled' };
    return item;
  });
  const turnId = chat.items.at(-1)?.turnId ?? 'recovered';
  const notice: NoticeItem = {
    kind: 'notice',
    id: newItemId(),
    time: now,
    turnId,
    level: 'warning',
    text: INTERRUPTED_NOTICE
  };
  chat.items.push(notice);
  chat.running = false;
  chat.updatedAt = now;
  return true;
}

/** The summary of a chat (what `chat/list` returns). Pure. */
export function summarize(chat: Chat): ChatSummary {
  return {
    id: chat.id,
    title: chat.title,
    mode: chat.mode,
    ...(chat.auto ? { auto: true } : {}),
    createdAt: chat.createdAt,
    updatedAt: chat.updatedAt
  };
}
