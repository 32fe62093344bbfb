/**
 * `.ipynb` files on disk (nbformat 4), pure: parse with a structural check, apply edit ops
 * (insert / replace / delete / move) keeping every untouched cell byte-for-byte in its
 * JSON shape (ids, metadata, outputs, attachments), and serialize the way Jupyter does
 * (indent 1, trailing newline). New cells get nbformat ids when the file's minor version
 * has them (≥ 4.5); the minor version is never changed.
 */
import { randomBytes } from 'node:crypto';
import type { CellmateCellMark, NotebookCellData, NotebookEditOp } from '@cellmate/protocol';

/** A notebook as parsed from disk; cells keep every field they had. */
export interface IpynbNotebook {
  nbformat: number;
  nbformat_minor: number;
  metadata: Record<string, unknown>;
  cells: IpynbCell[];
  [key: string]: unknown;
}

export interface IpynbCell {
  cell_type: 'code' | 'markdown' | 'raw';
  source: string | string[];
  metadata: Record<string, unknown>;
  id?: string;
  outputs?: unknown[];
  execution_count?: number | null;
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
    if (!isObject(c) || !CELL_TYPES.has(c.cell_type as string)) throw new NotebookFormatError(`cell ${i} has no valid cell_type`);
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
  const id = nb.cells[index]?.id;
  return typeof id === 'string' ? id : `#${index + 1}`;
}

/** Index of a cell by id (or `#<n>`, n counting from 1); -1 when absent. */
export function findCell(nb: IpynbNotebook, ref: string): number {
  const m = /^#(\d+)$/.exec(ref);
  if (m) {
    const i = Number(m[1]) - 1;
    return i >= 0 && i < nb.cells.length ? i : -1;
  }
  return nb.cells.findIndex((c) => c.id === ref);
}

/** A fresh nbformat cell id not used in `taken`. */
export function newCellId(taken: Set<string>): string {
  for (;;) {
    const id = randomBytes(4).toString('hex');
    if (!taken.has(id)) {
      taken.add(id);
      return id;
    }
  }
}

/** The port's view of a disk cell. */
export function toCellData(nb: IpynbNotebook, index: number): NotebookCellData {
  const c = nb.cells[index]!;
  return {
    id: cellRef(nb, index),
    cell_type: c.cell_type,
    source: sourceText(c.source),
    metadata: c.metadata,
    ...(c.cell_type === 'code' ? { outputs: c.outputs ?? [], execution_count: c.execution_count ?? null } : {})
  };
}

/**
 * Applies ops in order to a copy; throws `NotebookFormatError` naming the first bad op
 * (nothing is applied then). Returns the new notebook and the refs of inserted cells.
 */
export function applyEdits(original: IpynbNotebook, ops: readonly NotebookEditOp[], mark: CellmateCellMark): { notebook: IpynbNotebook; insertedIds: string[] } {
  const nb: IpynbNotebook = { ...original, cells: original.cells.slice() };
  const ids = hasCellIds(nb);
  const taken = new Set(nb.cells.map((c) => c.id).filter((x): x is string => typeof x === 'string'));
  const inserted: IpynbCell[] = [];
  ops.forEach((op, n) => {
    const where = `edit ${n + 1} (${op.op})`;
    if (op.op === 'insert') {
      if (!Number.isInteger(op.index) || op.index < 0 || op.index > nb.cells.length) {
        throw new NotebookFormatError(`${where}: index ${op.index} is outside 0–${nb.cells.length}`);
      }
      const cells = op.cells.map((c) => makeCell(c.cell_type, c.source, { cellmate: { ...mark } }, ids ? newCellId(taken) : undefined));
      nb.cells.splice(op.index, 0, ...cells);
      inserted.push(...cells);
      return;
    }
    const i = findCell(nb, op.cellId);
    if (i < 0) throw new NotebookFormatError(`${where}: no cell with id "${op.cellId}"`);
    const cell = nb.cells[i]!;
    if (op.op === 'replace') {
      const type = op.cellType ?? cell.cell_type;
      if (type === cell.cell_type) {
        nb.cells[i] = { ...cell, source: sourceLines(op.source), ...(type === 'code' ? { outputs: [], execution_count: null } : {}) };
      } else {
        nb.cells[i] = makeCell(type, op.source, cell.metadata, cell.id);
      }
    } else if (op.op === 'delete') {
      nb.cells.splice(i, 1);
    } else {
      if (!Number.isInteger(op.toIndex) || op.toIndex < 0 || op.toIndex >= nb.cells.length) {
        throw new NotebookFormatError(`${where}: toIndex ${op.toIndex} is outside 0–${nb.cells.length - 1}`);
      }
      nb.cells.splice(i, 1);
      nb.cells.splice(op.toIndex, 0, cell);
    }
  });
  return { notebook: nb, insertedIds: inserted.map((c) => c.id ?? `#${nb.cells.indexOf(c) + 1}`) };
}

function makeCell(type: IpynbCell['cell_type'], source: string, metadata: Record<string, unknown>, id: string | undefined): IpynbCell {
  const base = { cell_type: type, ...(id ? { id } : {}), metadata, source: sourceLines(source) };
  return type === 'code' ? { ...base, execution_count: null, outputs: [] } : base;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
