/**
 * Staged structural edits (SPEC EDIT-1/2): what `ast_edit` proposed, kept in memory until
 * `resolve` (the model) or the diff card (a person) accepts or discards it. Accepting
 * writes every file through the one all-or-nothing multi-file edit (`server/src/edits/`),
 * which compares each file with the bytes captured at staging (a notebook open in a pane:
 * each changed cell's source in the open document) before writing anything; any mismatch
 * rejects the whole edit naming the file. An open notebook changes through its pane (one
 * undo step), a closed one by splicing the new sources into its raw JSON.
 * Edits expire after {@link STAGED_EDIT_TTL_MS}; a companion restart drops them all (ids
 * carry this process's boot tag, so a stale id says it was staged before the restart).
 */
import { randomBytes } from 'node:crypto';
import type { DiffDisplay } from '@cellmate/protocol';
import { applyChanges, EditError, type Change, type EditFs } from '../edits/index.js';
import type { NotebookPort } from '../notebooks/pane-hub.js';
import type { CellPlace } from './documents.js';
import { StagedEditError } from './errors.js';

/** How long a staged edit can be resolved. */
export const STAGED_EDIT_TTL_MS = 30 * 60_000;

/** One changed file of a staged edit: its whole text at staging, and the new text or new cell sources. */
export interface StagedFile {
  /** Workspace-relative. */
  path: string;
  /** The file's text when the edit was staged (the snapshot accept compares with). */
  expected: string;
  /** A source file's new text. */
  next?: string;
  /** A notebook's changed cells: source before and after. */
  cells?: Array<CellPlace & { before: string; after: string }>;
}

/** The shared multi-file edit's change for a staged file. */
function toChange(f: StagedFile): Change {
  if (!f.cells) return { kind: 'text', path: f.path, expected: f.expected, next: f.next ?? f.expected };
  return {
    kind: 'cells',
    path: f.path,
    expectedFile: f.expected,
    cells: f.cells.map((c) => ({ cell: c.id ?? `#${c.index + 1}`, expected: c.before, next: c.after }))
  };
}

/** A staged edit. */
export interface StagedEdit {
  id: string;
  chatId: string;
  workspace: string;
  createdAt: number;
  expiresAt: number;
  replacements: number;
  files: StagedFile[];
  display: DiffDisplay;
}

/** What resolving did. */
export interface ResolveOutcome {
  state: 'accepted' | 'discarded';
  message: string;
  files: string[];
}

/** Options of {@link StagedEdits}. */
export interface StagedEditsOptions {
  ttlMs?: number;
  now?: () => number;
  /** Open notebooks are changed through the pane that has them open. */
  port?: NotebookPort;
  /** File access (fault injection in tests); default the real file system. */
  fs?: EditFs;
}

/** The staged edits of one companion process. */
export class StagedEdits {
  /** This process's tag in every id: an id with another tag was staged before a restart. */
  readonly boot = randomBytes(3).toString('hex');
  private readonly edits = new Map<string, StagedEdit>();
  private readonly resolved = new Map<string, 'accepted' | 'discarded' | 'expired'>();
  private next = 1;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(private readonly options: StagedEditsOptions = {}) {
    this.ttlMs = options.ttlMs ?? STAGED_EDIT_TTL_MS;
    this.now = options.now ?? Date.now;
  }

  /** Keeps an edit; returns it with its id and expiry. */
  add(
    edit: Omit<StagedEdit, 'id' | 'createdAt' | 'expiresAt' | 'display'> & {
      display: Omit<DiffDisplay, 'editId' | 'expiresAt'>;
    }
  ): StagedEdit {
    this.sweep();
    const id = `edit_${this.boot}_${this.next++}`;
    const createdAt = this.now();
    const expiresAt = createdAt + this.ttlMs;
    const staged: StagedEdit = {
      ...edit,
      id,
      createdAt,
      expiresAt,
      display: { ...edit.display, editId: id, expiresAt }
    };
    this.edits.set(id, staged);
    return staged;
  }

  /** The pending edit, or a {@link StagedEditError} saying why there is none. */
  get(id: string): StagedEdit {
    this.sweep();
    const edit = this.edits.get(id);
    if (edit) return edit;
    const gone = this.resolved.get(id);
    if (gone === 'expired')
      throw new StagedEditError(
        `Staged edit ${id} expired (staged edits last ${Math.round(this.ttlMs / 60_000)} minutes). Nothing was written; run ast_edit again.`,
        id
      );
    if (gone) throw new StagedEditError(`Staged edit ${id} was already ${gone}.`, id);
    const tag = /^edit_([0-9a-f]+)_\d+$/.exec(id)?.[1];
    if (tag && tag !== this.boot)
      throw new StagedEditError(
        `Staged edit ${id} was staged before the Cellmate server restarted; staged edits do not survive a restart. Nothing was written; run ast_edit again.`,
        id
      );
    throw new StagedEditError(
      `No staged edit ${JSON.stringify(id)}. Use the edit_id ast_edit returned (e.g. "edit_${this.boot}_1").`,
      id
    );
  }

  /** Accepts (writes all files or none) or discards an edit. */
  async resolve(id: string, action: 'accept' | 'discard'): Promise<ResolveOutcome> {
    const edit = this.get(id);
    const files = edit.files.map((f) => f.path);
    if (action === 'discard') {
      this.finish(id, 'discarded');
      return {
        state: 'discarded',
        message: `Discarded ${id}: nothing was written (${edit.replacements} replacements in ${files.length} files dropped).`,
        files
      };
    }
    try {
      await applyChanges(edit.files.map(toChange), {
        workspace: edit.workspace,
        ...(this.options.port ? { port: this.options.port } : {}),
        ...(this.options.fs ? { fs: this.options.fs } : {})
      });
    } catch (error) {
      if (error instanceof EditError && error.code === 'conflict') {
        this.finish(id, 'discarded');
        throw new StagedEditError(
          `Rejected ${id}: ${error.files.join(', ')} changed after the edit was staged, so nothing was written (no file of the edit changed). Run ast_edit again on the current files.`,
          id,
          error.files[0]
        );
      }
      if (error instanceof EditError && error.code === 'write-failed') {
        throw new StagedEditError(
          `Could not apply ${id}: ${error.message} The edit is still staged (resolve again once the cause is fixed, or discard it).`,
          id,
          error.files[0]
        );
      }
      throw error;
    }
    this.finish(id, 'accepted');
    return {
      state: 'accepted',
      message: `Applied ${id}: ${edit.replacements} replacements in ${files.length} files (${files.join(', ')}).`,
      files
    };
  }

  private finish(id: string, state: 'accepted' | 'discarded' | 'expired'): void {
    this.edits.delete(id);
    this.resolved.set(id, state);
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, e] of this.edits) if (e.expiresAt <= now) this.finish(id, 'expired');
  }

  /** Drops every pending edit (the companion is stopping). */
  /** A chat's edits still waiting for `resolve` (oldest first). */
  pending(chatId: string): StagedEdit[] {
    const now = this.now();
    return [...this.edits.values()].filter((e) => e.chatId === chatId && e.expiresAt > now);
  }

  dispose(): void {
    this.edits.clear();
  }
}
