/**
 * Tells the companion server which notebook kernel this window has focused (`chat/context`,
 * SPEC EVAL-2), so this window's agent evals in that notebook's kernel. The companion keeps
 * one focus per connection: another window's focus never replaces this one.
 * Follows the notebook-focus service; re-sent after every reconnect (a new connection).
 */
import type { NotebookKernelRef } from '@cellmate/protocol';
import type { IDisposable } from '@lumino/disposable';

import type { CellmateConnection } from './connection';
import type { INotebookFocus } from './notebook-focus';

export class KernelFocusReporter implements IDisposable {
  constructor(
    private readonly _connection: CellmateConnection,
    private readonly _focus: INotebookFocus
  ) {
    _focus.kernelChanged.connect(this._onKernel, this);
    _connection.statusChanged.connect(this._onStatus, this);
    this._report(_focus.kernel);
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._focus.kernelChanged.disconnect(this._onKernel, this);
    this._connection.statusChanged.disconnect(this._onStatus, this);
  }

  private _onKernel(_: unknown, kernel: NotebookKernelRef | null): void {
    this._report(kernel);
  }

  private _onStatus(): void {
    if (this._connection.status.state === 'connected') {
      this._sent = undefined; // a new connection knows nothing yet
      this._report(this._focus.kernel);
    }
  }

  private _report(kernel: NotebookKernelRef | null): void {
    const key = JSON.stringify(kernel);
    if (key === this._sent || this._connection.status.state !== 'connected') {
      return;
    }
    this._sent = key;
    this._connection.request('chat/context', { kernel }).catch(() => {
      this._sent = undefined; // try again on the next change or reconnect
    });
  }

  private _sent: string | undefined;
  private _disposed = false;
}
