/**
 * One durable JSON document per chat in a folder: `<directory>/<chatId>.json` holding
 * `{"version": 1, "<key>": <value>}` — what plans (MODE-3), orchestrations (MODE-5) and
 * reviews (MODE-4) keep so a pending approval, a finding or a verdict survives a companion
 * restart or kill. A chat's document is read once and cached; it is checked against the
 * store's schema, and an unreadable one is set aside as `<chatId>.json.unreadable` (the chat
 * starts afresh and `onProblem` says so); every change is written whole through a temp file
 * and a rename before the call that made it returns.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

const CHAT_ID = /^[A-Za-z0-9_-]{1,64}$/;

export interface ChatFilesOptions<T> {
  directory: string;
  /** The document's one field (`plans`, `orchestrations`, `review`). */
  key: string;
  /** What the field holds, as stored. */
  schema: z.ZodType;
  /** What a chat with no (readable) document holds. */
  empty(): T;
  /** The stored value as the store uses it: drops records of another chat, mends what a restart left. */
  accept(chatId: string, stored: unknown): T;
  /** Says what went wrong with a document (it was set aside), for the log. */
  onProblem?(message: string): void;
  /** What the store keeps, for that message (`the plan file of chat …`). */
  noun: string;
}

/** The per-chat documents of one store (see the module doc). */
export class ChatFiles<T> {
  private readonly cache = new Map<string, T>();
  private readonly schema: z.ZodType;

  constructor(private readonly options: ChatFilesOptions<T>) {
    this.schema = z.object({ version: z.literal(1), [options.key]: options.schema });
  }

  /** The chat's value, the cached one itself (change it, then {@link save} it). @throws RangeError for a malformed chat id */
  get(chatId: string): T {
    checkChatId(chatId);
    let value = this.cache.get(chatId);
    if (value === undefined) {
      value = this.load(chatId);
      this.cache.set(chatId, value);
    }
    return value;
  }

  /** Writes the chat's value (temp file + rename) and caches it. */
  save(chatId: string, value: T): void {
    checkChatId(chatId);
    mkdirSync(this.options.directory, { recursive: true, mode: 0o700 });
    const target = this.file(chatId);
    const temp = `${target}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify({ version: 1, [this.options.key]: value })}\n`, {
      encoding: 'utf8',
      mode: 0o600
    });
    renameSync(temp, target);
    this.cache.set(chatId, value);
  }

  /** Forgets a deleted chat (its file included). */
  remove(chatId: string): void {
    this.cache.delete(chatId);
    if (CHAT_ID.test(chatId)) rmSync(this.file(chatId), { force: true });
  }

  private load(chatId: string): T {
    let text: string;
    try {
      text = readFileSync(this.file(chatId), 'utf8');
    } catch {
      return this.options.empty();
    }
    try {
      const parsed = this.schema.parse(JSON.parse(text)) as Record<string, unknown>;
      return this.options.accept(chatId, parsed[this.options.key]);
    } catch (error) {
      // Keep the unreadable file for inspection (renamed aside); start afresh.
      const aside = `${this.file(chatId)}.unreadable`;
      try {
        renameSync(this.file(chatId), aside);
      } catch {
        // already gone: nothing to keep
      }
      this.options.onProblem?.(
        `the ${this.options.noun} file of chat ${chatId} was unreadable (${error instanceof Error ? error.message : String(error)}); kept as ${aside}`
      );
      return this.options.empty();
    }
  }

  private file(chatId: string): string {
    return path.join(this.options.directory, `${chatId}.json`);
  }
}

function checkChatId(chatId: string): void {
  if (!CHAT_ID.test(chatId)) throw new RangeError(`Not a chat id: ${JSON.stringify(chatId)}.`);
}
