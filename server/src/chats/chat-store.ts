import type { ChatEvent, ChatSummary, TranscriptItem } from '@cellmate/protocol';
import type { ModelMessage } from 'ai';
import { mkdirSync, readdirSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../config/logger.js';
import { itemNotFound } from '../base/errors.js';
import { applyChatEvent, itemIndexOf } from './apply-event.js';
import {
  CHAT_ID_PATTERN,
  clampCompaction,
  recoverInterruptedTurn,
  summarize,
  type ChatRecord,
  type CompactionState,
  type TitleSource
} from './chat-file.js';
import type { ChatMeta } from './chat-journal.js';
import { DEFAULT_COMPACT_MIN_DEAD_BYTES, JournalFile, type JournalStats } from './journal-file.js';

/** Options of {@link ChatStore}. */
export interface ChatStoreOptions {
  /** Folder holding `<id>.json` snapshots and `<id>.jsonl` journals, e.g. `<workspace>/.cellmate/chats`. */
  directory: string;
  logger: Logger;
  /** Whole chats kept in memory (least recently used idle ones are dropped and reload from disk; running ones always stay). Default 3. */
  maxLoaded?: number;
  /** Superseded bytes a chat's files must hold before compaction is considered. Default 256 KiB. */
  compactMinDeadBytes?: number;
}

interface Entry {
  file: JournalFile;
  /** The chat, while in memory. */
  record: ChatRecord | undefined;
  summary: ChatSummary;
  running: boolean;
  lastUsed: number;
  /** Assistant items whose streamed text is not on disk yet (their final item-updated writes it). */
  streaming: Set<string>;
}

/**
 * Chats on disk as journals (`chat-journal.md`): every change is one appended record,
 * written before the change is announced; nothing is rewritten on the hot path. Summaries
 * of every chat stay in memory; whole chats only for running and recently used ones.
 * Mutate chats only through this class (it journals what it applies).
 */
export class ChatStore {
  private readonly entries = new Map<string, Entry>();
  private readonly maxLoaded: number;
  private readonly compactMinDeadBytes: number;
  private clock = 0;
  /** Byte counters of the chat files. */
  readonly stats: JournalStats = { bytesWritten: 0, records: 0, compactions: 0 };

  private constructor(private readonly options: ChatStoreOptions) {
    this.maxLoaded = Math.max(1, options.maxLoaded ?? 3);
    this.compactMinDeadBytes = options.compactMinDeadBytes ?? DEFAULT_COMPACT_MIN_DEAD_BYTES;
  }

  /** Creates the folder if needed and reads every chat in it (old `version: 1` files included). */
  static async open(options: ChatStoreOptions): Promise<ChatStore> {
    const store = new ChatStore(options);
    store.loadAll();
    return store;
  }

  private loadAll(): void {
    const { directory, logger } = this.options;
    mkdirSync(directory, { recursive: true, mode: 0o700 });
    const ids = new Set<string>();
    for (const name of readdirSync(directory).sort()) {
      if (name.endsWith('.tmp')) {
        // A compaction that was cut short; the files it would have replaced are intact.
        unlinkSync(path.join(directory, name));
        continue;
      }
      const match = /^(.*)\.(json|jsonl)$/.exec(name);
      if (!match) continue;
      if (!CHAT_ID_PATTERN.test(match[1]!)) {
        logger.warn(`skipping ${path.join(directory, name)}: not a chat file name`);
        continue;
      }
      ids.add(match[1]!);
    }
    for (const id of ids) {
      const record = this.read(id);
      if (record) this.evict(id);
    }
  }

  /** Reads one chat from disk into its entry; undefined when unreadable or deleted. */
  private read(id: string): ChatRecord | undefined {
    let loaded: ReturnType<typeof JournalFile.load>;
    try {
      loaded = JournalFile.load(this.options.directory, id, this.options.logger, this.stats, this.compactMinDeadBytes);
    } catch (error) {
      this.options.logger.error(
        `skipping corrupt chat ${id} in ${this.options.directory} (files left untouched): ${(error as Error).message}`
      );
      return undefined;
    }
    if (!loaded) return undefined;
    const { record, file } = loaded;
    const entry = this.entryOf(file, record);
    this.entries.set(id, entry);
    const before = new Map(record.chat.items.map((item) => [item.id, item]));
    if (recoverInterruptedTurn(record, new Date().toISOString())) {
      this.options.logger.warn(`chat ${id} was mid-turn when the server stopped; marked interrupted`);
      for (const item of record.chat.items) if (before.get(item.id) !== item) this.writeItem(entry, item);
      this.writeMeta(entry);
    }
    return record;
  }

  /** Summaries of every chat (unsorted). */
  summaries(): ChatSummary[] {
    return [...this.entries.values()].map((e) => (e.record ? summarize(e.record.chat) : e.summary));
  }

  /** The record for an id (read from disk if it is not in memory). Live object: mutate only through this store. */
  get(id: string): ChatRecord | undefined {
    if (typeof id !== 'string' || !CHAT_ID_PATTERN.test(id)) return undefined;
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    entry.lastUsed = ++this.clock;
    if (entry.record) return entry.record;
    const record = this.read(id);
    this.evict(id);
    return record;
  }

  /** Adds a new chat and writes its first record. */
  create(record: ChatRecord): void {
    const id = record.chat.id;
    if (!CHAT_ID_PATTERN.test(id)) throw new Error(`invalid chat id ${id}`);
    const file = JournalFile.create(
      this.options.directory,
      id,
      this.options.logger,
      this.stats,
      this.compactMinDeadBytes
    );
    const entry = this.entryOf(file, record);
    this.entries.set(id, entry);
    this.writeMeta(entry);
    for (const item of record.chat.items) this.writeItem(entry, item);
    if (record.messages.length) entry.file.append({ t: 'messages', add: record.messages }, record.chat.updatedAt);
    if (record.compaction) entry.file.append({ t: 'compaction', state: record.compaction }, record.chat.updatedAt);
    if (record.chat.context) entry.file.append({ t: 'context', context: record.chat.context }, record.chat.updatedAt);
    this.evict(id);
  }

  /**
   * Applies a transcript event and journals it: completed or updated items as whole
   * items, removals, and turn state. Streamed text (`text-delta`) is applied in memory
   * only; the assistant item's final `item-updated` writes it.
   */
  applyEvent(id: string, event: ChatEvent): void {
    const entry = this.loadedEntry(id);
    if (!entry || event.type === 'tool-progress' || event.type === 'worker-updated') return;
    const chat = entry.record!.chat;
    if (event.type === 'text-delta') {
      applyChatEvent(chat, event);
      entry.streaming.add(event.itemId);
      return;
    }
    if (event.type === 'item-updated' && itemIndexOf(chat, event.item.id) < 0) return;
    chat.updatedAt = new Date().toISOString();
    if (event.type === 'items-removed') {
      const present = new Set(chat.items.map((i) => i.id));
      const ids = event.itemIds.filter((i) => present.has(i));
      const gone = new Set(ids);
      const removed = chat.items.filter((i) => gone.has(i.id));
      applyChatEvent(chat, event);
      if (!ids.length) return;
      const bytes = entry.file.append({ t: 'remove', ids }, chat.updatedAt);
      entry.file.noteDead(bytes + removed.reduce((n, item) => n + JSON.stringify(item).length, 0), ids);
      this.maybeCompact(entry);
      return;
    }
    applyChatEvent(chat, event);
    if (event.type === 'context') {
      entry.file.noteItem('\u0000context', entry.file.append({ t: 'context', context: event.context }, chat.updatedAt));
      return;
    }
    if (
      event.type === 'turn-started' ||
      event.type === 'turn-ended' ||
      event.type === 'mode-changed' ||
      event.type === 'auto-changed' ||
      event.type === 'model-changed'
    ) {
      entry.running = chat.running;
      this.writeMeta(entry);
      if (event.type === 'turn-ended') this.maybeCompact(entry);
      return;
    }
    entry.streaming.delete(event.item.id);
    this.writeItem(entry, event.item);
  }

  /** Changes the title (and how it was set); journals the chat's metadata. */
  setTitle(id: string, title: string, titleSource: TitleSource): void {
    const entry = this.loadedEntry(id);
    if (!entry) return;
    entry.record!.chat.title = title;
    entry.record!.titleSource = titleSource;
    entry.record!.chat.updatedAt = new Date().toISOString();
    this.writeMeta(entry);
  }

  /** Appends model messages (the history the model continues from). */
  appendMessages(id: string, messages: ModelMessage[]): void {
    const entry = this.loadedEntry(id);
    if (!entry || !messages.length) return;
    entry.record!.messages.push(...messages);
    entry.record!.chat.updatedAt = new Date().toISOString();
    entry.file.append({ t: 'messages', add: messages }, entry.record!.chat.updatedAt);
  }

  /** Drops model messages from index `length` on (retry and edit). */
  truncateMessages(id: string, length: number): void {
    const entry = this.loadedEntry(id);
    if (!entry || length >= entry.record!.messages.length) return;
    const cut = entry.record!.messages.splice(length);
    const bytes = entry.file.append({ t: 'cut', length }, entry.record!.chat.updatedAt);
    entry.file.noteDead(bytes + JSON.stringify(cut).length);
    const compaction = clampCompaction(entry.record!.compaction, length);
    if (compaction) entry.record!.compaction = compaction;
    else delete entry.record!.compaction;
  }

  /** Sets what the model is sent in place of the whole history (CTX-3); journaled, the latest wins. */
  setCompaction(id: string, state: CompactionState): void {
    const entry = this.loadedEntry(id);
    if (!entry) return;
    entry.record!.compaction = { ...state };
    entry.file.noteItem(
      '\u0000compaction',
      entry.file.append({ t: 'compaction', state: entry.record!.compaction }, entry.record!.chat.updatedAt)
    );
  }

  /**
   * A page of the transcript: up to `limit` items before the item `before` (or the
   * latest ones), and how many older items remain.
   * @throws CellmateError ItemNotFound when `before` is not an item of the chat
   */
  page(id: string, limit: number, before?: string): { items: TranscriptItem[]; olderCount: number } {
    const chat = this.get(id)?.chat;
    const items = chat?.items ?? [];
    let end = items.length;
    if (before !== undefined) {
      end = chat ? itemIndexOf(chat, before) : -1;
      if (end < 0) throw itemNotFound(id, before);
    }
    const start = Math.max(0, end - Math.max(0, limit));
    return { items: structuredClone(items.slice(start, end)), olderCount: start };
  }

  /** Removes a chat and its files. */
  async delete(id: string): Promise<boolean> {
    const entry = typeof id === 'string' ? this.entries.get(id) : undefined;
    if (!entry) return false;
    this.entries.delete(id);
    await entry.file.delete();
    return true;
  }

  /** Writes the streamed text of items still streaming and waits for running compactions. */
  async flush(): Promise<void> {
    for (const entry of this.entries.values()) {
      for (const itemId of entry.streaming) {
        const chat = entry.record?.chat;
        const item = chat?.items[itemIndexOf(chat, itemId)];
        if (item) this.writeItem(entry, item);
      }
      entry.streaming.clear();
    }
    await Promise.all([...this.entries.values()].map((e) => e.file.settled()));
  }

  /** Flushes and closes every journal. */
  async dispose(): Promise<void> {
    await this.flush();
    for (const entry of this.entries.values()) entry.file.close();
  }

  /** A chat now in memory: its journal, its record, and the summary and use stamp derived from them. */
  private entryOf(file: JournalFile, record: ChatRecord): Entry {
    return {
      file,
      record,
      summary: summarize(record.chat),
      running: record.chat.running,
      lastUsed: ++this.clock,
      streaming: new Set()
    };
  }

  private loadedEntry(id: string): Entry | undefined {
    return this.get(id) ? this.entries.get(id) : undefined;
  }

  private writeItem(entry: Entry, item: TranscriptItem): void {
    const bytes = entry.file.append({ t: 'item', item }, entry.record!.chat.updatedAt);
    entry.file.noteItem(item.id, bytes);
  }

  private writeMeta(entry: Entry): void {
    const { chat, titleSource } = entry.record!;
    const meta: ChatMeta = {
      id: chat.id,
      title: chat.title,
      mode: chat.mode,
      ...(chat.auto !== undefined ? { auto: chat.auto } : {}),
      createdAt: chat.createdAt,
      running: chat.running,
      ...(chat.model ? { model: chat.model } : {})
    };
    const bytes = entry.file.append({ t: 'chat', chat: meta, titleSource }, chat.updatedAt);
    entry.file.noteItem('\u0000chat', bytes);
  }

  private maybeCompact(entry: Entry): void {
    if (entry.record && !entry.running && entry.file.shouldCompact()) void entry.file.compact(entry.record);
  }

  /** Drops whole chats from memory beyond the limit (never running or compacting ones, nor `keep`). */
  private evict(keep: string): void {
    const loaded = [...this.entries.entries()].filter(([, e]) => e.record);
    if (loaded.length <= this.maxLoaded) return;
    const candidates = loaded
      .filter(([id, e]) => id !== keep && !e.running && e.streaming.size === 0 && !e.file.busy)
      .sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    for (const [, entry] of candidates.slice(0, loaded.length - this.maxLoaded)) {
      entry.summary = summarize(entry.record!.chat);
      entry.record = undefined;
      entry.file.close();
    }
  }
}
