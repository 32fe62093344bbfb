/**
 * Tells the companion server which notebook kernel the user has focused (`chat/context`,
 * SPEC EVAL-2), so the agent's evals share that notebook's kernel. Follows the main
 * area's current widget; focusing a non-notebook widget (or the pane) keeps the last
 * notebook; closing that notebook clears it. Re-sent after every reconnect.
 *
 * Duck-typed on `sessionContext` (type `notebook`) so the extension needs no dependency
 * on `@jupyterlab/notebook`.
 */
import type { NotebookKernelRef } from '@cellmate/protocol';
import type { ISessionContext } from '@jupyterlab/apputils';
import type { IDisposable } from '@lumino/disposable';
import { Signal, type ISignal } from '@lumino/signaling';
import type { Widget } from '@lumino/widgets';

import type { CellmateConnection } from './connection';

/** The part of the shell this needs (JupyterLab's `ILabShell`). */
export interface ICurrentWidgetShell {
  readonly currentWidget: Widget | null;
  readonly currentChanged?: ISignal<unknown, { newValue: Widget | null }>;
}

export class KernelFocusTracker implements IDisposable {
  constructor(
    private readonly _connection: CellmateConnection,
    private readonly _shell: ICurrentWidgetShell
  ) {
    _shell.currentChanged?.connect(this._onCurrentChanged, this);
    _connection.statusChanged.connect(this._onStatus, this);
    this._onCurrentChanged(null, { newValue: _shell.currentWidget });
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** The last reported kernel (tests). */
  get current(): NotebookKernelRef | null {
    return this._last;
  }

  /** Emitted when the focused notebook kernel changes (the pane shows it). */
  get changed(): ISignal<this, NotebookKernelRef | null> {
    return this._changed;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._shell.currentChanged?.disconnect(this._onCurrentChanged, this);
    this._connection.statusChanged.disconnect(this._onStatus, this);
    this._untrack();
    Signal.clearData(this);
  }

  private _onCurrentChanged(_: unknown, args: { newValue: Widget | null }): void {
    const sc = (args.newValue as { sessionContext?: ISessionContext } | null)?.sessionContext;
    if (!sc || sc.type !== 'notebook' || sc === this._tracked) {
      return;
    }
    this._untrack();
    this._tracked = sc;
    sc.kernelChanged.connect(this._update, this);
    sc.sessionChanged.connect(this._update, this);
    sc.disposed.connect(this._onNotebookClosed, this);
    void this._update();
  }

  private _untrack(): void {
    const sc = this._tracked;
    if (!sc) {
      return;
    }
    sc.kernelChanged.disconnect(this._update, this);
    sc.sessionChanged.disconnect(this._update, this);
    sc.disposed.disconnect(this._onNotebookClosed, this);
    this._tracked = null;
  }

  private _onNotebookClosed(): void {
    this._untrack();
    this._report(null);
  }

  private async _update(): Promise<void> {
    const sc = this._tracked;
    const kernel = sc?.session?.kernel;
    if (!sc || !kernel) {
      this._report(null);
      return;
    }
    let language: string | undefined;
    try {
      language = (await kernel.spec)?.language;
    } catch {
      language = undefined;
    }
    if (sc !== this._tracked) {
      return;
    }
    this._report({
      id: kernel.id,
      name: kernel.name,
      ...(language ? { language } : {}),
      notebookPath: sc.path
    });
  }

  private _onStatus(): void {
    if (this._connection.status.state === 'connected') {
      this._sent = undefined;
      this._report(this._last);
    }
  }

  private _report(kernel: NotebookKernelRef | null): void {
    const key = JSON.stringify(kernel);
    if (key !== JSON.stringify(this._last)) {
      this._last = kernel;
      this._changed.emit(kernel);
    }
    if (key === this._sent || this._connection.status.state !== 'connected') {
      return;
    }
    this._sent = key;
    this._connection.request('chat/context', { kernel }).catch(() => {
      this._sent = undefined; // try again on the next change or reconnect
    });
  }

  private _tracked: ISessionContext | null = null;
  private _last: NotebookKernelRef | null = null;
  private _sent: string | undefined;
  private _disposed = false;
  private readonly _changed = new Signal<this, NotebookKernelRef | null>(this);
}
