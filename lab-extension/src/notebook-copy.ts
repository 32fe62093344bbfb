/**
 * "Copy to notebook": inserts code from the transcript (an eval card's code, a markdown
 * code block) as a new code cell below the active cell of the current notebook — the one
 * in the main area, else the last one focused. The cell is marked
 * `metadata.cellmate.created_by = "agent-copy"`. The insert goes through the notebook's
 * shared model, so it is one undoable step and collaborators see it.
 *
 * Duck-typed on the notebook panel (`content.model.sharedModel.insertCell`) so the
 * extension needs no dependency on `@jupyterlab/notebook`.
 */
import type { IDisposable } from '@lumino/disposable';
import type { Widget } from '@lumino/widgets';

import type { ICurrentWidgetShell } from './kernel-focus';

/** The part of a JupyterLab `NotebookPanel` this uses. */
export interface INotebookLike {
  readonly id: string;
  readonly isDisposed: boolean;
  readonly content: {
    activeCellIndex: number;
    readonly model: {
      readonly sharedModel: {
        insertCell(index: number, cell: Record<string, unknown>): unknown;
      };
    } | null;
  };
}

/** The metadata a copied cell carries. */
export const COPY_MARK = { created_by: 'agent-copy' } as const;

/** True when `widget` looks like a notebook panel. */
export function isNotebookLike(widget: unknown): widget is INotebookLike {
  const content = (widget as { content?: { model?: { sharedModel?: { insertCell?: unknown } } } } | null)
    ?.content;
  return typeof content?.model?.sharedModel?.insertCell === 'function' && 'activeCellIndex' in content;
}

/**
 * Inserts `code` below the active cell of `notebook` and makes the new cell active.
 * Returns the new cell's index.
 */
export function insertCodeCell(notebook: INotebookLike, code: string): number {
  const content = notebook.content;
  const model = content.model;
  if (!model) {
    throw new Error('the notebook has no model yet');
  }
  const index = Math.max(0, content.activeCellIndex + 1);
  model.sharedModel.insertCell(index, {
    cell_type: 'code',
    source: code,
    metadata: { cellmate: { ...COPY_MARK } }
  });
  content.activeCellIndex = index;
  return index;
}

/** Follows the main area for the notebook to copy into. */
export class NotebookCopyTarget implements IDisposable {
  constructor(private readonly _shell: ICurrentWidgetShell) {
    _shell.currentChanged?.connect(this._onCurrentChanged, this);
    this._onCurrentChanged(null, { newValue: _shell.currentWidget });
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** The notebook code goes to, or null when none is open. */
  get notebook(): INotebookLike | null {
    const current = this._shell.currentWidget;
    if (isNotebookLike(current) && !current.isDisposed) {
      return current;
    }
    return this._last && !this._last.isDisposed ? this._last : null;
  }

  dispose(): void {
    if (!this._disposed) {
      this._disposed = true;
      this._shell.currentChanged?.disconnect(this._onCurrentChanged, this);
      this._last = null;
    }
  }

  private _onCurrentChanged(_: unknown, args: { newValue: Widget | null }): void {
    if (isNotebookLike(args.newValue)) {
      this._last = args.newValue;
    }
  }

  private _last: INotebookLike | null = null;
  private _disposed = false;
}
