import { randomUUID } from 'node:crypto';
import {
  closeSync,
  ftruncateSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  unlinkSync,
  writeFileSync,
  writeSync
} from 'node:fs';
import { rename, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../config/logger.js';
import { parseChatFile, serializeChat, type ChatRecord } from './chat-file.js';
import { byteLength, encodeRecord, replayJournal, type JournalEntry, type JournalRecord } from './chat-journal.js';

/** Byte counters of every chat's files (the soak benchmark and tests read them). */
export interface JournalStats {
  /** Bytes written to chat files: journal records, snapshots and journal rewrites. */
  bytesWritten: number;
  records: number;
  compactions: number;
}

/** When a chat's files are rewritten: more than half of them is superseded records, and at least this much. */
export const DEFAULT_COMPACT_MIN_DEAD_BYTES = 256 * 1024;

/**
 * The two files of one chat: the snapshot `<id>.json` (optional) and the journal
 * `<id>.jsonl`, appended one record per `write(2)` call, synchronously, before the change
 * is announced to any pane (write-through to the OS, no fsync: a killed companion loses
 * nothing it announced; a machine crash may lose the page cache's last seconds).
 */
export class JournalFile {
  private fd: number | undefined;
  private seq: number;
  private snapshotBytes: number;
  private journalBytes: number;
  private deadBytes: number;
  private itemBytes: Map<string, number>;
  private compacting: Promise<void> | undefined;
  private deleted = false;
  private failed = false;

  private constructor(
    private readonly directory: string,
    readonly id: string,
    private readonly logger: Logger,
    private readonly stats: JournalStats,
    private readonly compactMinDeadBytes: number,
    init: {
      seq: number;
      snapshotBytes: number;
      journalBytes: number;
      deadBytes: number;
      itemBytes: Map<string, number>;
    }
  ) {
    this.seq = init.seq;
    this.snapshotBytes = init.snapshotBytes;
    this.journalBytes = init.journalBytes;
    this.deadBytes = init.deadBytes;
    this.itemBytes = init.itemBytes;
  }

  /** A brand-new chat (no files yet; the first append creates the journal). */
  static create(
    directory: string,
    id: string,
    logger: Logger,
    stats: JournalStats,
    compactMinDeadBytes: number
  ): JournalFile {
    return new JournalFile(directory, id, logger, stats, compactMinDeadBytes, {
      seq: 0,
      snapshotBytes: 0,
      journalBytes: 0,
      deadBytes: 0,
      itemBytes: new Map()
    });
  }

  /**
   * Reads a chat: the snapshot (any version), then the journal records after it. A torn
   * last line is dropped (and cut off the file) with a log line. Returns undefined for a
   * chat whose deletion was cut short (its files are removed now).
   * @throws Error when neither file yields a chat (the caller leaves the files alone)
   */
  static load(
    directory: string,
    id: string,
    logger: Logger,
    stats: JournalStats,
    compactMinDeadBytes: number
  ): { record: ChatRecord; file: JournalFile } | undefined {
    const snapshotPath = path.join(directory, `${id}.json`);
    const journalPath = path.join(directory, `${id}.jsonl`);
    const snapshotText = readOptional(snapshotPath);
    let base: ChatRecord | undefined;
    let baseSeq = 0;
    if (snapshotText !== undefined) {
      const parsed = parseChatFile(snapshotText.toString('utf8'), id);
      baseSeq = parsed.seq;
      base = {
        chat: parsed.chat,
        titleSource: parsed.titleSource,
        messages: parsed.messages,
        ...(parsed.compaction ? { compaction: parsed.compaction } : {})
      };
    }
    const journal = readOptional(journalPath) ?? Buffer.alloc(0);
    const replay = replayJournal(base, baseSeq, journal);
    if (replay.badLines.length)
      logger.warn(`chat journal ${journalPath}: skipped unreadable line(s) ${replay.badLines.join(', ')}`);
    const file = new JournalFile(directory, id, logger, stats, compactMinDeadBytes, {
      seq: replay.seq,
      snapshotBytes: snapshotText?.length ?? 0,
      journalBytes: replay.goodBytes,
      deadBytes: replay.deadBytes,
      itemBytes: replay.itemBytes
    });
    if (replay.deleted) {
      file.removeFilesSync();
      return undefined;
    }
    if (!replay.record) throw new Error(`${journalPath} does not define a chat`);
    if (replay.tornBytes > 0) {
      logger.warn(
        `chat journal ${journalPath}: dropped a torn last line (${replay.tornBytes} bytes, the write was cut short); every earlier record kept`
      );
      const fd = openSync(journalPath, 'r+');
      try {
        ftruncateSync(fd, replay.goodBytes);
      } finally {
        closeSync(fd);
      }
    }
    return { record: replay.record, file };
  }

  /** True while a compaction runs (the chat must stay in memory until it ends). */
  get busy(): boolean {
    return this.compacting !== undefined;
  }

  /** The last sequence number written. */
  get lastSeq(): number {
    return this.seq;
  }

  /**
   * Appends one record (one write call) and returns its byte length. A failed write is
   * logged (once until a write succeeds again); the chat stays usable in memory.
   */
  append(entry: JournalEntry, updatedAt: string): number {
    if (this.deleted) return 0;
    this.seq += 1;
    const line = encodeRecord({ ...entry, s: this.seq, u: updatedAt } as JournalRecord);
    const buffer = Buffer.from(line, 'utf8');
    try {
      this.fd ??= openSync(this.journalPath(), 'a', 0o600);
      let offset = 0;
      while (offset < buffer.length) offset += writeSync(this.fd, buffer, offset, buffer.length - offset);
      this.failed = false;
    } catch (error) {
      if (!this.failed) this.logger.error(`could not append to chat journal ${this.journalPath()}`, error);
      this.failed = true;
      return 0;
    }
    this.journalBytes += buffer.length;
    this.stats.bytesWritten += buffer.length;
    this.stats.records += 1;
    return buffer.length;
  }

  /** Notes that an item's latest record is `bytes` long (its earlier one, if any, is now dead). */
  noteItem(itemId: string, bytes: number): void {
    this.deadBytes += this.itemBytes.get(itemId) ?? 0;
    this.itemBytes.set(itemId, bytes);
  }

  /** Notes bytes that no longer count (removed items, cut messages, superseded metadata). */
  noteDead(bytes: number, itemIds: readonly string[] = []): void {
    this.deadBytes += bytes;
    for (const id of itemIds) {
      this.deadBytes += this.itemBytes.get(id) ?? 0;
      this.itemBytes.delete(id);
    }
  }

  /** True when more than half of the chat's bytes on disk are superseded records. */
  shouldCompact(): boolean {
    if (this.compacting || this.deleted) return false;
    const total = this.snapshotBytes + this.journalBytes;
    return this.deadBytes >= this.compactMinDeadBytes && this.deadBytes * 2 > total;
  }

  /**
   * Rewrites the chat as a snapshot of `record` plus a journal of only the records after
   * it. Crash-safe at every moment: (1) the snapshot goes to a temporary file, then
   * replaces `<id>.json` by rename; until then the old snapshot + full journal hold the
   * chat; after it, the new snapshot says which sequence number it includes, so journal
   * records up to it are skipped on load; (2) the journal records appended meanwhile are
   * copied to a temporary journal that replaces `<id>.jsonl` by rename, synchronously (no
   * append can interleave). The serialisation is the only synchronous part of (1).
   */
  compact(record: ChatRecord): Promise<void> {
    if (this.compacting || this.deleted) return this.compacting ?? Promise.resolve();
    const seq = this.seq;
    const text = serializeChat(record, seq);
    const journalOffset = this.journalBytes;
    this.compacting = (async () => {
      const snapshotPath = path.join(this.directory, `${this.id}.json`);
      const tmp = `${snapshotPath}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`;
      try {
        await writeFile(tmp, text, { encoding: 'utf8', mode: 0o600 });
        if (this.deleted) throw new Error('chat deleted meanwhile');
        await rename(tmp, snapshotPath);
      } catch (error) {
        await unlink(tmp).catch(() => undefined);
        if (!this.deleted) this.logger.error(`could not compact chat ${this.id}`, error);
        return;
      }
      const snapshotBytes = byteLength(text);
      this.stats.bytesWritten += snapshotBytes;
      this.snapshotBytes = snapshotBytes;
      this.moveJournalTail(journalOffset);
      this.stats.compactions += 1;
    })().finally(() => {
      this.compacting = undefined;
    });
    return this.compacting;
  }

  /** Resolves when a running compaction has finished. */
  settled(): Promise<void> {
    return this.compacting ?? Promise.resolve();
  }

  /**
   * Deletes the chat's files. A `deleted` record goes first and the snapshot is removed
   * before the journal, so a crash at any point never brings back half a chat: the next
   * load finds the `deleted` record and finishes the deletion.
   */
  async delete(): Promise<void> {
    await this.settled();
    this.append({ t: 'deleted' }, new Date().toISOString());
    this.deleted = true;
    this.close();
    this.removeFilesSync();
  }

  /** Closes the journal's descriptor (the next append reopens it). */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private moveJournalTail(offset: number): void {
    const journalPath = this.journalPath();
    const length = this.journalBytes - offset;
    const tail = Buffer.alloc(length);
    const tmp = `${journalPath}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`;
    try {
      if (length > 0) {
        const fd = openSync(journalPath, 'r');
        try {
          let read = 0;
          while (read < length) read += readSync(fd, tail, read, length - read, offset + read);
        } finally {
          closeSync(fd);
        }
      }
      writeFileSync(tmp, tail, { mode: 0o600 });
      renameSync(tmp, journalPath);
    } catch (error) {
      // The new snapshot is in place and says which records it has: the long journal stays valid.
      try {
        unlinkSync(tmp);
      } catch {
        // not created
      }
      this.logger.error(`could not shorten chat journal ${journalPath} (it stays valid)`, error);
      return;
    }
    this.close();
    this.stats.bytesWritten += length;
    this.journalBytes = length;
    this.deadBytes = 0;
    this.itemBytes = new Map();
  }

  /** Snapshot first: a journal left alone still ends in its `deleted` record. */
  private removeFilesSync(): void {
    for (const file of [path.join(this.directory, `${this.id}.json`), this.journalPath()]) {
      try {
        unlinkSync(file);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.logger.error(`could not remove ${file}`, error);
      }
    }
  }

  private journalPath(): string {
    return path.join(this.directory, `${this.id}.jsonl`);
  }
}

function readOptional(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
