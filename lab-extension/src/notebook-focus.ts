/**
 * The pane's one notebook-focus service, on `@jupyterlab/notebook`'s
 * `INotebookTracker`: which notebook the user works in, its kernel, and the notebooks open
 * in this JupyterLab. Kernel focus (`kernel-focus.ts`), the notebook port
 * (`notebook-port.ts`) and copy-to-notebook (`notebook-copy.ts`) all read it.
 *
 * The current notebook is the tracker's: the notebook in the main area, else the one
 * focused last (focusing the pane or a file editor keeps it); closing it moves to the
 * notebook focused before it, or none — JupyterLab's own meaning of "the current notebook"
 * (the one the Run menu acts on).
 */
import type { NotebookKernelRef, SendContext } from '@cellmate/protocol';
import type { ISessionContext } from '@jupyterlab/apputils';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { Token } from '@lumino/coreutils';
import type { IDisposable } from '@lumino/disposable';
import { Signal, type ISignal } from '@lumino/signaling';

/** What the pane knows about notebooks (see the module comment). */
export interface INotebookFocus extends IDisposable {
  /** The current notebook, or null when none is open. */
  readonly notebook: NotebookPanel | null;
  /** Emitted when the current notebook changes. */
  readonly notebookChanged: ISignal<INotebookFocus, NotebookPanel | null>;
  /** The current notebook's kernel (null: no notebook, or no kernel yet). */
  readonly kernel: NotebookKernelRef | null;
  /** Emitted when `kernel` changes (another notebook, a kernel change, a restart into a new kernel). */
  readonly kernelChanged: ISignal<INotebookFocus, NotebookKernelRef | null>;
  /** Every notebook open in this JupyterLab whose model is loaded. */
  openNotebooks(): NotebookPanel[];
  /** The open notebook at a workspace-relative `path`. */
  find(path: string): NotebookPanel | undefined;
  /** A notebook's workspace-relative path (without a drive prefix such as jupyter-collaboration's `RTC:`). */
  pathOf(panel: NotebookPanel): string;
  /** The current notebook's path and selected cells, for `chat/send`'s `context`. */
  context(): SendContext | undefined;
}

/** The token of the notebook-focus service (plugin `jupyterlab-cellmate:notebook-focus`). */
export const INotebookFocus = new Token<INotebookFocus>(
  'jupyterlab-cellmate:INotebookFocus',
  'The notebook the user works in, its kernel, and the open notebooks (Cellmate).'
);

/** The parts of `INotebookTracker` used (a real tracker in JupyterLab; a small fake in unit tests). */
export type INotebookTrackerLike = Pick<INotebookTracker, 'currentWidget' | 'currentChanged' | 'filter'>;

/** The {@link INotebookFocus} service on a notebook tracker. */
export class NotebookFocus implements INotebookFocus {
  constructor(private readonly _tracker: INotebookTrackerLike) {
    _tracker.currentChanged.connect(this._onCurrentChanged, this);
    this._onCurrentChanged(null, _tracker.currentWidget);
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  get notebook(): NotebookPanel | null {
    const nb = this._tracker.currentWidget;
    return nb && !nb.isDisposed ? nb : null;
  }

  get notebookChanged(): ISignal<this, NotebookPanel | null> {
    return this._notebookChanged;
  }

  get kernel(): NotebookKernelRef | null {
    return this._kernel;
  }

  get kernelChanged(): ISignal<this, NotebookKernelRef | null> {
    return this._kernelChanged;
  }

  openNotebooks(): NotebookPanel[] {
    return this._tracker.filter((p) => !p.isDisposed && !!p.content.model);
  }

  find(path: string): NotebookPanel | undefined {
    const wanted = normalize(path);
    return this.openNotebooks().find((p) => normalize(this.pathOf(p)) === wanted);
  }

  pathOf(panel: NotebookPanel): string {
    // jupyter-collaboration opens documents on its own drive: `path` is `RTC:a.ipynb` then.
    return panel.context.localPath ?? panel.context.path;
  }

  context(): SendContext | undefined {
    const panel = this.notebook;
    if (!panel) {
      return undefined;
    }
    const nb = panel.content;
    const selectedCells = nb.widgets.flatMap((w, i) => (nb.isSelectedOrActive(w) ? [i] : []));
    return { notebookPath: this.pathOf(panel), selectedCells };
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._tracker.currentChanged.disconnect(this._onCurrentChanged, this);
    this._untrack();
    Signal.clearData(this);
  }

  private _onCurrentChanged(_: unknown, panel: NotebookPanel | null): void {
    const sc = panel && !panel.isDisposed ? panel.sessionContext : null;
    if (sc === this._tracked) {
      return;
    }
    this._untrack();
    this._tracked = sc;
    this._trackedPath = panel && sc ? this.pathOf(panel) : '';
    if (sc) {
      sc.kernelChanged.connect(this._update, this);
      sc.sessionChanged.connect(this._update, this);
    }
    this._notebookChanged.emit(this.notebook);
    void this._update();
  }

  private _untrack(): void {
    const sc = this._tracked;
    if (sc) {
      sc.kernelChanged.disconnect(this._update, this);
      sc.sessionChanged.disconnect(this._update, this);
    }
    this._tracked = null;
  }

  private async _update(): Promise<void> {
    const sc = this._tracked;
    const kernel = sc?.session?.kernel;
    if (!sc || !kernel) {
      this._setKernel(null);
      return;
    }
    let language: string | undefined;
    try {
      language = (await kernel.spec)?.language;
    } catch {
      language = undefined;
    }
    if (sc !== this._tracked || this._disposed) {
      return; // the focus moved on while the spec loaded
    }
    this._setKernel({
      id: kernel.id,
      name: kernel.name,
      ...(language ? { language } : {}),
      notebookPath: this._trackedPath
    });
  }

  private _setKernel(kernel: NotebookKernelRef | null): void {
    if (JSON.stringify(kernel) !== JSON.stringify(this._kernel)) {
      this._kernel = kernel;
      this._kernelChanged.emit(kernel);
    }
  }

  private _tracked: ISessionContext | null = null;
  private _trackedPath = '';
  private _kernel: NotebookKernelRef | null = null;
  private _disposed = false;
  private readonly _notebookChanged = new Signal<this, NotebookPanel | null>(this);
  private readonly _kernelChanged = new Signal<this, NotebookKernelRef | null>(this);
}

function normalize(p: string): string {
  return p.replace(/^\.\//, '').replace(/^\/+/, '');
}
