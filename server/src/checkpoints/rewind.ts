/**
 * Rewinding turns: from their checkpoints (`checkpoint-store.ts`), each path goes back to
 * what it held before the oldest of the turns changed it. The plan compares what is there
 * now with what the newest turn left: a difference is the person's own change since — a
 * conflict, shown and never overwritten unless the person says so. Restores go through the
 * same write paths as the edits: the atomic file write and remove (`workspace/file-io.ts`), and
 * for a notebook open in JupyterLab its pane's shared model in one undoable step
 * (`notebook/set-cells`), so the open notebook changes live and collaborators see it.
 * The kernel's state is not rewound; the plan names what the undone code cells had bound.
 */
import path from 'node:path';
import type { DiffFileChange, NotebookCellData, RewindPreview } from '@cellmate/protocol';
import { unifiedDiff } from '../edits/unified-diff.js';
import { removeEmptyFolders, removeFile, writeFileAtomic } from '../workspace/file-io.js';
import { parseNotebook, serializeNotebook, sourceLines, toCellData } from '../notebooks/ipynb.js';
import type { NotebookPort } from '../notebooks/pane-hub.js';
import { isInside, resolveWorkspacePath } from '../workspace/workspace-path.js';
import { assignedNames } from './assigned-names.js';
import { readFileState, type CheckpointStore, type KeptState, type TurnCheckpoint } from './checkpoint-store.js';

type PlannedFile = RewindPreview['files'][number];

/** One path of a rewind: what to restore, what the turns left, what is there now. */
interface PathPlan {
  path: string;
  absolute: string;
  before: KeptState;
  after?: KeptState;
  now: KeptState;
  /** The pane that has the notebook open now. */
  open: boolean;
  action: PlannedFile['action'];
  why?: string;
}

export interface RewindOptions {
  workspace: string;
  store: CheckpointStore;
  port?: NotebookPort;
}

/** A rewind's plan: per path, with the preview the pane shows. */
export interface RewindPlan {
  turns: TurnCheckpoint[];
  paths: PathPlan[];
  preview: RewindPreview;
}

/** Plans rewinding `turnIds` (the chat's turns in order; those without a checkpoint are skipped). */
export async function planRewind(
  chatId: string,
  turnIds: readonly string[],
  options: RewindOptions
): Promise<RewindPlan> {
  const turns = turnIds.flatMap((t) => options.store.get(chatId, t) ?? []);
  const byPath = new Map<string, { before: KeptState; after?: KeptState }>();
  for (const turn of turns) {
    for (const e of turn.entries) {
      const seen = byPath.get(e.path);
      // The oldest turn's before; the newest turn's after.
      if (!seen) byPath.set(e.path, { before: e.before, ...(e.after ? { after: e.after } : {}) });
      else if (e.after) seen.after = e.after;
      else delete seen.after;
    }
  }
  const open = options.port?.findOpen
    ? await options.port.findOpen([...byPath.keys()]).catch(() => new Map())
    : new Map();
  const paths: PathPlan[] = [];
  for (const [p, { before, after }] of byPath) {
    // A checkpoint file is untrusted input too: its paths stay inside the workspace, and out
    // of Cellmate's own folder (policy, journals), which no recorder ever keeps.
    const resolved = await resolveWorkspacePath(options.workspace, p).catch(() => undefined);
    if (!resolved || resolved.relative.split(/[\\/]/)[0] === '.cellmate') continue;
    const target = open.get(p);
    const now: KeptState = target
      ? { kind: 'cells', cells: (await target.request('notebook/read', { path: p })).cells }
      : await readFileState(resolved.absolute);
    const plan: PathPlan = {
      path: p,
      absolute: resolved.absolute,
      before,
      ...(after ? { after } : {}),
      now,
      open: !!target,
      action: 'restore'
    };
    if (same(p, now, before)) continue; // already as it was
    if (before.kind === 'dropped') {
      plan.action = 'unavailable';
      plan.why = `its earlier content (${before.bytes} bytes) was too large to keep`;
    } else if (!after || after.kind === 'dropped') {
      plan.action = 'conflict';
      plan.why = 'what the agent left could not be recorded, so a later change of yours cannot be told apart';
    } else if (!same(p, now, after)) {
      plan.action = 'conflict';
      plan.why =
        now.kind === 'absent'
          ? 'it was deleted after the agent changed it'
          : 'it was changed after the agent changed it (by you, or something else)';
    } else if (before.kind === 'absent') {
      plan.action = 'remove';
      plan.why = 'the turn created it';
    }
    paths.push(plan);
  }
  const files = paths.map((p): PlannedFile => ({ ...diffOf(p), action: p.action, ...(p.why ? { why: p.why } : {}) }));
  const kernelNames = await undoneNames(paths);
  const conflicts = files.filter((f) => f.action === 'conflict').length;
  const summary =
    files.length === 0
      ? 'Nothing to restore: every file is as it was before.'
      : `${files.length} file${files.length === 1 ? '' : 's'} to restore${conflicts ? `; ${conflicts} changed since the agent's edit (kept unless you choose to overwrite)` : ''}.`;
  return { turns, paths, preview: { files, kernelNames, turns: turns.map((t) => t.turnId), summary } };
}

/** What a restore did. */
export interface RestoreOutcome {
  restored: string[];
  skipped: string[];
  failed: string[];
}

/** Restores the plan's paths (conflicts only with `overwrite`). */
export async function restore(
  plan: RewindPlan,
  options: RewindOptions & { overwrite?: boolean }
): Promise<RestoreOutcome> {
  const outcome: RestoreOutcome = { restored: [], skipped: [], failed: [] };
  for (const p of plan.paths) {
    if (p.action === 'unavailable' || (p.action === 'conflict' && !options.overwrite)) {
      outcome.skipped.push(p.path);
      continue;
    }
    try {
      await restoreOne(p, options);
      outcome.restored.push(p.path);
    } catch (e) {
      outcome.failed.push(`${p.path} (${(e as Error).message})`);
    }
  }
  return outcome;
}

async function restoreOne(p: PathPlan, options: RewindOptions): Promise<void> {
  const before = p.before;
  if (before.kind === 'absent') {
    if (p.now.kind !== 'absent' && !p.open) {
      await removeFile(p.absolute);
      // The folders the turn created for it go too, if nothing else is in them now. The name
      // comes from a file on disk: only a folder inside the workspace that holds this file.
      const top =
        before.folder === undefined
          ? undefined
          : await resolveWorkspacePath(options.workspace, before.folder).catch(() => undefined);
      if (top && top.relative !== '.' && top.absolute !== p.absolute && isInside(top.absolute, p.absolute))
        await removeEmptyFolders(path.dirname(p.absolute), top.absolute);
    } else if (p.open)
      throw new Error('the turn created this notebook and it is open in JupyterLab; close it, then rewind again');
    return;
  }
  if (p.open) {
    const target = options.port ? await options.port.find(p.path) : undefined;
    if (!target) throw new Error('the notebook was closed meanwhile; rewind again');
    await target.request('notebook/set-cells', { path: p.path, cells: cellsOf(before) });
    return;
  }
  if (before.kind === 'bytes') {
    await writeFileAtomic(p.absolute, Buffer.from(before.base64, 'base64'));
    return;
  }
  if (before.kind === 'cells') {
    // Kept from an open notebook, closed now: its cells go back into the file on disk.
    if (p.now.kind !== 'bytes') throw new Error('the notebook no longer exists on disk');
    const nb = parseNotebook(Buffer.from(p.now.base64, 'base64').toString('utf8'));
    nb.cells = before.cells.map((c) => ({
      cell_type: c.cell_type,
      id: c.id,
      metadata: c.metadata,
      source: sourceLines(c.source),
      ...(c.cell_type === 'code' ? { outputs: c.outputs ?? [], execution_count: c.execution_count ?? null } : {})
    })) as typeof nb.cells;
    await writeFileAtomic(p.absolute, serializeNotebook(nb));
  }
}

/** A state's notebook cells (bytes parsed as nbformat), or undefined for a non-notebook. */
function cellsOf(state: KeptState): NotebookCellData[] {
  if (state.kind === 'cells') return state.cells;
  if (state.kind === 'bytes') {
    const nb = parseNotebook(Buffer.from(state.base64, 'base64').toString('utf8'));
    return nb.cells.map((_, i) => toCellData(nb, i));
  }
  return [];
}

function isNotebook(p: string): boolean {
  return p.endsWith('.ipynb');
}

/** What a cell is, for comparing: its type, source, outputs and count (not UI metadata). */
function cellKey(c: NotebookCellData): string {
  return JSON.stringify([c.id, c.cell_type, c.source, c.outputs ?? [], c.execution_count ?? null]);
}

function safeCells(state: KeptState): NotebookCellData[] | undefined {
  try {
    return cellsOf(state);
  } catch {
    return undefined;
  }
}

/** Whether two states hold the same content (a notebook compared by cells when either is an open document's). */
export function same(p: string, a: KeptState, b: KeptState): boolean {
  if (a.kind === 'absent' || b.kind === 'absent') return a.kind === b.kind;
  if (a.kind === 'dropped' || b.kind === 'dropped') return false;
  if (a.kind === 'bytes' && b.kind === 'bytes') return a.base64 === b.base64;
  if (!isNotebook(p)) return false;
  const ca = safeCells(a);
  const cb = safeCells(b);
  return !!ca && !!cb && ca.length === cb.length && ca.every((c, i) => cellKey(c) === cellKey(cb[i]!));
}

function text(state: KeptState): string | undefined {
  if (state.kind === 'absent') return '';
  if (state.kind !== 'bytes') return undefined;
  const bytes = Buffer.from(state.base64, 'base64');
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** The diff card of one path: from what is there now to what will be restored. */
function diffOf(p: PathPlan): DiffFileChange {
  if (p.before.kind === 'dropped') return { path: p.path, diff: '' };
  if (isNotebook(p.path)) {
    const now = p.now.kind === 'absent' ? [] : safeCells(p.now);
    const was = p.before.kind === 'absent' ? [] : safeCells(p.before);
    if (now && was) return { path: p.path, cells: cellDiffs(now, was) };
  }
  const a = text(p.now);
  const b = text(p.before);
  if (a === undefined || b === undefined) return { path: p.path, diff: '@@ binary file @@' };
  return { path: p.path, diff: unifiedDiff(a, b) };
}

/** Per-cell changes from `now` back to `was`, matched by cell id. */
function cellDiffs(now: NotebookCellData[], was: NotebookCellData[]): NonNullable<DiffFileChange['cells']> {
  const out: NonNullable<DiffFileChange['cells']> = [];
  const nowById = new Map(now.map((c) => [c.id, c]));
  const wasIds = new Set(was.map((c) => c.id));
  was.forEach((cell, index) => {
    const current = nowById.get(cell.id);
    if (!current) {
      out.push({ index, id: cell.id, diff: unifiedDiff('', cell.source), note: `cell restored at ${index + 1}` });
      return;
    }
    const notes: string[] = [];
    if (
      JSON.stringify(current.outputs ?? []) !== JSON.stringify(cell.outputs ?? []) ||
      (current.execution_count ?? null) !== (cell.execution_count ?? null)
    ) {
      notes.push((cell.outputs?.length ?? 0) === 0 ? 'outputs cleared, as they were' : 'outputs restored');
    }
    if (current.cell_type !== cell.cell_type) notes.push(`back to a ${cell.cell_type} cell`);
    const diff = current.source === cell.source ? '' : unifiedDiff(current.source, cell.source);
    if (diff || notes.length)
      out.push({ index, id: cell.id, diff, ...(notes.length ? { note: notes.join('; ') } : {}) });
  });
  now.forEach((cell, index) => {
    if (!wasIds.has(cell.id))
      out.push({ index, id: cell.id, diff: unifiedDiff(cell.source, ''), note: 'cell removed (the agent added it)' });
  });
  return out;
}

/** The names the code cells being undone bind (their kernel values stay). */
async function undoneNames(paths: readonly PathPlan[]): Promise<string[]> {
  const names: string[] = [];
  for (const p of paths) {
    if (!isNotebook(p.path) || p.action === 'unavailable') continue;
    const left = p.after ? safeCells(p.after) : safeCells(p.now);
    const was = new Map((p.before.kind === 'absent' ? [] : (safeCells(p.before) ?? [])).map((c) => [c.id, cellKey(c)]));
    for (const cell of left ?? []) {
      // A cell the turns changed or ran: its code may have bound names in the kernel.
      if (cell.cell_type !== 'code' || was.get(cell.id) === cellKey(cell)) continue;
      if ((cell.outputs?.length ?? 0) === 0 && cell.execution_count == null) continue; // never ran
      for (const n of await assignedNames(cell.source).catch(() => [])) if (!names.includes(n)) names.push(n);
    }
  }
  return names;
}

/** The transcript's note after a rewind. */
export function rewindMessage(outcome: RestoreOutcome, kernelNames: readonly string[]): string {
  const parts: string[] = [];
  parts.push(
    outcome.restored.length
      ? `Restored ${outcome.restored.join(', ')} to before the agent's changes.`
      : 'Nothing was restored.'
  );
  if (outcome.skipped.length) parts.push(`Left as they are: ${outcome.skipped.join(', ')}.`);
  if (outcome.failed.length) parts.push(`Could not restore ${outcome.failed.join('; ')}.`);
  parts.push(
    kernelNames.length
      ? `The kernel's state is not rewound: it still holds ${kernelNames.join(', ')}, set by the undone cells. Re-run the cells (or restart the kernel) to match the notebook.`
      : "The kernel's state is not rewound: anything the undone code ran is still in the kernel."
  );
  return parts.join(' ');
}
