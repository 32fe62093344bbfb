import type { ToolMetrics } from '@cellmate/protocol';
import { appendFileSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { readdir, readFile, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { AuditEntry, AuditSink } from '../ports/gate-ports.js';
import type { Redactor } from '../security/redaction.js';
import { computeMetrics } from './metrics.js';

/** Arguments longer than this (as JSON) are cut in the log (the log is not a backup). */
const MAX_ARGS_CHARS = 4_000;

/** How much audit log is kept (README "Housekeeping"). */
export interface AuditLimits {
  /** A chat's log is rotated to `<chat>.1.jsonl` (replacing the previous one) past this size. Default 4 MiB. */
  maxBytes: number;
  /** Log files not written for this long are removed (checked at start and hourly). Default 30 days. */
  maxAgeMs: number;
}

/** The defaults of {@link AuditLimits}. */
export const DEFAULT_AUDIT_LIMITS: AuditLimits = { maxBytes: 4 * 1024 * 1024, maxAgeMs: 30 * 24 * 3600 * 1000 };

/** Limits from `CELLMATE_AUDIT_MAX_BYTES` and `CELLMATE_AUDIT_MAX_AGE_DAYS` (positive numbers), else the defaults. */
export function auditLimitsFromEnv(env: NodeJS.ProcessEnv): AuditLimits {
  const bytes = Number(env.CELLMATE_AUDIT_MAX_BYTES);
  const days = Number(env.CELLMATE_AUDIT_MAX_AGE_DAYS);
  return {
    maxBytes: Number.isFinite(bytes) && bytes > 0 ? Math.floor(bytes) : DEFAULT_AUDIT_LIMITS.maxBytes,
    maxAgeMs: Number.isFinite(days) && days > 0 ? days * 24 * 3600 * 1000 : DEFAULT_AUDIT_LIMITS.maxAgeMs
  };
}

const PRUNE_EVERY_MS = 3600 * 1000;

/**
 * The audit trail (HARN-7): one JSONL file per chat, `<workspace>/.cellmate/audit/<chatId>.jsonl`,
 * one line per tool call: time, chat, turn, call id, actor, tool, arguments, decision,
 * status, result summary, duration, error. Each entry is appended synchronously, in call order. A log past
 * `limits.maxBytes` becomes `<chatId>.1.jsonl` (one older generation kept, so a chat keeps at
 * most twice the limit); files untouched for `limits.maxAgeMs` are removed; a deleted
 * chat's logs go with it ({@link removeChat}).
 */
export class AuditLog implements AuditSink {
  private chain: Promise<void> = Promise.resolve();
  private dirReady = false;
  private readonly sizes = new Map<string, number>();
  private lastPrune = 0;
  readonly directory: string;

  constructor(
    workspace: string,
    private readonly onError: (error: unknown) => void = () => {},
    private readonly limits: AuditLimits = DEFAULT_AUDIT_LIMITS,
    /** Hides known secret values in every line. */
    private readonly redactor?: Pick<Redactor, 'redactDeep'>
  ) {
    this.directory = path.join(workspace, '.cellmate', 'audit');
  }

  record(raw: AuditEntry): void {
    const entry = this.redactor ? this.redactor.redactDeep(raw) : raw;
    const argsJson = JSON.stringify(entry.args ?? null);
    const line = JSON.stringify({
      ...entry,
      args: argsJson.length > MAX_ARGS_CHARS ? `${argsJson.slice(0, MAX_ARGS_CHARS)}… [cut]` : entry.args
    });
    const file = this.fileFor(entry.chatId);
    if (Date.now() - this.lastPrune > PRUNE_EVERY_MS) {
      this.lastPrune = Date.now();
      this.chain = this.chain.then(() => this.pruneOld()).catch(this.onError);
    }
    // One synchronous append per call, like the chat journal's records: a line is on disk
    // when the call returns, in call order, and costs the turn a few microseconds of one
    // write instead of an open, a write and a close through the thread pool with a promise
    // hop each (that was a quarter of a millisecond per tool call on the main thread).
    try {
      if (!this.dirReady) {
        mkdirSync(this.directory, { recursive: true });
        this.dirReady = true;
      }
      appendFileSync(file, `${line}\n`, 'utf8');
      this.rotateIfLarge(file, Buffer.byteLength(line) + 1);
    } catch (error) {
      this.dirReady = false; // e.g. the folder was removed meanwhile: made again next time
      this.sizes.delete(file);
      this.onError(error);
    }
  }

  /** Removes a chat's logs (after the entries already recorded are written). */
  removeChat(chatId: string): Promise<void> {
    this.chain = this.chain
      .then(async () => {
        for (const file of this.filesFor(chatId)) {
          this.sizes.delete(file);
          await unlink(file).catch((error: NodeJS.ErrnoException) => {
            if (error.code !== 'ENOENT') throw error;
          });
        }
      })
      .catch(this.onError);
    return this.chain;
  }

  /** Resolves once pending removals and pruning are done (recorded entries are on disk when `record` returns). */
  flush(): Promise<void> {
    return this.chain;
  }

  /** Entries of one chat, or of every chat. Malformed lines are skipped. */
  async entries(chatId?: string): Promise<AuditEntry[]> {
    await this.flush();
    let files: string[];
    if (chatId !== undefined)
      files = this.filesFor(chatId).reverse(); // the rotated (older) one first
    else {
      const names = await readdir(this.directory).catch(() => [] as string[]);
      files = names.filter((n) => n.endsWith('.jsonl')).map((n) => path.join(this.directory, n));
    }
    const out: AuditEntry[] = [];
    for (const file of files) {
      const text = await readFile(file, 'utf8').catch(() => '');
      for (const line of text.split('\n')) {
        if (!line) continue;
        try {
          out.push(JSON.parse(line) as AuditEntry);
        } catch {
          // a torn last line after a crash: skip it
        }
      }
    }
    return out;
  }

  async metrics(chatId?: string): Promise<ToolMetrics> {
    return { chatId: chatId ?? null, rows: computeMetrics(await this.entries(chatId)) };
  }

  private rotateIfLarge(file: string, added: number): void {
    const known = this.sizes.get(file);
    const size = known === undefined ? statSync(file).size : known + added;
    if (size <= this.limits.maxBytes) {
      this.sizes.set(file, size);
      return;
    }
    renameSync(file, file.replace(/\.jsonl$/, '.1.jsonl'));
    this.sizes.set(file, 0);
  }

  private async pruneOld(): Promise<void> {
    this.lastPrune = Date.now();
    const cutoff = this.lastPrune - this.limits.maxAgeMs;
    for (const name of await readdir(this.directory).catch(() => [] as string[])) {
      if (!name.endsWith('.jsonl')) continue;
      const file = path.join(this.directory, name);
      const info = await stat(file).catch(() => undefined);
      if (info && info.mtimeMs < cutoff) {
        this.sizes.delete(file);
        await unlink(file).catch(() => undefined);
      }
    }
  }

  /** The current log and the rotated one. */
  private filesFor(chatId: string): string[] {
    const current = this.fileFor(chatId);
    return [current, current.replace(/\.jsonl$/, '.1.jsonl')];
  }

  private fileFor(chatId: string): string {
    return path.join(this.directory, `${chatId.replace(/[^A-Za-z0-9_-]/g, '_') || 'none'}.jsonl`);
  }
}
