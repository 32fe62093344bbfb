import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../config/logger.js';
import { CHAT_ID_PATTERN, parseChatFile, recoverInterruptedTurn, serializeChat, type ChatRecord } from './chat-file.js';

/** Options of {@link ChatStore}. */
export interface ChatStoreOptions {
  /** Folder holding `<id>.json` files, e.g. `<workspace>/.cellmate/chats`. */
  directory: string;
  logger: Logger;
  /** Delay before a debounced save (while text streams). Default 250 ms. */
  debounceMs?: number;
}

/**
 * Chat records in memory, persisted one JSON file per chat with atomic writes
 * (temporary file + rename). Saves of one chat are serialised so an older snapshot never
 * overwrites a newer one. Corrupt files are skipped with a log line and left on disk.
 */
export class ChatStore {
  private readonly records = new Map<string, ChatRecord>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly writes = new Map<string, Promise<void>>();
  private readonly debounceMs: number;
  private disposed = false;

  private constructor(private readonly options: ChatStoreOptions) {
    this.debounceMs = options.debounceMs ?? 250;
  }

  /** Creates the folder if needed and loads every readable chat file in it. */
  static async open(options: ChatStoreOptions): Promise<ChatStore> {
    const store = new ChatStore(options);
    await store.load();
    return store;
  }

  private async load(): Promise<void> {
    const { directory, logger } = this.options;
    await mkdir(directory, { recursive: true, mode: 0o700 });
    const now = new Date().toISOString();
    for (const name of (await readdir(directory)).sort()) {
      if (!name.endsWith('.json')) continue;
      const id = name.slice(0, -'.json'.length);
      const file = path.join(directory, name);
      if (!CHAT_ID_PATTERN.test(id)) {
        logger.warn(`skipping ${file}: not a chat file name`);
        continue;
      }
      let record: ChatRecord;
      try {
        record = parseChatFile(await readFile(file, 'utf8'), id);
      } catch (error) {
        logger.error(`skipping corrupt chat file ${file} (left untouched): ${(error as Error).message}`);
        continue;
      }
      this.records.set(id, record);
      if (recoverInterruptedTurn(record, now)) {
        logger.warn(`chat ${id} was mid-turn when the server stopped; marked interrupted`);
        await this.saveNow(id);
      }
    }
  }

  /** All records (live objects; mutate only through the chat service). */
  all(): ChatRecord[] {
    return [...this.records.values()];
  }

  /** The record for an id, if any. */
  get(id: string): ChatRecord | undefined {
    return CHAT_ID_PATTERN.test(id) ? this.records.get(id) : undefined;
  }

  /** Adds a new record and writes it at once. */
  add(record: ChatRecord): void {
    if (!CHAT_ID_PATTERN.test(record.chat.id)) throw new Error(`invalid chat id ${record.chat.id}`);
    this.records.set(record.chat.id, record);
    this.saveNow(record.chat.id);
  }

  /** Removes a record and its file. */
  async delete(id: string): Promise<boolean> {
    const record = this.get(id);
    if (!record) return false;
    this.records.delete(id);
    this.cancelTimer(id);
    await this.writes.get(id);
    await unlink(this.fileOf(id)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    return true;
  }

  /** Saves soon (coalescing bursts such as streamed text). */
  scheduleSave(id: string): void {
    if (this.disposed || this.timers.has(id)) return;
    this.timers.set(
      id,
      setTimeout(() => {
        this.timers.delete(id);
        this.saveNow(id);
      }, this.debounceMs)
    );
  }

  /** Saves the current snapshot now (queued behind earlier writes of the same chat). */
  saveNow(id: string): Promise<void> {
    this.cancelTimer(id);
    const record = this.records.get(id);
    if (!record) return Promise.resolve();
    const text = serializeChat(record);
    const previous = this.writes.get(id) ?? Promise.resolve();
    const next = previous
      .then(() => this.writeAtomic(this.fileOf(id), text))
      .catch((error: unknown) => this.options.logger.error(`could not save chat ${id}`, error));
    this.writes.set(id, next);
    void next.finally(() => {
      if (this.writes.get(id) === next) this.writes.delete(id);
    });
    return next;
  }

  /** Writes every pending change and waits for all writes. */
  async flush(): Promise<void> {
    for (const id of [...this.timers.keys()]) this.saveNow(id);
    await Promise.all([...this.writes.values()]);
  }

  /** Flushes and stops scheduling saves. */
  async dispose(): Promise<void> {
    await this.flush();
    this.disposed = true;
  }

  private fileOf(id: string): string {
    return path.join(this.options.directory, `${id}.json`);
  }

  private cancelTimer(id: string): void {
    const timer = this.timers.get(id);
    if (timer) clearTimeout(timer);
    this.timers.delete(id);
  }

  private async writeAtomic(file: string, text: string): Promise<void> {
    const tmp = `${file}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`;
    try {
      await writeFile(tmp, text, { encoding: 'utf8', mode: 0o600 });
      await rename(tmp, file);
    } catch (error) {
      await unlink(tmp).catch(() => undefined);
      throw error;
    }
  }
}
