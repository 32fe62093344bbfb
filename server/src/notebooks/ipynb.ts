/**
 * `.ipynb` files on disk (nbformat 4), pure: parse with a structural check, apply edit ops
 * (insert / replace / delete / move, planned by the shared `planNotebookEdits` the open
 * notebook uses too) keeping every untouched cell byte-for-byte in its JSON shape (ids,
 * metadata, outputs, attachments), and serialize the way Jupyter does
 * (indent 1, trailing newline). New cells get nbformat ids when the file's minor version
 * has them (≥ 4.5); the minor version is never changed.
 */
import {
  cellRefAt,
  findCellIndex,
  newCellId,
  planNotebookEdits,
  toCellData as planToCellData,
  type CellmateCellMark,
  type NotebookCellData,
  type NotebookEditOp,
  type PlanCell
} from '@cellmate/protocol';

/** A notebook as parsed from disk; cells keep every field they had. */
export interface IpynbNotebook {
  nbformat: number;
  nbformat_minor: number;
  metadata: Record<string, unknown>;
  cells: IpynbCell[];
  [key: string]: unknown;
}

/** A cell as read from an `.ipynb`: the planner's cell, with every other field carried along. */
export interface IpynbCell extends PlanCell {
  [key: string]: unknown;
}

/** A notebook that is not valid nbformat 4 (the message says what is wrong). */
export class NotebookFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotebookFormatError';
  }
}

const CELL_TYPES = new Set(['code', 'markdown', 'raw']);

/** Parses and checks the structure nbformat 4 requires (the parts edits rely on). */
export function parseNotebook(text: string): IpynbNotebook {
  let nb: unknown;
  try {
    nb = JSON.parse(text);
  } catch (e) {
    throw new NotebookFormatError(`not JSON (${(e as Error).message})`);
  }
  if (!isObject(nb)) throw new NotebookFormatError('the top level is not an object');
  if (nb.nbformat !== 4) throw new NotebookFormatError(`nbformat ${String(nb.nbformat)} is not supported (only 4)`);
  if (typeof nb.nbformat_minor !== 'number') throw new NotebookFormatError('nbformat_minor is missing');
  if (!isObject(nb.metadata)) throw new NotebookFormatError('metadata is missing');
  if (!Array.isArray(nb.cells)) throw new NotebookFormatError('cells is not a list');
  nb.cells.forEach((c, i) => {
    if (!isObject(c) || !CELL_TYPES.has(c.cell_type as string))
      throw new NotebookFormatError(`cell ${i} has no valid cell_type`);
    if (typeof c.source !== 'string' && !(Array.isArray(c.source) && c.source.every((l) => typeof l === 'string'))) {
      throw new NotebookFormatError(`cell ${i} has no valid source`);
    }
    if (!isObject(c.metadata)) throw new NotebookFormatError(`cell ${i} has no metadata`);
  });
  return nb as IpynbNotebook;
}

/** Jupyter's own layout: one-space indent, non-ASCII kept, trailing newline. */
export function serializeNotebook(nb: IpynbNotebook): string {
  return `${JSON.stringify(nb, null, 1)}\n`;
}

/** Whether cells of this notebook carry ids (nbformat ≥ 4.5). */
export function hasCellIds(nb: IpynbNotebook): boolean {
  return nb.nbformat_minor >= 5;
}

export const sourceText = (s: string | string[]): string => (Array.isArray(s) ? s.join('') : s);

/** Source as Jupyter writes it: a list of lines, each but the last ending in `\n`. */
export function sourceLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/**
 * The id the tools use for a cell: its nbformat id, or `#<n>` in notebooks without ids,
 * where n is the cell's number as `notebook_read` shows it (counting from 1).
 */
export function cellRef(nb: IpynbNotebook, index: number): string {
  return cellRefAt(nb.cells, index);
}

/** Index of a cell by id (or `#<n>`, n counting from 1); -1 when absent. */
export function findCell(nb: IpynbNotebook, ref: string): number {
  return findCellIndex(nb.cells, ref);
}

/** The port's view of a disk cell. */
export function toCellData(nb: IpynbNotebook, index: number): NotebookCellData {
  return planToCellData(nb.cells[index]!, cellRef(nb, index));
}

/**
 * Applies ops with the shared planner (`@cellmate/protocol` `planNotebookEdits`, the same
 * rules as an open notebook); throws `NotebookEditError` naming the first bad op (nothing is
 * applied then). Cells the planner made or changed get Jupyter's line-list source; every
 * other cell is the same object, so it serializes as it was read.
 */
export function applyEdits(
  original: IpynbNotebook,
  ops: readonly NotebookEditOp[],
  mark: CellmateCellMark
): { notebook: IpynbNotebook; insertedIds: string[] } {
  const plan = planNotebookEdits(original.cells, ops, { mark, withIds: hasCellIds(original), newId: newCellId });
  const untouched = new Set<unknown>(original.cells);
  const cells = plan.cells.map((c): IpynbCell =>
    untouched.has(c) ? (c as IpynbCell) : { ...c, source: sourceLines(sourceText(c.source)) }
  );
  return { notebook: { ...original, cells }, insertedIds: plan.insertedIds };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
