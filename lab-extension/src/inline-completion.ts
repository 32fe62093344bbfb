/**
 * Cellmate's inline completions in notebook cells, through JupyterLab's inline completer
 * (`IInlineCompletionProvider`): ghost text as the person types, Tab accepts. The request
 * goes to the companion (`inline/complete`), which asks the `fast` model with the cells
 * around the cursor and the live kernel's names; the browser never calls a model.
 *
 * Every keystroke gets an answer at once — an empty suggestion still streaming — because
 * JupyterLab keeps showing the last ghost text until a provider answers again: answering
 * only after a debounce would leave a suggestion for text that is gone on screen while the
 * person types. The debounce is this provider's own: the request leaves once typing pauses.
 * A newer keystroke, an edit of the cell or another active cell cancels the one waiting or
 * in flight, and the abort reaches the model's HTTP request.
 */
import type { InlineCompletionParams, ModelSettings } from '@cellmate/protocol';
import { InlineCompletionTriggerKind } from '@jupyterlab/completer';
import type {
  CompletionHandler,
  IInlineCompletionContext,
  IInlineCompletionItem,
  IInlineCompletionList,
  IInlineCompletionProvider
} from '@jupyterlab/completer';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { ISignal } from '@lumino/signaling';

import type { IncomingNotification } from './connection';
import { neighbours } from './inline-context';
import { cellmateIcon } from './widgets/icon';

/** How long typing must pause before a completion is asked for (automatic trigger). */
export const DEBOUNCE_MS = 250;

/** What the provider needs from the pane: the connection's requests and notifications, and the settings. */
export interface IInlinePort {
  request(method: 'inline/complete', params: InlineCompletionParams, signal: AbortSignal): Promise<{ text: string }>;
  readonly notified: ISignal<unknown, IncomingNotification>;
  /** The model settings to complete with, or null while inline completions are off or no model is set. */
  model(): ModelSettings | null;
}

/** One request in flight and what it streamed so far. */
interface IPending {
  readonly id: string;
  readonly controller: AbortController;
  text: string;
  done: boolean;
  error?: string;
  /** Wakes the `stream()` reader waiting for more. */
  wake: () => void;
  readonly dispose: () => void;
}

export class CellmateInlineProvider implements IInlineCompletionProvider {
  readonly name = 'Cellmate';
  readonly identifier = 'cellmate:inline';
  readonly icon = cellmateIcon;
  /**
   * JupyterLab's per-provider settings: no debounce of its own (this provider answers every
   * keystroke at once and debounces the model's request itself, see above).
   */
  readonly schema = { default: { debouncerDelay: 0, timeout: 20_000 } };

  constructor(private readonly _port: IInlinePort) {
    _port.notified.connect(this._onNotified, this);
  }

  async fetch(request: CompletionHandler.IRequest, context: IInlineCompletionContext): Promise<IInlineCompletionList> {
    this._abortCurrent();
    const model = this._port.model();
    const panel = asNotebookPanel(context.widget);
    if (!model || !panel) {
      return { items: [] };
    }
    const params = inlineParams(panel, request, model, `inline-${++this._counter}`);
    if (!params) {
      return { items: [] };
    }
    const wait = context.triggerKind === InlineCompletionTriggerKind.Invoke ? 0 : DEBOUNCE_MS;
    const pending = this._start(params, panel, wait);
    return { items: [{ insertText: '', isIncomplete: true, token: pending.id }] };
  }

  async *stream(token: string): AsyncGenerator<{ response: IInlineCompletionItem }> {
    const pending = this._pending.get(token);
    if (!pending) {
      return;
    }
    let sent = '';
    for (;;) {
      if (pending.controller.signal.aborted) {
        return; // the text moved on: nothing more for it
      }
      if (pending.text !== sent || pending.done) {
        sent = pending.text;
        yield {
          response: {
            insertText: sent,
            isIncomplete: !pending.done,
            ...(pending.error ? { error: { message: pending.error } } : {})
          }
        };
      }
      if (pending.done) {
        this._pending.delete(token);
        return;
      }
      await new Promise<void>((resolve) => (pending.wake = resolve));
    }
  }

  /** Aborts the request in flight, if any. */
  dispose(): void {
    this._abortCurrent();
    this._port.notified.disconnect(this._onNotified, this);
  }

  private _start(params: InlineCompletionParams, panel: NotebookPanel, debounceMs: number): IPending {
    const controller = new AbortController();
    const cell = panel.content.activeCell;
    const shared = cell?.model.sharedModel;
    // An edit of the cell or another active cell makes the request stale, even when JupyterLab sends no new one.
    const onEdit = (): void => controller.abort();
    shared?.changed.connect(onEdit);
    panel.content.activeCellChanged.connect(onEdit);
    const pending: IPending = {
      id: params.requestId,
      controller,
      text: '',
      done: false,
      wake: () => undefined,
      dispose: () => {
        shared?.changed.disconnect(onEdit);
        panel.content.activeCellChanged.disconnect(onEdit);
      }
    };
    controller.signal.addEventListener('abort', () => {
      pending.dispose();
      pending.wake();
    });
    this._pending.set(pending.id, pending);
    this._current = pending;
    pause(debounceMs, controller.signal)
      .then(() => this._port.request('inline/complete', params, controller.signal))
      .then((result) => {
        pending.text = typeof result?.text === 'string' ? result.text : pending.text;
      })
      .catch((error: unknown) => {
        if (!controller.signal.aborted) {
          pending.error = error instanceof Error ? error.message : String(error);
        }
      })
      .finally(() => {
        pending.done = true;
        pending.dispose();
        if (this._current === pending) {
          this._current = null;
        }
        if (controller.signal.aborted) {
          this._pending.delete(pending.id);
        }
        pending.wake();
      });
    return pending;
  }

  private _abortCurrent(): void {
    const current = this._current;
    this._current = null;
    if (current && !current.done) {
      current.controller.abort();
      this._pending.delete(current.id);
    }
  }

  private _onNotified(_: unknown, note: IncomingNotification): void {
    if (note.method !== 'inline/delta') {
      return;
    }
    const pending = this._pending.get(note.params.requestId);
    if (pending && !pending.done && !pending.controller.signal.aborted) {
      pending.text += note.params.text;
      pending.wake();
    }
  }

  private _counter = 0;
  private _current: IPending | null = null;
  private readonly _pending = new Map<string, IPending>();
}

/** Resolves after `ms`, or rejects once `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
}

/** The notebook panel the completer runs in, or null (a console, a file editor: not completed). */
function asNotebookPanel(widget: unknown): NotebookPanel | null {
  const w = widget as Partial<NotebookPanel> | null;
  return w && w.content && Array.isArray(w.content.widgets) && w.context ? (w as NotebookPanel) : null;
}

/** The request for the active cell of `panel`: its text around the cursor and its neighbours, bounded. */
export function inlineParams(
  panel: NotebookPanel,
  request: CompletionHandler.IRequest,
  model: ModelSettings,
  requestId: string
): InlineCompletionParams | null {
  const notebook = panel.content;
  const index = notebook.activeCellIndex;
  const cell = notebook.activeCell;
  if (!cell || cell.model.type !== 'code') {
    return null;
  }
  const sources = notebook.widgets.map((w) => (w.model.type === 'code' ? w.model.sharedModel.getSource() : ''));
  return {
    requestId,
    model,
    notebookPath: panel.context.path,
    language: panel.model?.defaultKernelLanguage || 'python',
    prefix: request.text.slice(0, request.offset),
    suffix: request.text.slice(request.offset),
    ...neighbours(sources, index)
  };
}
