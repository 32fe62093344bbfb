/**
 * Applies a notebook-edit plan (`@cellmate/protocol` `planNotebookEdits`, the same planner
 * the companion's disk path uses) to an open notebook's shared model, in place: one
 * `transact` with the undo manager's capture closed before and after, so the whole plan is
 * one undo step, and collaborators (jupyter-collaboration's shared document) receive it as
 * ordinary cell operations. Cell outputs and execution counts are not tracked by
 * JupyterLab's undo, so undoing a `replace` restores the source, not the cleared outputs.
 */
import {
  findCellIndex,
  newCellId,
  planNotebookEdits,
  type NotebookCellData,
  type NotebookEditOp,
  type NotebookSourceChange,
  type PlanCell,
  type PlanOptions,
  type PlanStep
} from '@cellmate/protocol';
import type { ICodeCellModel } from '@jupyterlab/cells';
import type { INotebookModel } from '@jupyterlab/notebook';

/** The shared (Yjs) notebook of an open document (`@jupyter/ydoc`'s `ISharedNotebook`). */
export type ISharedNotebook = INotebookModel['sharedModel'];
type ISharedCodeCell = ICodeCellModel['sharedModel'];
type SharedCellJSON = Parameters<ISharedNotebook['insertCells']>[1][number];

/** The planner's view of a shared cell. */
export function toPlanCell(cell: ISharedNotebook['cells'][number]): PlanCell {
  // A shared cell's JSON is nbformat's cell, which the planner's PlanCell mirrors without @jupyterlab's JSON value types.
  return cell.toJSON() as unknown as PlanCell;
}

/**
 * Plans `ops` against the shared notebook and applies them (all or nothing: a bad op throws
 * `NotebookEditError` before anything changes). Returns the ids of inserted cells.
 */
export function editSharedNotebook(
  nb: ISharedNotebook,
  ops: readonly NotebookEditOp[],
  mark: PlanOptions['mark']
): { insertedIds: string[] } {
  // An open document always has cell ids (JupyterLab gives every cell one).
  const plan = planNotebookEdits(nb.cells.map(toPlanCell), ops, { mark, withIds: true, newId: newCellId });
  applySteps(nb, plan.steps);
  return { insertedIds: plan.insertedIds };
}

/**
 * Sets cell sources (outputs and everything else kept) if every cell still has its
 * `expected` source — checked for all before any changes — as one undo step
 * (`notebook/set-sources`, used by the companion's all-or-nothing multi-file edit).
 * Returns how many cells changed (0 for `dryRun`).
 * @throws Error naming the first cell that is missing or differs; nothing changed then
 */
export function setSharedSources(
  nb: ISharedNotebook,
  changes: readonly NotebookSourceChange[],
  dryRun = false
): number {
  const refs = nb.cells.map((c) => ({ id: c.id }));
  const seen = new Set<number>();
  const steps: PlanStep[] = changes.map((change) => {
    const index = findCellIndex(refs, change.cellId);
    if (index < 0) {
      throw new Error(`no cell "${change.cellId}" in the open notebook`);
    }
    if (seen.has(index)) {
      throw new Error(`cell "${change.cellId}" is changed twice; merge the changes`);
    }
    seen.add(index);
    if (nb.cells[index]!.getSource() !== change.expected) {
      throw new Error(
        `cell "${change.cellId}" (cell ${index + 1}) is not the text the change was computed from: it was edited since`
      );
    }
    return { kind: 'set-source', index, source: change.source, clearOutputs: false };
  });
  if (!dryRun && steps.length > 0) {
    applySteps(nb, steps);
  }
  return dryRun ? 0 : steps.length;
}

/**
 * Replaces every cell with `cells` (ids, sources, outputs, execution counts, metadata) as
 * one undoable transaction: a rewind setting an open notebook back to a checkpoint.
 */
export function setSharedCells(nb: ISharedNotebook, cells: readonly NotebookCellData[]): number {
  const planned: PlanCell[] = cells.map((c) => {
    const base = { id: c.id, cell_type: c.cell_type, source: c.source, metadata: c.metadata ?? {} };
    // Nbformat's cell JSON carries @jupyterlab's PartialJSON value types, which PlanCell's plain fields do not match.
    return (c.cell_type === 'code'
      ? { ...base, outputs: c.outputs ?? [], execution_count: c.execution_count ?? null }
      : base) as unknown as PlanCell;
  });
  const steps: PlanStep[] = [];
  for (let i = nb.cells.length - 1; i >= 0; i--) {
    steps.push({ kind: 'delete', index: i });
  }
  steps.push({ kind: 'insert', index: 0, cells: planned });
  applySteps(nb, steps);
  return nb.cells.length;
}

/** The parts of Yjs' undo manager an agent's steps use (`@jupyter/ydoc` exposes it as the notebook's `undoManager`). */
export interface IUndoHistory {
  stopCapturing(): void;
  /** When the last tracked change was made; a tracked change within the capture timeout joins the last step. */
  lastChange: number;
  undoStack: readonly unknown[];
}

/** The notebook's undo history, when it keeps one. */
export function undoHistory(nb: ISharedNotebook): IUndoHistory | null {
  return (nb as { undoManager?: IUndoHistory | null }).undoManager ?? null;
}

/** The undo step each notebook's last agent edit made (a run of the same cells may join it). */
const agentSteps = new WeakMap<ISharedNotebook, unknown>();

/** Whether the newest undo step is still the agent's last edit (nothing else was done since). */
export function lastStepIsAgentEdit(nb: ISharedNotebook): boolean {
  const undo = undoHistory(nb);
  const top = undo?.undoStack[undo.undoStack.length - 1];
  return top !== undefined && agentSteps.get(nb) === top;
}

/** Applies planned steps in order, as one undoable transaction. */
export function applySteps(nb: ISharedNotebook, steps: readonly PlanStep[]): void {
  const undo = undoHistory(nb);
  undo?.stopCapturing();
  nb.transact(() => {
    for (const step of steps) {
      switch (step.kind) {
        case 'insert':
          nb.insertCells(step.index, step.cells.map(toSharedCell));
          break;
        case 'set-source': {
          const cell = nb.cells[step.index]!;
          cell.setSource(step.source);
          if (step.clearOutputs && cell.cell_type === 'code') {
            const code = cell as ISharedCodeCell;
            code.setOutputs([]);
            code.execution_count = null;
          }
          break;
        }
        case 'change-type':
          nb.deleteCell(step.index);
          nb.insertCells(step.index, [toSharedCell(step.cell)]);
          break;
        case 'delete':
          nb.deleteCell(step.index);
          break;
        case 'move':
          nb.moveCell(step.from, step.to);
          break;
      }
    }
  });
  undo?.stopCapturing();
  if (undo) {
    agentSteps.set(nb, undo.undoStack[undo.undoStack.length - 1]);
  }
}

function toSharedCell(cell: PlanCell): SharedCellJSON {
  const source = Array.isArray(cell.source) ? cell.source.join('') : cell.source;
  // The planner's cell is nbformat JSON with a joined source, which is what the shared model accepts.
  return { ...cell, source } as unknown as SharedCellJSON;
}
