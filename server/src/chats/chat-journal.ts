import { chatModeOf, type ChatMode, type ContextStatus, type TierModel, type TranscriptItem } from '@cellmate/protocol';
import type { ModelMessage } from 'ai';
import {
  clampCompaction,
  isCompactionState,
  type ChatRecord,
  type CompactionState,
  type TitleSource
} from './chat-file.js';

/**
 * One line of a chat journal (`.cellmate/chats/<id>.jsonl`; the format is described in
 * `chat-journal.md`). `s` is the record's sequence number (1, 2, … per chat, never reused
 * across compactions); `u` is the chat's `updatedAt` after the record.
 */
export type JournalRecord =
  | { s: number; u: string; t: 'chat'; chat: ChatMeta; titleSource: TitleSource }
  | { s: number; u: string; t: 'item'; item: TranscriptItem }
  | { s: number; u: string; t: 'remove'; ids: string[] }
  | { s: number; u: string; t: 'messages'; add: ModelMessage[] }
  | { s: number; u: string; t: 'cut'; length: number }
  /** The context meter's latest figures (the latest record wins). */
  | { s: number; u: string; t: 'context'; context: ContextStatus }
  /** What the model is sent in place of the whole history (CTX-3; the latest record wins). */
  | { s: number; u: string; t: 'compaction'; state: CompactionState }
  | { s: number; u: string; t: 'deleted' };

/** A journal record before the store numbers and stamps it. */
export type JournalEntry = JournalRecord extends infer R
  ? R extends JournalRecord
    ? Omit<R, 's' | 'u'>
    : never
  : never;

/** The chat fields a `chat` record carries (everything but the items). */
export interface ChatMeta {
  id: string;
  title: string;
  /** The chat's mode (MODE-1): a `chat` record carries it, so a switch survives a restart. */
  mode: ChatMode;
  /** Auto approval (SIDE-1); written once it was ever switched, so switching it off survives a restart too. */
  auto?: boolean;
  /** The model the person picked for the chat (the header's picker); absent: the settings' main tier. */
  model?: TierModel;
  createdAt: string;
  running: boolean;
}

/** What replaying a journal found. */
export interface ReplayResult {
  /** The chat after every applied record; undefined when nothing defined it (no base, no `chat` record). */
  record: ChatRecord | undefined;
  /** The last applied sequence number (the base's when none applied). */
  seq: number;
  /** True when the journal ends in a `deleted` record (a deletion was cut short). */
  deleted: boolean;
  /** Byte length of the well-formed prefix (every complete line); the rest is a torn tail. */
  goodBytes: number;
  /** Bytes after `goodBytes` (a last line without its newline: the write was cut). */
  tornBytes: number;
  /** 1-based numbers of complete lines that did not parse (skipped). */
  badLines: number[];
  /** Bytes of journal records that later records superseded (compaction heuristics). */
  deadBytes: number;
  /** For each item whose latest record is in this journal: that record's byte length. */
  itemBytes: Map<string, number>;
}

/** Encodes one record as its journal line (JSON + `\n`). Pure. */
export function encodeRecord(record: JournalRecord): string {
  return `${JSON.stringify(record)}\n`;
}

/** Byte length of a string in UTF-8. */
export function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * Replays journal `bytes` on top of `base` (the snapshot, whose last sequence number is
 * `baseSeq`): records with `s <= baseSeq` are already in the snapshot and are skipped.
 * A last line without its newline is a torn write and is not applied; a complete line that
 * does not parse is skipped and reported. Mutates `base`.
 */
export function replayJournal(base: ChatRecord | undefined, baseSeq: number, bytes: Buffer): ReplayResult {
  let record = base;
  let seq = baseSeq;
  let deleted = false;
  let deadBytes = 0;
  let metaBytes = 0;
  let contextBytes = 0;
  let compactionBytes = 0;
  const badLines: number[] = [];
  const itemBytes = new Map<string, number>();
  let index = record ? indexItems(record.chat.items) : new Map<string, number>();
  let start = 0;
  let line = 0;
  for (;;) {
    const end = bytes.indexOf(0x0a, start);
    if (end < 0) break;
    line++;
    const size = end + 1 - start;
    const text = bytes.toString('utf8', start, end);
    start = end + 1;
    let parsed: JournalRecord;
    try {
      parsed = JSON.parse(text) as JournalRecord;
      if (typeof parsed !== 'object' || parsed === null || typeof parsed.s !== 'number' || typeof parsed.t !== 'string')
        throw new Error('not a record');
    } catch {
      badLines.push(line);
      deadBytes += size;
      continue;
    }
    if (parsed.s <= seq) {
      deadBytes += size; // already in the snapshot (a compaction was cut short)
      continue;
    }
    seq = parsed.s;
    if (parsed.t === 'deleted') {
      deleted = true;
      continue;
    }
    if (parsed.t === 'chat') {
      deadBytes += metaBytes;
      metaBytes = size;
      // Journals written before the Agent mode had its own name say `chat`.
      const mode = chatModeOf(parsed.chat.mode);
      if (mode) parsed.chat.mode = mode;
      if (record) {
        Object.assign(record.chat, parsed.chat, { updatedAt: parsed.u });
        if (!parsed.chat.model) delete record.chat.model; // the record carries the whole metadata: no model = the settings' again
        record.titleSource = parsed.titleSource;
      } else {
        record = {
          chat: { ...parsed.chat, updatedAt: parsed.u, items: [] },
          titleSource: parsed.titleSource,
          messages: []
        };
        index = new Map();
      }
      continue;
    }
    if (!record) {
      badLines.push(line); // a record before the chat exists: cannot be applied
      deadBytes += size;
      continue;
    }
    record.chat.updatedAt = parsed.u;
    switch (parsed.t) {
      case 'item': {
        const at = index.get(parsed.item.id);
        if (at === undefined) {
          index.set(parsed.item.id, record.chat.items.length);
          record.chat.items.push(parsed.item);
        } else record.chat.items[at] = parsed.item;
        deadBytes += itemBytes.get(parsed.item.id) ?? 0;
        itemBytes.set(parsed.item.id, size);
        break;
      }
      case 'remove': {
        const gone = new Set(parsed.ids);
        record.chat.items = record.chat.items.filter((item) => !gone.has(item.id));
        index = indexItems(record.chat.items);
        for (const id of parsed.ids) {
          deadBytes += itemBytes.get(id) ?? 0;
          itemBytes.delete(id);
        }
        deadBytes += size;
        break;
      }
      case 'messages':
        record.messages.push(...parsed.add);
        break;
      case 'cut': {
        record.messages.splice(parsed.length);
        const compaction = clampCompaction(record.compaction, record.messages.length);
        if (compaction) record.compaction = compaction;
        else delete record.compaction;
        deadBytes += size;
        break;
      }
      case 'context':
        record.chat.context = parsed.context;
        deadBytes += contextBytes;
        contextBytes = size;
        break;
      case 'compaction':
        if (!isCompactionState(parsed.state)) {
          badLines.push(line);
          deadBytes += size;
          break;
        }
        record.compaction = parsed.state;
        deadBytes += compactionBytes;
        compactionBytes = size;
        break;
      default:
        badLines.push(line); // a record type this version does not know
        deadBytes += size;
    }
  }
  return { record, seq, deleted, goodBytes: start, tornBytes: bytes.length - start, badLines, deadBytes, itemBytes };
}

function indexItems(items: readonly TranscriptItem[]): Map<string, number> {
  const index = new Map<string, number>();
  items.forEach((item, i) => index.set(item.id, i));
  return index;
}
