/**
 * Checkpoints: what every file and notebook a turn changed held before that turn changed it
 * (not a git commit), and what the turn left, kept beside the chat's journal as one
 * append-only JSONL file per turn: `.cellmate/chats/checkpoints/<chatId>/<turnId>.jsonl` —
 * a header line, then one line per kept content — so a turn that writes a thousand files
 * appends a thousand lines instead of rewriting a growing document, and a companion killed
 * mid-call has already kept what it replaced. The recorder a call gets
 * (`workspace/write-capture.ts`) keeps a path's content the first time the turn writes it;
 * after each call it notes what the call left (`after`), so a rewind can tell a change the
 * person made since from the agent's own. Bounded: one kept content over `maxEntryBytes` is
 * noted as too large (that file cannot be restored, and the preview says so); a chat's
 * checkpoints over `maxChatBytes` lose their oldest turns.
 */
import {
  appendFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync
} from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { CheckpointSummary, NotebookCellData } from '@cellmate/protocol';
import type { CheckpointPort, WriteRecorder } from '../workspace/write-capture.js';
import { isInside } from '../workspace/workspace-path.js';

/** What a path held at one moment. */
export type KeptState =
  /** `folder`: the topmost folder that did not exist either (workspace-relative); a rewind removes it again if empty. */
  | { kind: 'absent'; folder?: string }
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

export const DEFAULT_CHECKPOINT_LIMITS: CheckpointLimits = {
  maxEntryBytes: 2 * 1024 * 1024,
  maxChatBytes: 64 * 1024 * 1024
};

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

/** The highest folder between the workspace and `absolute` that does not exist, workspace-relative with `/`. */
async function topmostMissingFolder(workspace: string, absolute: string): Promise<string | undefined> {
  let missing: string | undefined;
  for (let dir = path.dirname(absolute); isInside(workspace, dir) && dir !== workspace; dir = path.dirname(dir)) {
    if (await exists(dir)) break;
    missing = dir;
  }
  return missing === undefined ? undefined : path.relative(workspace, missing).split(path.sep).join('/');
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false
  );
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
      names = readdirSync(dir).filter((n) => n.endsWith('.jsonl'));
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
    return this.readTurn(this.turnFile(chatId, turnId));
  }

  /** Writes a whole turn's checkpoint (temp file + rename), then trims the chat to its bound. */
  save(chatId: string, checkpoint: TurnCheckpoint): void {
    const target = this.turnFile(chatId, checkpoint.turnId);
    mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
    const lines = [
      JSON.stringify({ version: 1, turnId: checkpoint.turnId, time: checkpoint.time }),
      ...checkpoint.entries.flatMap((e) => [
        JSON.stringify({ t: 'before', path: e.path, state: e.before }),
        ...(e.after ? [JSON.stringify({ t: 'after', path: e.path, state: e.after })] : [])
      ])
    ];
    const temp = `${target}.${process.pid}.tmp`;
    writeFileSync(temp, `${lines.join('\n')}\n`, { encoding: 'utf8', mode: 0o600 });
    renameSync(temp, target);
    this.trim(chatId, checkpoint.turnId);
  }

  /** Appends what a turn kept (`before`: the first write of a path; `after`: what a call left). */
  append(chatId: string, turnId: string, record: { t: 'before' | 'after'; path: string; state: KeptState }): void {
    const target = this.turnFile(chatId, turnId);
    let fresh = false;
    try {
      statSync(target);
    } catch {
      fresh = true;
    }
    if (fresh) {
      mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
      appendFileSync(target, `${JSON.stringify({ version: 1, turnId, time: new Date().toISOString() })}\n`, {
        encoding: 'utf8',
        mode: 0o600
      });
    }
    appendFileSync(target, `${JSON.stringify(record)}\n`, 'utf8');
  }

  /** Trims the chat to its bound once a call is done. */
  settled(chatId: string, turnId: string): void {
    this.trim(chatId, turnId);
  }

  /** Forgets turns (after they were rewound: what they kept is back in place). */
  forget(chatId: string, turnIds: readonly string[]): void {
    for (const id of turnIds)
      if (SAFE_ID.test(chatId) && SAFE_ID.test(id)) rmSync(this.turnFile(chatId, id), { force: true });
  }

  /** Deletes every checkpoint of a deleted chat. */
  deleteChat(chatId: string): void {
    if (SAFE_ID.test(chatId)) rmSync(this.chatDir(chatId), { recursive: true, force: true });
  }

  private chatDir(chatId: string): string {
    return path.join(this.options.directory, chatId);
  }

  private turnFile(chatId: string, turnId: string): string {
    return path.join(this.chatDir(chatId), `${turnId}.jsonl`);
  }

  /** A turn's file, folded: each path's first `before`, its last `after`. A torn last line (a kill mid-append) is skipped. */
  private readTurn(file: string): TurnCheckpoint | undefined {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return undefined;
    }
    const lines = text.split('\n').filter((l) => l.length > 0);
    let head: { version?: unknown; turnId?: unknown; time?: unknown };
    try {
      head = JSON.parse(lines[0] ?? '') as typeof head;
    } catch {
      return undefined;
    }
    if (head.version !== 1 || typeof head.turnId !== 'string' || typeof head.time !== 'string') return undefined;
    const entries: CheckpointEntry[] = [];
    for (const line of lines.slice(1)) {
      let r: { t?: unknown; path?: unknown; state?: KeptState };
      try {
        r = JSON.parse(line) as typeof r;
      } catch {
        continue;
      }
      if (typeof r.path !== 'string' || !r.state || typeof r.state !== 'object') continue;
      const entry = entries.find((e) => e.path === r.path);
      if (r.t === 'before' && !entry) entries.push({ path: r.path, before: r.state });
      else if (r.t === 'after' && entry) entry.after = r.state;
    }
    return { version: 1, turnId: head.turnId, time: head.time, entries };
  }

  /** Drops the oldest turns (never `keep`, the one being written) while the chat is over its bound. */
  private trim(chatId: string, keep: string): void {
    const dir = this.chatDir(chatId);
    let names: string[];
    try {
      names = readdirSync(dir).filter((n) => n.endsWith('.jsonl'));
    } catch {
      return;
    }
    const files = names.map((n) => ({ name: n, ...statSync(path.join(dir, n)) })).sort((a, b) => a.mtimeMs - b.mtimeMs);
    let total = files.reduce((sum, f) => sum + f.size, 0);
    for (const f of files) {
      if (total <= this.limits.maxChatBytes) break;
      if (f.name === `${keep}.jsonl`) continue;
      rmSync(path.join(dir, f.name), { force: true });
      total -= f.size;
    }
  }
}

/** The recorder of one call: keeps each path's first content in the turn, then what the call left. */
class TurnRecorder implements WriteRecorder {
  /** Paths this call wrote → how to read them now. */
  private readonly touched = new Map<string, () => Promise<KeptState>>();
  /** Paths whose content before the turn is kept (this call's, and earlier calls' of the turn); read on the call's first write. */
  private kept: Set<string> | undefined;

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
    await this.keep(key, async () => {
      const state = await readFileState(absolute, this.maxEntryBytes);
      if (state.kind !== 'absent') return state;
      // The write will create the file's missing folders too: an undo takes them back.
      const folder = await topmostMissingFolder(this.workspace, absolute);
      return folder ? { kind: 'absent', folder } : state;
    });
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
    for (const [p, read] of this.touched) {
      try {
        this.store.append(this.chatId, this.turnId, { t: 'after', path: p, state: await read() });
      } catch {
        // Unknown: a rewind cannot tell the person's later changes apart, and says so.
        this.store.append(this.chatId, this.turnId, { t: 'after', path: p, state: { kind: 'dropped', bytes: 0 } });
      }
    }
    this.touched.clear();
    this.store.settled(this.chatId, this.turnId);
  }

  /** Keeps the path's content before the turn's first write to it. */
  private async keep(relative: string, read: () => Promise<KeptState>): Promise<void> {
    this.kept ??= new Set(this.store.get(this.chatId, this.turnId)?.entries.map((e) => e.path) ?? []);
    if (this.kept.has(relative)) return;
    this.kept.add(relative);
    this.store.append(this.chatId, this.turnId, { t: 'before', path: relative, state: await read() });
  }
}
