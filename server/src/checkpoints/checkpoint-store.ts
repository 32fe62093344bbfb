/**
 * Checkpoints: what every file and notebook a turn changed held before that turn changed it
 * (not a git commit), and what the turn left, kept beside the chat's journal as one JSON
 * file per turn: `.cellmate/chats/checkpoints/<chatId>/<turnId>.json`. The recorder a call
 * gets (`tools/write-capture.ts`) keeps a path's content the first time the turn writes it;
 * after each call it notes what the call left (`after`), so a rewind can tell a change the
 * person made since from the agent's own. Bounded: one kept content over `maxEntryBytes` is
 * noted as too large (that file cannot be restored, and the preview says so); a chat's
 * checkpoints over `maxChatBytes` lose their oldest turns.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { CheckpointSummary, NotebookCellData } from '@cellmate/protocol';
import type { CheckpointPort, WriteRecorder } from '../tools/write-capture.js';

/** What a path held at one moment. */
export type KeptState =
  | { kind: 'absent' }
  | { kind: 'bytes'; base64: string }
  /** An open notebook's cells, read through the pane that has it open. */
  | { kind: 'cells'; cells: NotebookCellData[] }
  /** Over the size bound: not kept. */
  | { kind: 'dropped'; bytes: number };

/** One path a turn changed. */
export interface CheckpointEntry {
  /** Workspace-relative. */
  path: string;
  before: KeptState;
  /** What the turn's last call that wrote it left (absent: the call did not finish). */
  after?: KeptState;
}

/** One turn's checkpoint. */
export interface TurnCheckpoint {
  version: 1;
  turnId: string;
  time: string;
  entries: CheckpointEntry[];
}

export interface CheckpointLimits {
  /** Largest content kept for one path (default 2 MiB). */
  maxEntryBytes: number;
  /** All of a chat's checkpoints (default 64 MiB); the oldest turns go first. */
  maxChatBytes: number;
}

export const DEFAULT_CHECKPOINT_LIMITS: CheckpointLimits = { maxEntryBytes: 2 * 1024 * 1024, maxChatBytes: 64 * 1024 * 1024 };

const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The size a kept state counts for against the bounds. */
export function stateBytes(state: KeptState): number {
  if (state.kind === 'bytes') return state.base64.length;
  if (state.kind === 'cells') return JSON.stringify(state.cells).length;
  return 0;
}

/** The file's state now (bytes, or absent). */
export async function readFileState(absolute: string, maxBytes = Infinity): Promise<KeptState> {
  let bytes: Buffer;
  try {
    bytes = await readFile(absolute);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent' };
    throw e;
  }
  const base64 = bytes.toString('base64');
  return base64.length > maxBytes ? { kind: 'dropped', bytes: bytes.length } : { kind: 'bytes', base64 };
}

/** The per-chat checkpoint files, and a recorder for each call of a turn. */
export class CheckpointStore implements CheckpointPort {
  private readonly limits: CheckpointLimits;

  constructor(private readonly options: { directory: string; limits?: Partial<CheckpointLimits> }) {
    this.limits = { ...DEFAULT_CHECKPOINT_LIMITS, ...options.limits };
  }

  /** A recorder for one call; none outside a turn (a person's own click, a test). */
  recorder(call: { chatId: string; turnId?: string; workspace: string }): WriteRecorder | undefined {
    if (!call.turnId || !SAFE_ID.test(call.chatId) || !SAFE_ID.test(call.turnId)) return undefined;
    return new TurnRecorder(this, call.chatId, call.turnId, call.workspace, this.limits.maxEntryBytes);
  }

  /** The chat's turns with a checkpoint, oldest first. */
  list(chatId: string): CheckpointSummary[] {
    return this.turns(chatId).map((t) => ({ turnId: t.turnId, paths: t.entries.map((e) => e.path) }));
  }

  /** The chat's checkpoints, oldest first (unreadable files are skipped). */
  turns(chatId: string): TurnCheckpoint[] {
    if (!SAFE_ID.test(chatId)) return [];
    const dir = this.chatDir(chatId);
    let names: string[];
    try {
      names = readdirSync(dir).filter((n) => n.endsWith('.json'));
    } catch {
      return [];
    }
    const turns: TurnCheckpoint[] = [];
    for (const name of names) {
      const t = this.readTurn(path.join(dir, name));
      if (t) turns.push(t);
    }
    return turns.sort((a, b) => a.time.localeCompare(b.time));
  }

  /** One turn's checkpoint, if kept. */
  get(chatId: string, turnId: string): TurnCheckpoint | undefined {
    if (!SAFE_ID.test(chatId) || !SAFE_ID.test(turnId)) return undefined;
    return this.readTurn(path.join(this.chatDir(chatId), `${turnId}.json`));
  }

  /** Writes a turn's checkpoint (temp file + rename), then trims the chat to its bound. */
  save(chatId: string, checkpoint: TurnCheckpoint): void {
    const dir = this.chatDir(chatId);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const target = path.join(dir, `${checkpoint.turnId}.json`);
    const temp = `${target}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify(checkpoint), { encoding: 'utf8', mode: 0o600 });
    renameSync(temp, target);
    this.trim(chatId, checkpoint.turnId);
  }

  /** Forgets turns (after they were rewound: what they kept is back in place). */
  forget(chatId: string, turnIds: readonly string[]): void {
    for (const id of turnIds) if (SAFE_ID.test(chatId) && SAFE_ID.test(id)) rmSync(path.join(this.chatDir(chatId), `${id}.json`), { force: true });
  }

  /** Deletes every checkpoint of a deleted chat. */
  deleteChat(chatId: string): void {
    if (SAFE_ID.test(chatId)) rmSync(this.chatDir(chatId), { recursive: true, force: true });
  }

  private chatDir(chatId: string): string {
    return path.join(this.options.directory, chatId);
  }

  private readTurn(file: string): TurnCheckpoint | undefined {
    try {
      const t = JSON.parse(readFileSync(file, 'utf8')) as TurnCheckpoint;
      return t && t.version === 1 && typeof t.turnId === 'string' && Array.isArray(t.entries) ? t : undefined;
    } catch {
      return undefined;
    }
  }

  /** Drops the oldest turns (never `keep`, the one just written) while the chat is over its bound. */
  private trim(chatId: string, keep: string): void {
    const dir = this.chatDir(chatId);
    const files = readdirSync(dir)
      .filter((n) => n.endsWith('.json'))
      .map((n) => ({ name: n, ...statSync(path.join(dir, n)) }))
      .sort((a, b) => a.mtimeMs - b.mtimeMs);
    let total = files.reduce((sum, f) => sum + f.size, 0);
    for (const f of files) {
      if (total <= this.limits.maxChatBytes) break;
      if (f.name === `${keep}.json`) continue;
      rmSync(path.join(dir, f.name), { force: true });
      total -= f.size;
    }
  }
}

/** The recorder of one call: keeps each path's first content in the turn, then what the call left. */
class TurnRecorder implements WriteRecorder {
  /** Paths this call wrote → how to read them now. */
  private readonly touched = new Map<string, () => Promise<KeptState>>();

  constructor(
    private readonly store: CheckpointStore,
    private readonly chatId: string,
    private readonly turnId: string,
    private readonly workspace: string,
    private readonly maxEntryBytes: number
  ) {}

  async beforeFile(absolute: string): Promise<void> {
    const relative = path.relative(this.workspace, absolute);
    // Cellmate's own files (journals, saved outputs) are not the person's work.
    if (relative.startsWith('..') || path.isAbsolute(relative) || relative.split(path.sep)[0] === '.cellmate') return;
    const key = relative.split(path.sep).join('/');
    if (!this.touched.has(key)) this.touched.set(key, () => readFileState(absolute, this.maxEntryBytes));
    await this.keep(key, () => readFileState(absolute, this.maxEntryBytes));
  }

  async beforeNotebook(relative: string, read: () => Promise<NotebookCellData[]>): Promise<void> {
    const state = async (): Promise<KeptState> => {
      const cells = await read();
      const kept: KeptState = { kind: 'cells', cells };
      return stateBytes(kept) > this.maxEntryBytes ? { kind: 'dropped', bytes: stateBytes(kept) } : kept;
    };
    this.touched.set(relative, state);
    await this.keep(relative, state);
  }

  async settle(): Promise<void> {
    if (this.touched.size === 0) return;
    const checkpoint = this.current();
    for (const [p, read] of this.touched) {
      const entry = checkpoint.entries.find((e) => e.path === p);
      if (!entry) continue;
      try {
        entry.after = await read();
      } catch {
        delete entry.after; // unknown: a rewind cannot tell the person's changes apart, and says so
      }
    }
    this.touched.clear();
    this.store.save(this.chatId, checkpoint);
  }

  private current(): TurnCheckpoint {
    return this.store.get(this.chatId, this.turnId) ?? { version: 1, turnId: this.turnId, time: new Date().toISOString(), entries: [] };
  }

  /** Saves the path's content before the turn's first write to it. */
  private async keep(relative: string, read: () => Promise<KeptState>): Promise<void> {
    const checkpoint = this.current();
    if (checkpoint.entries.some((e) => e.path === relative)) return;
    checkpoint.entries.push({ path: relative, before: await read() });
    this.store.save(this.chatId, checkpoint);
  }
}
