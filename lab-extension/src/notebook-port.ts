/**
 * The pane's side of the notebook port (issue #5): serves the server's `PaneRequests` for
 * notebooks open in this JupyterLab, through the open document's shared model, and tracks
 * the notebook the user looks at (path + selected cells) for `chat/send`'s `context`.
 *
 * - Edits run in one `sharedModel.transact` with the undo manager's capture closed before
 *   and after, so they are one undo step: `Z` in command mode (`notebook:undo-cell-action`)
 *   or Edit → Undo / Accel Z (`editmenu:undo`) remove them. Cell outputs and execution
 *   counts are not tracked by JupyterLab's undo, so running the cells does not add steps.
 * - Cells the agent inserts carry `metadata.cellmate` and are highlighted for a few
 *   seconds (`jp-cellmate-agent-cell`).
 * - Runs use the cell widget's own `CodeCell.execute` with the notebook's session, so
 *   outputs appear in the notebook; cancelling the request interrupts the kernel.
 *
 * Duck-typed on NotebookPanel (`content`, `context.path`, `sessionContext`) so the
 * extension needs no dependency on `@jupyterlab/notebook`.
 */
import type {
  CellmateCellMark,
  NotebookCellData,
  NotebookEditOp,
  PaneRequests,
  SendContext
} from '@cellmate/protocol';
import type { ISessionContext } from '@jupyterlab/apputils';
import type { IDisposable } from '@lumino/disposable';
import type { ISignal } from '@lumino/signaling';
import type { Widget } from '@lumino/widgets';
import type { CancellationToken } from 'vscode-jsonrpc/browser';

import type { CellmateConnection } from './connection';

/** How long agent-made cells stay highlighted. */
export const HIGHLIGHT_MS = 4000;
export const AGENT_CELL_CLASS = 'jp-cellmate-agent-cell';

interface ISharedCellLike {
  readonly id: string;
  readonly cell_type: string;
  getSource(): string;
  setSource(source: string): void;
  getMetadata(): Record<string, unknown>;
  toJSON(): Record<string, unknown>;
}

interface ISharedNotebookLike {
  readonly cells: readonly ISharedCellLike[];
  readonly nbformat: number;
  readonly nbformat_minor: number;
  getMetadata(): Record<string, unknown>;
  transact(f: () => void, undoable?: boolean): void;
  insertCells(index: number, cells: Array<Record<string, unknown>>): unknown;
  deleteCell(index: number): void;
  moveCell(from: number, to: number): void;
  undoManager?: { stopCapturing(): void } | null;
}

interface ICellWidgetLike extends Widget {
  model: { id: string; type: string };
}

interface INotebookLike extends Widget {
  readonly widgets: readonly ICellWidgetLike[];
  isSelectedOrActive(widget: ICellWidgetLike): boolean;
  model: { sharedModel: ISharedNotebookLike } | null;
}

interface INotebookPanelLike extends Widget {
  content: INotebookLike;
  context: { path: string };
  sessionContext: ISessionContext;
}

/** The shell this needs (JupyterLab's `ILabShell`). */
export interface INotebookShell {
  readonly currentWidget: Widget | null;
  readonly currentChanged?: ISignal<unknown, { newValue: Widget | null }>;
  widgets(area?: string): IterableIterator<Widget>;
}

function asNotebookPanel(w: Widget | null | undefined): INotebookPanelLike | null {
  const p = w as Partial<INotebookPanelLike> | null | undefined;
  return p && p.content && p.context && typeof p.context.path === 'string' && p.sessionContext?.type === 'notebook'
    ? (p as INotebookPanelLike)
    : null;
}

const newId = (): string =>
  Array.from(crypto.getRandomValues(new Uint8Array(4)), b => b.toString(16).padStart(2, '0')).join('');

export class NotebookPort implements IDisposable {
  constructor(
    connection: CellmateConnection,
    private readonly _shell: INotebookShell
  ) {
    _shell.currentChanged?.connect(this._onCurrent, this);
    this._onCurrent(null, { newValue: _shell.currentWidget });
    const serve = <K extends keyof PaneRequests>(
      method: K,
      handler: (params: PaneRequests[K]['params'], token: CancellationToken) => Promise<PaneRequests[K]['result']>
    ): void => connection.handleServerRequest(method, (p, t) => handler(p as PaneRequests[K]['params'], t));
    serve('notebook/open-documents', async () => ({ paths: this._panels().map(p => p.context.path) }));
    serve('notebook/read', async ({ path }) => this._read(this._panel(path)));
    serve('notebook/edit', async ({ path, ops, mark }) => this._edit(this._panel(path), ops, mark));
    serve('notebook/run', async ({ path, cellIds }, token) => this._run(this._panel(path), cellIds, token));
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** The notebook the user last focused and its selected cells, for `chat/send`. */
  context(): SendContext | undefined {
    const panel = this._last;
    if (!panel || panel.isDisposed) {
      return undefined;
    }
    const nb = panel.content;
    const selectedCells = nb.widgets.flatMap((w, i) => (nb.isSelectedOrActive(w) ? [i] : []));
    return { notebookPath: panel.context.path, selectedCells };
  }

  dispose(): void {
    if (!this._disposed) {
      this._disposed = true;
      this._shell.currentChanged?.disconnect(this._onCurrent, this);
    }
  }

  private _onCurrent(_: unknown, args: { newValue: Widget | null }): void {
    const panel = asNotebookPanel(args.newValue);
    if (panel) {
      this._last = panel;
    }
  }

  private _panels(): INotebookPanelLike[] {
    const out: INotebookPanelLike[] = [];
    for (const w of this._shell.widgets('main')) {
      const p = asNotebookPanel(w);
      if (p && p.content.model) {
        out.push(p);
      }
    }
    return out;
  }

  private _panel(path: string): INotebookPanelLike {
    const panel = this._panels().find(p => p.context.path === path);
    if (!panel) {
      throw new Error(`${path} is not open in this JupyterLab`);
    }
    return panel;
  }

  private _shared(panel: INotebookPanelLike): ISharedNotebookLike {
    const model = panel.content.model;
    if (!model) {
      throw new Error(`${panel.context.path} has no model`);
    }
    return model.sharedModel;
  }

  private async _read(panel: INotebookPanelLike): Promise<PaneRequests['notebook/read']['result']> {
    const nb = this._shared(panel);
    return {
      cells: nb.cells.map(toCellData),
      nbformat: nb.nbformat,
      nbformat_minor: nb.nbformat_minor,
      metadata: nb.getMetadata() as Record<string, unknown>
    };
  }

  private async _edit(
    panel: INotebookPanelLike,
    ops: NotebookEditOp[],
    mark: CellmateCellMark
  ): Promise<PaneRequests['notebook/edit']['result']> {
    const nb = this._shared(panel);
    // Check every op against a simulated id list first: all or nothing.
    const ids = nb.cells.map(c => c.id);
    const planned: Array<{ op: NotebookEditOp; newIds: string[] }> = [];
    const taken = new Set(ids);
    for (const [n, op] of ops.entries()) {
      const where = `edit ${n + 1} (${op.op})`;
      if (op.op === 'insert') {
        if (op.index < 0 || op.index > ids.length) {
          throw new Error(`${where}: index ${op.index} is outside 0–${ids.length}`);
        }
        const newIds = op.cells.map(() => {
          let id = newId();
          while (taken.has(id)) {
            id = newId();
          }
          taken.add(id);
          return id;
        });
        ids.splice(op.index, 0, ...newIds);
        planned.push({ op, newIds });
        continue;
      }
      const i = resolveRef(ids, op.cellId);
      if (i < 0) {
        throw new Error(`${where}: no cell with id "${op.cellId}"`);
      }
      if (op.op === 'delete') {
        ids.splice(i, 1);
      } else if (op.op === 'move') {
        if (op.toIndex < 0 || op.toIndex >= ids.length) {
          throw new Error(`${where}: toIndex ${op.toIndex} is outside 0–${ids.length - 1}`);
        }
        const [id] = ids.splice(i, 1);
        ids.splice(op.toIndex, 0, id!);
      }
      planned.push({ op, newIds: [] });
    }
    const inserted: string[] = [];
    nb.undoManager?.stopCapturing();
    nb.transact(() => {
      for (const { op, newIds } of planned) {
        const index = (ref: string): number =>
          resolveRef(
            nb.cells.map(c => c.id),
            ref
          );
        if (op.op === 'insert') {
          nb.insertCells(
            op.index,
            op.cells.map((c, k) => ({
              id: newIds[k],
              cell_type: c.cell_type,
              source: c.source,
              metadata: { cellmate: { ...mark } },
              ...(c.cell_type === 'code' ? { outputs: [], execution_count: null } : {})
            }))
          );
          inserted.push(...newIds);
        } else if (op.op === 'replace') {
          const i = index(op.cellId);
          const cell = nb.cells[i]!;
          if (!op.cellType || op.cellType === cell.cell_type) {
            cell.setSource(op.source);
          } else {
            const { id, metadata } = { id: cell.id, metadata: cell.getMetadata() };
            nb.deleteCell(i);
            nb.insertCells(i, [{ id, cell_type: op.cellType, source: op.source, metadata }]);
          }
        } else if (op.op === 'delete') {
          nb.deleteCell(index(op.cellId));
        } else {
          nb.moveCell(index(op.cellId), op.toIndex);
        }
      }
    });
    nb.undoManager?.stopCapturing();
    this._highlight(panel, inserted);
    return { insertedIds: inserted, cellCount: nb.cells.length };
  }

  private _highlight(panel: INotebookPanelLike, ids: string[]): void {
    if (ids.length === 0) {
      return;
    }
    requestAnimationFrame(() => {
      const cells = panel.content.widgets.filter(w => ids.includes(w.model.id));
      cells.forEach(c => c.addClass(AGENT_CELL_CLASS));
      cells[0]?.node.scrollIntoView?.({ block: 'nearest' });
      setTimeout(() => cells.forEach(c => c.removeClass(AGENT_CELL_CLASS)), HIGHLIGHT_MS);
    });
  }

  private async _run(
    panel: INotebookPanelLike,
    cellIds: string[],
    token: CancellationToken
  ): Promise<PaneRequests['notebook/run']['result']> {
    const nb = this._shared(panel);
    const widgets = cellIds.map(ref => {
      const i = resolveRef(
        nb.cells.map(c => c.id),
        ref
      );
      const w = panel.content.widgets[i];
      if (i < 0 || !w) {
        throw new Error(`no cell with id "${ref}" in ${panel.context.path}`);
      }
      if (w.model.type !== 'code') {
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
    const ran: ICellWidgetLike[] = [];
    try {
      for (const w of widgets) {
        if (token.isCancellationRequested) {
          break;
        }
        // CodeCell.execute is a static on the cell widget's class (namespace merge).
        const execute = (
          w.constructor as unknown as {
            execute(cell: unknown, sc: ISessionContext): Promise<{ content?: { status?: string } } | void>;
          }
        ).execute;
        ran.push(w);
        const reply = await execute(w, session);
        if (token.isCancellationRequested) {
          status = 'aborted';
          break;
        }
        if (reply && reply.content?.status && reply.content.status !== 'ok') {
          status = reply.content.status === 'aborted' ? 'aborted' : 'error';
          break;
        }
      }
    } finally {
      interrupt.dispose();
    }
    const byId = new Map(nb.cells.map(c => [c.id, c]));
    const cells = ran.map(w => byId.get(w.model.id)).filter((c): c is ISharedCellLike => !!c);
    return { cells: cells.map(toCellData), status };
  }

  private _last: INotebookPanelLike | null = null;
  private _disposed = false;
}

/** A cell's index by id, or by `#<n>` with n counting from 1 (as `notebook_read` numbers cells). */
function resolveRef(ids: readonly string[], ref: string): number {
  const m = /^#(\d+)$/.exec(ref);
  if (m) {
    const i = Number(m[1]) - 1;
    return i >= 0 && i < ids.length ? i : -1;
  }
  return ids.indexOf(ref);
}

function toCellData(cell: ISharedCellLike): NotebookCellData {
  const json = cell.toJSON() as {
    id?: string;
    cell_type: NotebookCellData['cell_type'];
    source: string | string[];
    metadata?: Record<string, unknown>;
    outputs?: unknown[];
    execution_count?: number | null;
  };
  return {
    id: cell.id,
    cell_type: json.cell_type,
    source: Array.isArray(json.source) ? json.source.join('') : json.source,
    metadata: json.metadata ?? {},
    ...(json.cell_type === 'code'
      ? { outputs: json.outputs ?? [], execution_count: json.execution_count ?? null }
      : {})
  };
}
