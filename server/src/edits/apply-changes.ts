/**
 * The one all-or-nothing multi-file edit (EDIT-2, RENAME-1): `apply_patch`
 * uses it now, `lsp_rename`, code actions and `resolve` next. See README.md.
 *
 * 1. Resolve every path (workspace confinement) and refuse a file named twice.
 * 2. Check everything before writing anything: each text file's bytes are exactly the text
 *    its change was computed from (`expected`; `null` = must not exist); each notebook
 *    cell's source is its `expected` source — on disk, or, when a pane has the notebook
 *    open, in that open document (a dry run of `notebook/set-sources`). Every mismatch is
 *    collected; any → `EditError('conflict')` naming the files and cells, nothing written.
 * 3. Write files on disk one by one (temp file + rename); a closed notebook gets its cell
 *    sources spliced into its raw JSON (`notebook-splice.ts`). A failed write rolls back the
 *    files already written (old bytes back, created files removed).
 * 4. Then open notebooks through their pane: one undoable transaction each. If that fails,
 *    panes already changed are set back and the disk writes rolled back.
 */
import { readFile } from 'node:fs/promises';
import type { NotebookSourceChange } from '@cellmate/protocol';
import { removeFile, resolveForWrite, writeFileAtomic } from '../workspace/file-io.js';
import type { ResolvedWorkspacePath } from '../workspace/workspace-path.js';
import { findCell, parseNotebook, sourceText, type IpynbNotebook } from '../notebooks/ipynb.js';
import type { NotebookPort, PaneTarget } from '../notebooks/pane-hub.js';
import { EditError } from './edit-error.js';
import { spliceCellSources } from './notebook-splice.js';

/** A whole-file change of a text file. */
export interface TextFileChange {
  kind: 'text';
  /** Workspace-relative (or absolute inside the workspace). */
  path: string;
  /** The file's exact content the change was computed from; `null`: the file must not exist (a create). */
  expected: string | null;
  /** The new content; `null` deletes the file. */
  next: string | null;
}

/** New sources for cells of one `.ipynb` (everything else in the file is kept byte for byte). */
export interface NotebookCellsChange {
  kind: 'cells';
  path: string;
  cells: ReadonlyArray<{ cell: string; expected: string; next: string }>;
  /** For a closed notebook, also require the whole file to be exactly this (a snapshot taken at staging). */
  expectedFile?: string;
}

/** One entry of a change set. */
export type Change = TextFileChange | NotebookCellsChange;

/** File access of {@link applyChanges}; injectable for fault tests. */
export interface EditFs {
  /** The file's bytes, or `null` when it does not exist. */
  read(absolute: string): Promise<Buffer | null>;
  /** Replaces the file atomically (temp file + rename). */
  write(absolute: string, text: string): Promise<void>;
  remove(absolute: string): Promise<void>;
}

/** The real file system. */
export const nodeEditFs: EditFs = {
  read: (absolute) =>
    readFile(absolute).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? null : Promise.reject(e))),
  write: (absolute, text) => writeFileAtomic(absolute, text),
  remove: (absolute) => removeFile(absolute)
};

/** Options of {@link applyChanges}. */
export interface ApplyOptions {
  workspace: string;
  /** Open notebooks are changed through the pane that has them open. */
  port?: NotebookPort;
  signal?: AbortSignal;
  fs?: EditFs;
}

/** What happened to one file. */
export interface AppliedFile {
  path: string;
  how: 'created' | 'modified' | 'deleted' | 'open-notebook';
  /** For notebooks: the references of the changed cells. */
  cells?: string[];
}

interface DiskWrite {
  relative: string;
  absolute: string;
  original: string | null;
  next: string | null;
  cells?: string[];
}

interface PaneWrite {
  relative: string;
  target: PaneTarget;
  changes: NotebookSourceChange[];
}

/** Strict UTF-8; a byte-order mark stays in the text (as `readFile(…, 'utf8')` keeps it), so it is compared and written back. */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Applies `changes` all or nothing (see the module comment); returns what changed, in order. */
export async function applyChanges(changes: readonly Change[], options: ApplyOptions): Promise<AppliedFile[]> {
  const fs = options.fs ?? nodeEditFs;
  const disk: DiskWrite[] = [];
  const panes: PaneWrite[] = [];
  const conflicts: string[] = [];
  const conflicted = new Set<string>();
  const seen = new Set<string>();
  const conflict = (relative: string, why: string): void => {
    conflicts.push(`${relative}: ${why}`);
    conflicted.add(relative);
  };

  const resolvedAll: ResolvedWorkspacePath[] = [];
  for (const change of changes) {
    const resolved = await resolveForWrite(options.workspace, change.path);
    if (seen.has(resolved.absolute))
      throw new EditError(
        'invalid',
        `${resolved.relative} appears twice in the change set; merge its changes. Nothing was changed.`,
        [resolved.relative]
      );
    seen.add(resolved.absolute);
    resolvedAll.push(resolved);
  }
  // Which notebooks are open: each pane is asked once for the whole change set.
  const notebooks = changes.flatMap((c, i) => (c.kind === 'cells' ? [resolvedAll[i]!.relative] : []));
  const open =
    options.port && notebooks.length > 0
      ? await openNotebooks(options.port, notebooks, options.signal)
      : new Map<string, PaneTarget>();

  for (const [i, change] of changes.entries()) {
    const resolved = resolvedAll[i]!;
    const rel = resolved.relative;
    if (change.kind === 'cells') {
      const target = open.get(rel);
      if (target) {
        const request = change.cells.map((c) => ({ cellId: c.cell, expected: c.expected, source: c.next }));
        try {
          await target.request('notebook/set-sources', { path: rel, changes: request, dryRun: true }, options.signal);
          panes.push({ relative: rel, target, changes: request });
        } catch (e) {
          conflict(rel, `open in JupyterLab, and ${paneMessage(e)}`);
        }
        continue;
      }
    }
    const bytes = await fs.read(resolved.absolute);
    let current: string | null = null;
    if (bytes !== null) {
      try {
        current = utf8.decode(bytes);
      } catch {
        throw new EditError('invalid', `${rel} is not UTF-8 text; it cannot be edited as text. Nothing was changed.`, [
          rel
        ]);
      }
    }
    if (change.kind === 'text') {
      if (change.expected === null && current !== null) conflict(rel, 'exists, but the change creates it');
      else if (change.expected !== null && current === null) conflict(rel, 'does not exist (any more)');
      else if (current !== change.expected) conflict(rel, 'changed since the edit was computed');
      else if (change.next !== null || current !== null)
        disk.push({ relative: rel, absolute: resolved.absolute, original: current, next: change.next });
      continue;
    }
    if (current === null) {
      conflict(rel, 'does not exist (any more)');
      continue;
    }
    if (change.expectedFile !== undefined && current !== change.expectedFile) {
      conflict(rel, 'changed since the edit was computed (the file differs from the snapshot)');
      continue;
    }
    const next = spliceNotebook(rel, current, change, conflict);
    if (next !== undefined)
      disk.push({
        relative: rel,
        absolute: resolved.absolute,
        original: current,
        next,
        cells: change.cells.map((c) => c.cell)
      });
  }
  if (conflicts.length > 0) {
    throw new EditError(
      'conflict',
      `Nothing was changed: ${conflicts.length === 1 ? 'a file is' : `${conflicted.size} file${conflicted.size === 1 ? ' is' : 's are'}`} not what the edit was computed from.\n${conflicts.map((c) => `- ${c}`).join('\n')}\nRead ${conflicted.size === 1 ? 'it' : 'them'} again and recompute the edit.`,
      [...conflicted]
    );
  }
  if (options.signal?.aborted)
    throw new EditError('invalid', 'The edit was cancelled before anything was written. Nothing was changed.');

  const written = await writeAll(disk, fs);
  const applied: PaneWrite[] = [];
  for (const p of panes) {
    try {
      // No signal from here on: a half-applied edit is worse than a late one.
      await p.target.request('notebook/set-sources', { path: p.relative, changes: p.changes });
      applied.push(p);
    } catch (e) {
      const undone = await undoPanes(applied);
      const rolled = await rollback(written, fs);
      throw new EditError(
        'write-failed',
        `Could not change ${p.relative} in JupyterLab (${paneMessage(e)}). ${[undone, rolled].filter(Boolean).join(' ') || 'Nothing had been written yet.'}`,
        [p.relative],
        { cause: e }
      );
    }
  }
  return [
    ...disk.map((d): AppliedFile => ({
      path: d.relative,
      how: d.original === null ? 'created' : d.next === null ? 'deleted' : 'modified',
      ...(d.cells ? { cells: d.cells } : {})
    })),
    ...panes.map((p): AppliedFile => ({
      path: p.relative,
      how: 'open-notebook',
      cells: p.changes.map((c) => c.cellId)
    }))
  ];
}

/** Which of `paths` a pane has open (a port that cannot answer: none). */
async function openNotebooks(
  port: NotebookPort,
  paths: readonly string[],
  signal?: AbortSignal
): Promise<Map<string, PaneTarget>> {
  if (port.findOpen) return port.findOpen(paths, signal).catch(() => new Map<string, PaneTarget>());
  const found = new Map<string, PaneTarget>();
  for (const p of paths) {
    const target = await port.find(p, signal).catch(() => undefined);
    if (target) found.set(p, target);
  }
  return found;
}

/** The notebook's new raw text, or undefined after recording conflicts. */
function spliceNotebook(
  rel: string,
  raw: string,
  change: NotebookCellsChange,
  conflict: (rel: string, why: string) => void
): string | undefined {
  let nb: IpynbNotebook;
  try {
    nb = parseNotebook(raw);
  } catch (e) {
    throw new EditError(
      'invalid',
      `${rel} is not a valid nbformat 4 notebook (${(e as Error).message}). Nothing was changed.`,
      [rel]
    );
  }
  const splices: Array<{ index: number; source: string }> = [];
  let stale = false;
  for (const c of change.cells) {
    const index = findCell(nb, c.cell);
    if (index < 0) {
      conflict(rel, `has no cell "${c.cell}" (any more)`);
      stale = true;
    } else if (sourceText(nb.cells[index]!.source) !== c.expected) {
      conflict(rel, `cell "${c.cell}" (cell ${index + 1}) changed since the edit was computed`);
      stale = true;
    } else {
      splices.push({ index, source: c.next });
    }
  }
  if (stale) return undefined;
  try {
    return spliceCellSources(raw, splices);
  } catch (e) {
    if (e instanceof EditError) throw new EditError('invalid', `${rel}: ${e.message} Nothing was changed.`, [rel]);
    throw e;
  }
}

/** Writes in order; on a failure restores what was written and throws `write-failed`. */
async function writeAll(disk: readonly DiskWrite[], fs: EditFs): Promise<DiskWrite[]> {
  const done: DiskWrite[] = [];
  for (const d of disk) {
    try {
      if (d.next === null) await fs.remove(d.absolute);
      else await fs.write(d.absolute, d.next);
      done.push(d);
    } catch (e) {
      const rolled = await rollback(done, fs);
      throw new EditError(
        'write-failed',
        `Writing ${d.relative} failed (${(e as Error).message}). ${rolled || 'Nothing had been written yet.'}`,
        [d.relative],
        { cause: e }
      );
    }
  }
  return done;
}

/** Restores written files (newest first); says what it did, or what it could not restore. */
async function rollback(done: readonly DiskWrite[], fs: EditFs): Promise<string> {
  if (done.length === 0) return '';
  const failed: string[] = [];
  for (const d of [...done].reverse()) {
    try {
      if (d.original === null) await fs.remove(d.absolute);
      else await fs.write(d.absolute, d.original);
    } catch (e) {
      failed.push(`${d.relative} (${(e as Error).message})`);
    }
  }
  const names = done.map((d) => d.relative).join(', ');
  return failed.length === 0
    ? `The ${done.length} file${done.length === 1 ? '' : 's'} already written (${names}) ${done.length === 1 ? 'was' : 'were'} restored: nothing was changed.`
    : `Restoring failed for ${failed.join(', ')}: ${failed.length === 1 ? 'that file holds' : 'those files hold'} the new content; the others of ${names} were restored.`;
}

/** A pane's error without vscode-jsonrpc's `Request … failed with message:` wrapper. */
function paneMessage(error: unknown): string {
  return ((error as Error).message ?? String(error)).replace(/^Request \S+ failed with message: /, '');
}

/** Sets the panes already changed back to their sources before the edit. */
async function undoPanes(applied: readonly PaneWrite[]): Promise<string> {
  if (applied.length === 0) return '';
  const failed: string[] = [];
  for (const p of [...applied].reverse()) {
    const back = p.changes.map((c) => ({ cellId: c.cellId, expected: c.source, source: c.expected }));
    await p.target
      .request('notebook/set-sources', { path: p.relative, changes: back })
      .catch((e: unknown) => failed.push(`${p.relative} (${paneMessage(e)})`));
  }
  return failed.length === 0
    ? `The open notebook${applied.length === 1 ? '' : 's'} already changed (${applied.map((p) => p.relative).join(', ')}) ${applied.length === 1 ? 'was' : 'were'} set back.`
    : `Setting back failed for ${failed.join(', ')} (use undo there).`;
}
