import type { ToolMetrics } from '@cellmate/protocol';
import { appendFile, mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { AuditEntry, AuditSink } from '../tools/harness-ports.js';
import type { Redactor } from '../security/redaction.js';
import { computeMetrics } from './metrics.js';

/** Arguments longer than this (as JSON) are cut in the log (the log is not a backup). */
const MAX_ARGS_CHARS = 4_000;

/**
 * The audit trail (HARN-7): one JSONL file per chat, `<workspace>/.cellmate/audit/<chatId>.jsonl`,
 * one line per tool call: time, chat, turn, call id, actor, tool, arguments, decision,
 * status, result summary, duration, error. Appends are serialised per file.
 */
export class AuditLog implements AuditSink {
  private chain: Promise<void> = Promise.resolve();
  private dirReady: Promise<void> | undefined;
  readonly directory: string;

  constructor(
    workspace: string,
    private readonly onError: (error: unknown) => void = () => {},
    /** Hides known secret values in every line (issue #8 item 4). */
    private readonly redactor?: Pick<Redactor, 'redactDeep'>
  ) {
    this.directory = path.join(workspace, '.cellmate', 'audit');
  }

  record(raw: AuditEntry): void {
    const entry = this.redactor ? this.redactor.redactDeep(raw) : raw;
    const argsJson = JSON.stringify(entry.args ?? null);
    const line = JSON.stringify({ ...entry, args: argsJson.length > MAX_ARGS_CHARS ? `${argsJson.slice(0, MAX_ARGS_CHARS)}… [cut]` : entry.args });
    const file = this.fileFor(entry.chatId);
    this.chain = this.chain
      .then(async () => {
        // Once per log (again after a failure, e.g. the folder was removed meanwhile).
        this.dirReady ??= mkdir(this.directory, { recursive: true }).then(() => undefined);
        try {
          await this.dirReady;
          await appendFile(file, `${line}\n`, 'utf8');
        } catch (error) {
          this.dirReady = undefined;
          throw error;
        }
      })
      .catch(this.onError);
  }

  /** Resolves once every recorded entry is on disk. */
  flush(): Promise<void> {
    return this.chain;
  }

  /** Entries of one chat, or of every chat. Malformed lines are skipped. */
  async entries(chatId?: string): Promise<AuditEntry[]> {
    await this.flush();
    let files: string[];
    if (chatId !== undefined) files = [this.fileFor(chatId)];
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

  private fileFor(chatId: string): string {
    return path.join(this.directory, `${chatId.replace(/[^A-Za-z0-9_-]/g, '_') || 'none'}.jsonl`);
  }
}
