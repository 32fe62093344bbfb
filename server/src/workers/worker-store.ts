/**
 * Where workers are kept, so a companion restart never loses one:
 *
 * - `<workspace>/.cellmate/workers/transcripts/` — each worker's history as a chat journal
 *   of its own (`ChatStore`, `chats/chat-journal.md`: items and model messages, written
 *   before anyone hears of them; a worker saved mid-run gets the "interrupted" notice).
 *   They are not chats of the chat list: a worker's record is linked to its parent here.
 * - `<workspace>/.cellmate/workers/workers.json` — one entry per worker (parent chat,
 *   label, tier, model settings, surface, state, last result), rewritten by temp file +
 *   rename on every state change (a few per run). On open, a worker still `running` is
 *   marked `interrupted`: its run died with the previous companion.
 */
import {
  chatModeOf,
  type ChatMode,
  type ModelSettings,
  type WorkerState,
  type WorkerSummary,
  type WorkerTier
} from '@cellmate/protocol';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ChatStore } from '../chats/chat-store.js';
import type { Logger } from '../config/logger.js';
import type { CapabilityProfile } from '../ports/vocabulary.js';

/** What is kept about one worker. */
export interface WorkerRecord {
  id: string;
  chatId: string;
  label: string;
  tier: WorkerTier;
  state: WorkerState;
  createdAt: string;
  startedAt: string;
  endedAt?: string;
  settings: ModelSettings;
  sharesKernel: boolean;
  /** Tool calls over all its runs (the budget counts them all: a follow-up does not reset it). */
  toolCalls: number;
  /** Milliseconds its runs have taken so far (the time budget counts them all). */
  msUsed?: number;
  lastResult?: string;
  /** The surface its calls are judged against (its parent's, narrowed: `worker-surface.ts`). */
  surface: CapabilityProfile;
  parentMode: ChatMode;
}

export const INTERRUPTED_RESULT =
  'Interrupted: the companion restarted while this worker ran. Its transcript is kept; vibe_send gives it the task again.';

const FILE_VERSION = 1;
const fileSchema = z.object({
  version: z.literal(FILE_VERSION),
  workers: z.array(z.looseObject({ id: z.string(), chatId: z.string(), state: z.string() }))
});

/** The workers' index file and transcripts. */
export class WorkerStore {
  private readonly records = new Map<string, WorkerRecord>();
  private readonly file: string;

  private constructor(
    readonly directory: string,
    readonly transcripts: ChatStore,
    private readonly logger: Logger
  ) {
    this.file = path.join(directory, 'workers.json');
  }

  /** Opens (creating) the folder, reads the index, marks workers that were running as interrupted. */
  static async open(directory: string, logger: Logger): Promise<WorkerStore> {
    mkdirSync(directory, { recursive: true, mode: 0o700 });
    const transcripts = await ChatStore.open({ directory: path.join(directory, 'transcripts'), logger });
    const store = new WorkerStore(directory, transcripts, logger);
    store.load();
    return store;
  }

  private load(): void {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch {
      return; // no workers yet
    }
    let parsed: z.infer<typeof fileSchema>;
    try {
      parsed = fileSchema.parse(JSON.parse(text));
    } catch (error) {
      const aside = `${this.file}.unreadable-${Date.now()}`;
      renameSync(this.file, aside);
      this.logger.error(
        `the workers index ${this.file} is unreadable (${(error as Error).message}); moved it to ${aside}`
      );
      return;
    }
    let changed = false;
    const now = new Date().toISOString();
    // The schema checks each worker's fields loosely; the records are what this program wrote, their full shape is not re-checked.
    for (const raw of parsed.workers as unknown as WorkerRecord[]) {
      // Indexes written before the Agent mode had its own name say `chat`.
      const record = { ...raw, parentMode: chatModeOf(raw.parentMode) ?? raw.parentMode };
      if (record.state === 'running') {
        record.state = 'interrupted';
        record.endedAt = now;
        record.lastResult = INTERRUPTED_RESULT;
        changed = true;
        this.logger.warn(
          `worker ${record.id} of chat ${record.chatId} was running when the companion stopped; marked interrupted`
        );
      }
      this.records.set(record.id, record);
    }
    if (changed) this.save();
  }

  get(id: string): WorkerRecord | undefined {
    return this.records.get(id);
  }

  /** A chat's workers, oldest first. */
  ofChat(chatId: string): WorkerRecord[] {
    return [...this.records.values()]
      .filter((r) => r.chatId === chatId)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  all(): WorkerRecord[] {
    return [...this.records.values()];
  }

  /** Stores a worker's new state (persisted before it returns). */
  put(record: WorkerRecord): void {
    this.records.set(record.id, { ...record });
    this.save();
  }

  /** Forgets workers and deletes their transcripts. */
  async remove(ids: readonly string[]): Promise<void> {
    for (const id of ids) this.records.delete(id);
    this.save();
    await Promise.all(ids.map((id) => this.transcripts.delete(id)));
  }

  async dispose(): Promise<void> {
    await this.transcripts.dispose();
  }

  private save(): void {
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ version: FILE_VERSION, workers: [...this.records.values()] })}\n`, {
      mode: 0o600
    });
    renameSync(tmp, this.file);
  }
}

/** A worker's summary for the pane and the tools. Pure. */
export function summarizeWorker(record: WorkerRecord, now = Date.now()): WorkerSummary {
  const started = Date.parse(record.startedAt);
  const end = record.endedAt && record.state !== 'running' ? Date.parse(record.endedAt) : now;
  return {
    id: record.id,
    chatId: record.chatId,
    label: record.label,
    tier: record.tier,
    state: record.state,
    createdAt: record.createdAt,
    startedAt: record.startedAt,
    ...(record.endedAt && record.state !== 'running' ? { endedAt: record.endedAt } : {}),
    elapsedMs: Math.max(0, end - started),
    model: `${record.settings.provider}/${record.settings.model || record.settings.provider}`,
    sharesKernel: record.sharesKernel,
    toolCalls: record.toolCalls,
    ...(record.lastResult !== undefined ? { lastResult: record.lastResult } : {})
  };
}
