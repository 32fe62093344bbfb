/**
 * The chat's background workers (VIBE-2): one row per worker with its
 * label, tier, state and elapsed time, a Transcript button (the worker's own transcript,
 * read-only, in a dialog) and Kill (`worker/kill`: the same `vibe_kill` the agent calls,
 * made by the person). Hidden while the chat has no workers. Text only, never HTML.
 *
 * DOM hooks: `.jp-cellmate-workers`, one `.jp-cellmate-worker[data-worker-id][data-state]` per worker,
 * `button.jp-cellmate-worker-open`, `button.jp-cellmate-worker-kill`, `.jp-cellmate-worker-elapsed`;
 * the dialog's body `.jp-cellmate-worker-transcript` with `[data-kind]` items.
 */
import type { TranscriptItem, WorkerSummary } from '@cellmate/protocol';
import { Dialog, showDialog } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';

import { compactionHeadline, usageLine } from '../context-format';
import { formatElapsed } from '../tool-format';
import type { WorkersModel } from '../workers';

/** Characters of a tool result the read-only transcript shows. */
const OUTPUT_PREVIEW = 4_000;

export class WorkersListWidget extends Widget {
  constructor(options: WorkersListWidget.IOptions) {
    super();
    this._options = options;
    this.addClass('jp-cellmate-workers');
    this.node.setAttribute('aria-label', options.trans.__('Background workers'));
    options.model.changed.connect(this._render, this);
    this._render();
  }

  override dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._options.model.changed.disconnect(this._render, this);
    window.clearInterval(this._ticker);
    super.dispose();
  }

  private _render(): void {
    const { model, trans } = this._options;
    const workers = model.workers;
    this.node.replaceChildren();
    this.node.hidden = workers.length === 0;
    window.clearInterval(this._ticker);
    this._ticker = undefined;
    if (workers.length === 0) {
      return;
    }
    const title = document.createElement('div');
    title.className = 'jp-cellmate-workers-title';
    title.textContent = trans._n('%1 worker', '%1 workers', workers.length);
    const list = document.createElement('div');
    list.className = 'jp-cellmate-workers-rows';
    list.setAttribute('role', 'list');
    for (const w of workers) {
      list.appendChild(this._row(w));
    }
    this.node.append(title, list);
    if (workers.some((w) => w.state === 'running')) {
      this._ticker = window.setInterval(() => this._tick(), 1000);
    }
  }

  private _row(w: WorkerSummary): HTMLElement {
    const { trans } = this._options;
    // A wrapping row, not a table: the pane is often narrower than label + state + buttons.
    const tr = document.createElement('div');
    tr.className = 'jp-cellmate-worker';
    tr.setAttribute('role', 'listitem');
    tr.dataset.workerId = w.id;
    tr.dataset.state = w.state;
    tr.title = `${w.id} · ${w.model}${w.sharesKernel ? ` · ${trans.__("shares the chat's kernel")}` : ''}${w.lastResult ? `\n\n${w.lastResult}` : ''}`;
    const cell = (text: string, className: string): HTMLElement => {
      const span = document.createElement('span');
      span.className = className;
      span.textContent = text;
      tr.appendChild(span);
      return span;
    };
    cell(w.label, 'jp-cellmate-worker-label');
    cell(w.tier, 'jp-cellmate-worker-tier');
    cell(stateLabel(w.state, trans), 'jp-cellmate-worker-state');
    cell(formatElapsed(this._elapsed(w)), 'jp-cellmate-worker-elapsed');
    const actions = cell('', 'jp-cellmate-worker-actions');
    const open = button(
      trans.__('Transcript'),
      'jp-cellmate-worker-open',
      trans.__("Show this worker's transcript (read-only)")
    );
    open.addEventListener('click', () => void this._openTranscript(w));
    const kill = button(
      trans.__('Kill'),
      'jp-cellmate-worker-kill',
      trans.__('Stop this worker and shut its kernel down')
    );
    kill.disabled = w.state === 'killed' || w.state === 'interrupted';
    kill.addEventListener('click', () => {
      kill.disabled = true;
      void this._options.kill(w.id).then(
        (outcome) => (tr.title = outcome.message),
        (error: unknown) => {
          kill.disabled = false;
          tr.title = error instanceof Error ? error.message : String(error);
        }
      );
    });
    actions.append(open, kill);
    return tr;
  }

  private _elapsed(w: WorkerSummary): number {
    return w.state === 'running' ? w.elapsedMs + (Date.now() - this._options.model.receivedAt(w.id)) : w.elapsedMs;
  }

  private _tick(): void {
    for (const w of this._options.model.workers) {
      const cell = this.node.querySelector(
        `.jp-cellmate-worker[data-worker-id="${CSS.escape(w.id)}"] .jp-cellmate-worker-elapsed`
      );
      if (cell) {
        cell.textContent = formatElapsed(this._elapsed(w));
      }
    }
  }

  private async _openTranscript(w: WorkerSummary): Promise<void> {
    const { trans } = this._options;
    const body = new Widget();
    body.addClass('jp-cellmate-worker-transcript');
    try {
      const { items } = await this._options.transcript(w.id);
      for (const item of items) {
        body.node.appendChild(renderItem(item, trans));
      }
      if (items.length === 0) {
        body.node.textContent = trans.__('Nothing yet.');
      }
    } catch (error) {
      body.node.textContent = error instanceof Error ? error.message : String(error);
    }
    void showDialog({
      title: trans.__('Worker “%1” (%2) — read-only', w.label, w.id),
      body,
      buttons: [Dialog.okButton({ label: trans.__('Close') })]
    });
  }

  private readonly _options: WorkersListWidget.IOptions;
  private _ticker: number | undefined;
}

export namespace WorkersListWidget {
  export interface IOptions {
    model: WorkersModel;
    trans: TranslationBundle;
    kill(workerId: string): Promise<{ killed: boolean; message: string }>;
    transcript(workerId: string): Promise<{ worker: WorkerSummary; items: TranscriptItem[] }>;
  }
}

/** One transcript item as plain text. */
function renderItem(item: TranscriptItem, trans: TranslationBundle): HTMLElement {
  const node = document.createElement('div');
  node.className = 'jp-cellmate-worker-item';
  node.dataset.kind = item.kind;
  const text = (() => {
    switch (item.kind) {
      case 'user':
      case 'assistant':
        return item.text;
      case 'notice':
        return item.text;
      case 'question':
        return item.question;
      case 'usage':
        return usageLine(item, trans);
      case 'compaction':
        return compactionHeadline(item, trans);
      case 'tool': {
        const output = item.output ?? '';
        return `${item.name} — ${item.status}${item.title ? `: ${item.title}` : ''}\n${output.length > OUTPUT_PREVIEW ? `${output.slice(0, OUTPUT_PREVIEW)}…` : output}`;
      }
    }
  })();
  const pre = document.createElement('pre');
  pre.textContent = text;
  node.appendChild(pre);
  return node;
}

function button(label: string, className: string, title: string): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = `jp-Button jp-mod-styled jp-mod-minimal ${className}`;
  b.textContent = label;
  b.title = title;
  return b;
}

function stateLabel(state: WorkerSummary['state'], trans: TranslationBundle): string {
  switch (state) {
    case 'running':
      return trans.__('running');
    case 'done':
      return trans.__('done');
    case 'failed':
      return trans.__('failed');
    case 'killed':
      return trans.__('killed');
    case 'interrupted':
      return trans.__('interrupted');
    default:
      return String(state);
  }
}
