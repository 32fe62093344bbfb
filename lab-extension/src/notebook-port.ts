/**
 * The pane's side of the notebook port: serves the server's `PaneRequests` for
 * notebooks open in this JupyterLab, through the open document's shared model. Which
 * notebooks are open comes from the notebook-focus service (`notebook-focus.ts`).
 *
 * - Edits are planned by the planner the companion's disk path uses (`@cellmate/protocol`
 *   `planNotebookEdits`: same refs, validation, marks, cleared outputs, ids) and applied in
 *   one shared-model transaction (`notebook-apply.ts`), so they are one undo step: `Z` in
 *   command mode (`notebook:undo-cell-action`) or Edit → Undo remove them.
 * - Cells the agent inserts carry `metadata.cellmate` and are highlighted for a few
 *   seconds (`jp-cellmate-agent-cell`).
 * - `notebook/set-sources` (the companion's all-or-nothing multi-file edit: a rename, a
 *   structural rewrite) checks every cell's expected source, then sets the sources in one
 *   undo step, outputs kept (`setSharedSources`).
 * - `notebook/set-cells` (a rewind) puts back every cell as a checkpoint kept it, outputs
 *   included, in one undo step (`setSharedCells`).
 * - Runs use `CodeCell.execute` with the notebook's session, so outputs appear in the
 *   notebook; cancelling the request interrupts the kernel. The run's outputs then enter
 *   the undo history, joining the agent's edit just before (`recordRunInHistory`).
 */
import {
  findCellIndex,
  toCellData,
  type CellmateCellMark,
  type NotebookEditOp,
  type PaneRequests
} from '@cellmate/protocol';
import { CodeCell, type Cell } from '@jupyterlab/cells';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { IDisposable } from '@lumino/disposable';
import type { CancellationToken } from 'vscode-jsonrpc/browser';

import type { CellmateConnection } from './connection';
import {
  editSharedNotebook,
  lastStepIsAgentEdit,
  setSharedCells,
  setSharedSources,
  toPlanCell,
  undoHistory,
  type ISharedNotebook
} from './notebook-apply';
import type { INotebookFocus } from './notebook-focus';

/** How long agent-made cells stay highlighted. */
export const HIGHLIGHT_MS = 4000;
export const AGENT_CELL_CLASS = 'jp-cellmate-agent-cell';

export class NotebookPort implements IDisposable {
  constructor(
    connection: CellmateConnection,
    private readonly _focus: INotebookFocus
  ) {
    const serve = <K extends keyof PaneRequests>(
      method: K,
      handler: (params: PaneRequests[K]['params'], token: CancellationToken) => Promise<PaneRequests[K]['result']>
    ): void => connection.handleServerRequest(method, (p, t) => handler(p as PaneRequests[K]['params'], t));
    serve('notebook/open-documents', async () => ({
      paths: this._focus.openNotebooks().map((p) => this._focus.pathOf(p))
    }));
    serve('notebook/read', async ({ path }) => this._read(this._panel(path)));
    serve('notebook/edit', async ({ path, ops, mark }) => this._edit(this._panel(path), ops, mark));
    serve('notebook/set-sources', async ({ path, changes, dryRun }) => ({
      changed: setSharedSources(this._shared(this._panel(path)), changes, dryRun ?? false)
    }));
    serve('notebook/set-cells', async ({ path, cells }) => ({
      cellCount: setSharedCells(this._shared(this._panel(path)), cells)
    }));
    serve('notebook/run', async ({ path, cellIds }, token) => this._run(this._panel(path), cellIds, token));
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  dispose(): void {
    this._disposed = true;
  }

  private _panel(path: string): NotebookPanel {
    const panel = this._focus.find(path);
    if (!panel) {
      throw new Error(`${path} is not open in this JupyterLab`);
    }
    return panel;
  }

  private _shared(panel: NotebookPanel): ISharedNotebook {
    const model = panel.content.model;
    if (!model) {
      throw new Error(`${this._focus.pathOf(panel)} has no model`);
    }
    return model.sharedModel;
  }

  private async _read(panel: NotebookPanel): Promise<PaneRequests['notebook/read']['result']> {
    const nb = this._shared(panel);
    return {
      cells: nb.cells.map((c) => toCellData(toPlanCell(c), c.id)),
      nbformat: nb.nbformat,
      nbformat_minor: nb.nbformat_minor,
      metadata: nb.getMetadata() as Record<string, unknown>
    };
  }

  private async _edit(
    panel: NotebookPanel,
    ops: NotebookEditOp[],
    mark: CellmateCellMark
  ): Promise<PaneRequests['notebook/edit']['result']> {
    const nb = this._shared(panel);
    const { insertedIds } = editSharedNotebook(nb, ops, mark);
    this._highlight(panel, insertedIds);
    return { insertedIds, cellCount: nb.cells.length };
  }

  private _highlight(panel: NotebookPanel, ids: string[]): void {
    if (ids.length === 0) {
      return;
    }
    requestAnimationFrame(() => {
      const cells = panel.content.widgets.filter((w) => ids.includes(w.model.id));
      cells.forEach((c) => c.addClass(AGENT_CELL_CLASS));
      cells[0]?.node.scrollIntoView?.({ block: 'nearest' });
      setTimeout(() => cells.forEach((c) => c.removeClass(AGENT_CELL_CLASS)), HIGHLIGHT_MS);
    });
  }

  private async _run(
    panel: NotebookPanel,
    cellIds: string[],
    token: CancellationToken
  ): Promise<PaneRequests['notebook/run']['result']> {
    const nb = this._shared(panel);
    const widgets = cellIds.map((ref) => {
      const i = findCellIndex(nb.cells, ref);
      const w: Cell | undefined = i < 0 ? undefined : panel.content.widgets[i];
      if (!w) {
        throw new Error(`no cell with id "${ref}" in ${this._focus.pathOf(panel)}`);
      }
      if (!(w instanceof CodeCell)) {
        throw new Error(`cell "${ref}" is a ${w.model.type} cell; only code cells run`);
      }
      return w;
    });
    const session = panel.sessionContext;
    let status: 'ok' | 'error' | 'aborted' = 'ok';
    const interrupt = token.onCancellationRequested(() => {
      status = 'aborted';
      void session.session?.kernel?.interrupt();
    });
    const ran: CodeCell[] = [];
    const before = new Map(
      widgets.map((w) => [w, { outputs: w.model.sharedModel.getOutputs(), count: w.model.sharedModel.execution_count }])
    );
    try {
      for (const w of widgets) {
        if (token.isCancellationRequested) {
          break;
        }
        ran.push(w);
        const reply = await CodeCell.execute(w, session);
        if (token.isCancellationRequested) {
          status = 'aborted';
          break;
        }
        if (reply && reply.content.status !== 'ok') {
          status = reply.content.status === 'aborted' ? 'aborted' : 'error';
          break;
        }
      }
    } finally {
      interrupt.dispose();
      recordRunInHistory(
        nb,
        ran.map((w) => ({ cell: w.model.sharedModel, ...before.get(w)! }))
      );
    }
    const byId = new Map(nb.cells.map((c) => [c.id, c]));
    const cells = ran.flatMap((w) => {
      const c = byId.get(w.model.id);
      return c ? [toCellData(toPlanCell(c), c.id)] : [];
    });
    return { cells, status };
  }

  private _disposed = false;
}

type SharedCodeCell = CodeCell['model']['sharedModel'];

/**
 * Makes an agent's run part of the notebook's undo history, outputs included. Kernel outputs
 * stream into the shared model outside the history, so undoing the edit before the run would
 * bring back the old outputs beside the new ones. Here the cells are set back to their
 * pre-run outputs outside the history, then to the run's outputs in one tracked transaction
 * (synchronously: nothing renders in between). When the newest undo step is the agent's edit
 * just before (nothing else done since), the run joins it: one Ctrl+Z takes back the edit and
 * its run together; otherwise the run is a step of its own. One thing stays out of reach:
 * once the kernel has written a cell's execution count (outside the history), Yjs will not
 * bring back the count an edit cleared — undo restores source and outputs, and the count
 * stays empty (a rewind restores it too).
 */
function recordRunInHistory(
  nb: ISharedNotebook,
  cells: ReadonlyArray<{
    cell: SharedCodeCell;
    outputs: ReturnType<SharedCodeCell['getOutputs']>;
    count: number | null;
  }>
): void {
  if (cells.length === 0) {
    return;
  }
  const after = cells.map((c) => ({ cell: c.cell, outputs: c.cell.getOutputs(), count: c.cell.execution_count }));
  const undo = undoHistory(nb);
  const joinEdit = lastStepIsAgentEdit(nb);
  nb.transact(() => {
    for (const c of cells) {
      c.cell.setOutputs(c.outputs);
      c.cell.execution_count = c.count;
    }
  }, false);
  if (undo && joinEdit) {
    // Within Yjs' capture window, a tracked change joins the newest step.
    undo.lastChange = Date.now();
  } else {
    undo?.stopCapturing();
  }
  nb.transact(() => {
    for (const c of after) {
      c.cell.setOutputs(c.outputs);
      c.cell.execution_count = c.count;
    }
  });
  undo?.stopCapturing();
}
