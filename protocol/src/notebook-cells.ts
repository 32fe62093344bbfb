/**
 * Notebook cells as the wire carries them (a leaf module: `index.ts` and the edit planner
 * `notebook-plan.ts` both use it).
 */

/** Cell metadata Cellmate puts on cells the agent created. */
export interface CellmateCellMark {
  created_by: 'agent';
  chat: string;
}

/** A cell as the notebook port reads it (nbformat 4 shape; `source` joined). */
export interface NotebookCellData {
  id: string;
  cell_type: 'code' | 'markdown' | 'raw';
  source: string;
  metadata: Record<string, unknown>;
  outputs?: unknown[];
  execution_count?: number | null;
}

/** A new cell to insert. */
export interface NewNotebookCell {
  cell_type: 'code' | 'markdown' | 'raw';
  source: string;
}

/** One edit of a notebook; an edit request applies its list in order, all or nothing. */
export type NotebookEditOp =
  | { op: 'insert'; index: number; cells: NewNotebookCell[] }
  | { op: 'replace'; cellId: string; source: string; cellType?: 'code' | 'markdown' | 'raw' }
  | { op: 'delete'; cellId: string }
  | { op: 'move'; cellId: string; toIndex: number };
