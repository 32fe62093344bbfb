/**
 * The one notebook-edit planner: pure, browser-safe, no dependencies. Both
 * places that change a notebook use it — the companion's disk path (`server/src/tools/
 * notebook/ipynb.ts`) and the pane's open document (`lab-extension/src/notebook-port.ts`) —
 * so `insert` / `replace` / `delete` / `move`, cell references, validation, the
 * `metadata.cellmate` mark, cleared outputs and new ids mean the same in both.
 *
 * `planNotebookEdits(cells, ops, options)` checks every op against a simulated cell list
 * (all or nothing: the first bad op throws {@link NotebookEditError}, nothing is planned)
 * and returns
 * - `cells`: the new cell list (untouched cells are the same objects, so a caller that
 *   serializes them keeps their JSON byte for byte),
 * - `steps`: the primitive changes in order, indices as they are when the step runs, for a
 *   live document that must be changed in place (a shared model: undo, collaborators),
 * - `insertedIds`: the references of the inserted cells in the final notebook.
 *
 * Rules both paths follow:
 * - A reference is a cell id, or `#<n>` (n counting from 1, in the notebook as it is when that op
 *   runs) — notebooks older than nbformat 4.5 have no ids.
 * - Inserted cells carry `metadata.cellmate = mark`; code cells start with no outputs.
 * - `replace` keeping the type sets the source and, for a code cell, clears its outputs and
 *   execution count (everything else — metadata, attachments, id — stays). `replace` with a
 *   new `cellType` makes a fresh cell of that type with the old id and metadata.
 * - `move` puts the cell at `toIndex` of the list after it was taken out.
 */
import type { CellmateCellMark, NotebookCellData, NotebookEditOp } from './notebook-cells.js';

/** A cell as the planner sees it (nbformat 4 JSON; any other field is carried along). */
export interface PlanCell {
  cell_type: 'code' | 'markdown' | 'raw';
  source: string | string[];
  metadata: Record<string, unknown>;
  id?: string;
  outputs?: unknown[];
  execution_count?: number | null;
}

/** One primitive change of a live document; apply `steps` in order. */
export type PlanStep =
  | { kind: 'insert'; index: number; cells: PlanCell[] }
  /** Same type: set the source; `clearOutputs` for a code cell (outputs `[]`, count `null`). */
  | { kind: 'set-source'; index: number; source: string; clearOutputs: boolean }
  /** New type: delete the cell at `index` and insert `cell` (same id and metadata) there. */
  | { kind: 'change-type'; index: number; cell: PlanCell }
  | { kind: 'delete'; index: number }
  | { kind: 'move'; from: number; to: number };

/** What {@link planNotebookEdits} returns. */
export interface NotebookPlan<C extends PlanCell> {
  cells: Array<C | PlanCell>;
  steps: PlanStep[];
  insertedIds: string[];
}

/** The mark of a cell the user copied from the transcript ("Copy to notebook"). */
export interface CopyCellMark {
  created_by: 'agent-copy';
}

/** Options of {@link planNotebookEdits}. */
export interface PlanOptions {
  /** The mark inserted cells carry as `metadata.cellmate`. */
  mark: CellmateCellMark | CopyCellMark;
  /** Whether cells carry ids (nbformat ≥ 4.5; always in an open JupyterLab document). */
  withIds: boolean;
  /** A fresh id not in `taken` (the caller's randomness keeps this module pure). */
  newId(taken: ReadonlySet<string>): string;
}

/** An op that cannot apply (the message names it: `edit 2 (move): …`); nothing was changed. */
export class NotebookEditError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotebookEditError';
  }
}

/**
 * Index of a cell by id, or by `#<n>` with n counting from 1 (as `notebook_read` numbers
 * cells, in notebooks without ids); -1 when absent.
 */
export function findCellIndex(cells: readonly Pick<PlanCell, 'id'>[], ref: string): number {
  const m = /^#(\d+)$/.exec(ref);
  if (m) {
    const i = Number(m[1]) - 1;
    return i >= 0 && i < cells.length ? i : -1;
  }
  return cells.findIndex((c) => c.id === ref);
}

/** The reference the tools use for the cell at (0-based) `index`: its id, else `#<index + 1>`. */
export function cellRefAt(cells: readonly Pick<PlanCell, 'id'>[], index: number): string {
  const id = cells[index]?.id;
  return typeof id === 'string' ? id : `#${index + 1}`;
}

/** The port's view of a cell (source joined; outputs only on code cells). */
export function toCellData(cell: PlanCell, ref: string): NotebookCellData {
  return {
    id: ref,
    cell_type: cell.cell_type,
    source: Array.isArray(cell.source) ? cell.source.join('') : cell.source,
    metadata: cell.metadata ?? {},
    ...(cell.cell_type === 'code' ? { outputs: cell.outputs ?? [], execution_count: cell.execution_count ?? null } : {})
  };
}

/** A fresh cell (outputs empty for code). */
export function newPlanCell(
  type: PlanCell['cell_type'],
  source: string,
  metadata: Record<string, unknown>,
  id: string | undefined
): PlanCell {
  const base: PlanCell = { cell_type: type, ...(id ? { id } : {}), metadata, source };
  return type === 'code' ? { ...base, execution_count: null, outputs: [] } : base;
}

const TYPES = new Set(['code', 'markdown', 'raw']);

/**
 * Plans `ops` against `cells` (see the module comment).
 * @throws NotebookEditError naming the first op that cannot apply
 */
export function planNotebookEdits<C extends PlanCell>(
  cells: readonly C[],
  ops: readonly NotebookEditOp[],
  options: PlanOptions
): NotebookPlan<C> {
  const out: Array<C | PlanCell> = cells.slice();
  const steps: PlanStep[] = [];
  const taken = new Set(cells.map((c) => c.id).filter((x): x is string => typeof x === 'string'));
  const inserted: PlanCell[] = [];
  const freshId = (): string | undefined => {
    if (!options.withIds) return undefined;
    const id = options.newId(taken);
    if (taken.has(id)) throw new NotebookEditError(`the id generator returned "${id}", which is taken`);
    taken.add(id);
    return id;
  };
  ops.forEach((op, n) => {
    const where = `edit ${n + 1} (${String((op as { op?: unknown }).op)})`;
    if (op.op === 'insert') {
      if (!Number.isInteger(op.index) || op.index < 0 || op.index > out.length) {
        throw new NotebookEditError(`${where}: index ${op.index} is outside 0–${out.length}`);
      }
      if (!Array.isArray(op.cells) || op.cells.length === 0)
        throw new NotebookEditError(`${where}: no cells to insert`);
      const fresh = op.cells.map((c, k) => {
        if (!TYPES.has(c.cell_type))
          throw new NotebookEditError(`${where}: cell ${k + 1} has cell_type "${c.cell_type}" (code, markdown or raw)`);
        return newPlanCell(c.cell_type, c.source, { cellmate: { ...options.mark } }, freshId());
      });
      out.splice(op.index, 0, ...fresh);
      inserted.push(...fresh);
      steps.push({ kind: 'insert', index: op.index, cells: fresh });
      return;
    }
    if (op.op !== 'replace' && op.op !== 'delete' && op.op !== 'move')
      throw new NotebookEditError(`${where}: unknown op`);
    const i = findCellIndex(out, op.cellId);
    if (i < 0) throw new NotebookEditError(`${where}: no cell with id "${op.cellId}"`);
    const cell = out[i]!;
    if (op.op === 'replace') {
      const type = op.cellType ?? cell.cell_type;
      if (!TYPES.has(type)) throw new NotebookEditError(`${where}: cellType "${type}" is not code, markdown or raw`);
      const clearOutputs = type === 'code';
      const next: PlanCell =
        type === cell.cell_type
          ? { ...cell, source: op.source, ...(clearOutputs ? { outputs: [], execution_count: null } : {}) }
          : newPlanCell(type, op.source, cell.metadata, cell.id);
      out[i] = next;
      steps.push(
        type === cell.cell_type
          ? { kind: 'set-source', index: i, source: op.source, clearOutputs }
          : { kind: 'change-type', index: i, cell: next }
      );
      const k = inserted.indexOf(cell);
      if (k >= 0) inserted[k] = next; // an inserted cell rewritten in the same batch
    } else if (op.op === 'delete') {
      out.splice(i, 1);
      steps.push({ kind: 'delete', index: i });
    } else {
      if (!Number.isInteger(op.toIndex) || op.toIndex < 0 || op.toIndex >= out.length) {
        throw new NotebookEditError(`${where}: toIndex ${op.toIndex} is outside 0–${out.length - 1}`);
      }
      out.splice(i, 1);
      out.splice(op.toIndex, 0, cell);
      if (op.toIndex !== i) steps.push({ kind: 'move', from: i, to: op.toIndex });
    }
  });
  // An inserted cell deleted by a later op of the same batch is not reported.
  const insertedIds = inserted.flatMap((c) => {
    const at = out.indexOf(c);
    return at < 0 ? [] : [c.id ?? `#${at + 1}`];
  });
  return { cells: out, steps, insertedIds };
}
