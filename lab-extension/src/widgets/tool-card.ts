/**
 * A card per tool call: name, status, duration (ticking while it runs), arguments as
 * pretty JSON and the result as plain text. The card is a `<details>` the user opens;
 * results over 20 lines show their first lines with "Show all". Eval cards offer "Copy to
 * notebook". Updated in place so an open card stays open while the call runs and ends.
 * What a tool shows beyond its text (`item.display`, a tagged union) is drawn by the
 * renderer of its kind from a {@link ToolDisplayRegistry} (`tool-displays.ts`).
 * With Auto approval (SIDE-1) the summary says "checking…" while the reviewer judges the
 * call, then "Auto-approved: <reason>" (the card folds to that line) or why it came to you.
 */
import type { LspDisplayLocation, ToolCallItem, ToolCallStatus, TranscriptItem } from '@cellmate/protocol';
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { TranslationBundle } from '@jupyterlab/translation';
import { checkIcon, errorIcon, LabIcon, lockIcon, stopIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { argumentFields } from '../argument-fields';
import { codeOf, formatElapsed } from '../tool-format';
import { renderArgumentFields } from './argument-list';
import { IItemWidget, markItem } from './item-base';
import type { IDebugCardActions } from './debug-card';
import {
  defaultToolDisplays,
  type IToolDisplayContext,
  type IToolDisplayView,
  type ToolDisplayRegistry
} from './tool-displays';

/** Results longer than this (lines or characters) start collapsed, with "Show all". */
export const LONG_LINES = 20;
const LONG_CHARS = 2000;

/** What a card can do beyond showing the call. */
export interface IToolCardActions {
  /** Inserts code as a new cell below the active cell of the current notebook. */
  copyToNotebook?(code: string): void;
  /** Accepts or discards a staged edit (the diff display's buttons). */
  resolveEdit?: IToolDisplayContext['resolveEdit'];
  /** Approves or rejects a pending plan (the plan display's buttons). */
  resolvePlan?: IToolDisplayContext['resolvePlan'];
  /** Approves or rejects a pending orchestration (the orchestration display's buttons). */
  resolveOrchestration?: IToolDisplayContext['resolveOrchestration'];
  /** Approves a review finding (the review display's Approve). */
  approveReviewNode?: IToolDisplayContext['approveReviewNode'];
  acceptVerifyOutputs?: IToolDisplayContext['acceptVerifyOutputs'];
  /** The debug card's Terminate and scroll-to-cell. */
  debug?: IDebugCardActions;
  /** Opens a file at a line or a notebook at a cell (lsp cards). */
  openLocation?(location: LspDisplayLocation): void;
}

const STATUS_ICONS: Partial<Record<ToolCallStatus, LabIcon>> = {
  ok: checkIcon,
  // Not a green check: the call did nothing because the policy withheld its files.
  withheld: lockIcon,
  error: errorIcon,
  aborted: stopIcon
};

/** The widget for one `ToolCallItem`. */
export class ToolCardWidget extends Widget implements IItemWidget {
  readonly kind = 'tool' as const;

  constructor(
    private _item: ToolCallItem,
    private readonly _trans: TranslationBundle,
    /** Renders eval outputs (untrusted); without it they show as text only. */
    private readonly _rendermime?: IRenderMimeRegistry,
    private readonly _actions: IToolCardActions = {},
    /** Renderers by display kind; default: eval and text. */
    private readonly _displays: ToolDisplayRegistry = defaultDisplays()
  ) {
    super();
    this.addClass('jp-cellmate-tool');
    markItem(this.node, _item);

    this._card = document.createElement('details');
    this._card.className = 'jp-cellmate-tool-card';
    const summary = document.createElement('summary');
    summary.className = 'jp-cellmate-tool-summary';
    this._status = span('jp-cellmate-tool-status');
    this._name = span('jp-cellmate-tool-name');
    this._title = span('jp-cellmate-tool-title');
    this._actor = span('jp-cellmate-tool-actor');
    this._duration = span('jp-cellmate-tool-duration');
    this._kernel = span('jp-cellmate-tool-kernel');
    this._review = span('jp-cellmate-tool-review');
    summary.append(this._status, this._name, this._title, this._review, this._kernel, this._actor, this._duration);
    // Outside the summary, so a folded running card still shows what the cell prints.
    this._progress = document.createElement('div');
    this._progress.className = 'jp-cellmate-tool-progress';
    this._progress.hidden = true;
    this._progress.setAttribute('aria-label', _trans.__('Last output line'));

    this._args = document.createElement('div');
    this._args.className = 'jp-cellmate-tool-args';
    this._argsHeading = heading(_trans.__('Arguments'));
    this._code = document.createElement('pre');
    this._code.className = 'jp-cellmate-tool-code';
    this._code.setAttribute('aria-label', _trans.__('Code'));
    this._result = document.createElement('div');
    this._result.className = 'jp-cellmate-tool-result';
    this._display = document.createElement('div');
    this._display.className = 'jp-cellmate-tool-display';
    this._tools = document.createElement('div');
    this._tools.className = 'jp-cellmate-tool-actions';
    this._card.append(summary, this._argsHeading, this._args, this._code, this._tools, this._display, this._result);
    this.node.append(this._card, this._progress);
    this.setItem(_item);
  }

  get itemId(): string {
    return this._item.id;
  }

  setItem(item: TranscriptItem): void {
    if (item.kind !== 'tool') {
      return;
    }
    const previous = this._item;
    this._item = item;
    const card = this._card;
    card.dataset.toolName = item.name;
    card.dataset.status = item.status;
    card.dataset.actor = item.actor;

    this._status.replaceChildren(statusIcon(item.status));
    this._status.title = this._statusLabel(item.status);
    this._status.setAttribute('aria-label', this._status.title);
    this._name.textContent = item.name;
    const description = (item.args as { description?: unknown } | null)?.description;
    const title = item.title ?? (typeof description === 'string' ? description : '');
    this._title.textContent = title && title !== item.name ? title : '';
    this._actor.textContent = item.actor === 'model' ? '' : this._trans.__('from %1', item.actor);
    this._showReview(item, previous);
    this._updateDuration();
    this._tick(item.status === 'running');
    if (item.status !== 'running') {
      this.setProgress(undefined);
    }
    this._renderActions(item);

    if (previous !== item || !this._args.hasChildNodes()) {
      // Code reads as code, and the other arguments as text by name, not as a JSON string full of \n escapes.
      const code = codeOf(item);
      const rest = code !== null ? withoutCode(item.args) : item.args;
      // A description the card's title already shows is not said twice.
      const fields = argumentFields(rest).filter((f) => !(f.label === 'description' && f.value === title));
      this._args.replaceChildren(renderArgumentFields(fields));
      this._args.hidden = this._argsHeading.hidden = fields.length === 0;
      this._code.textContent = code ?? '';
      this._code.hidden = code === null;
    }
    if (previous.output !== item.output || !this._resultShown) {
      this._renderResult(item.output);
    }
    if (previous.display !== item.display || !this._displayShown) {
      this._renderDisplay(item);
    }
  }

  override dispose(): void {
    this._tick(false);
    this._view?.dispose();
    super.dispose();
  }

  /** Shows the last line a running call printed (from `tool-progress`). */
  setProgress(lastLine: string | undefined): void {
    const show = this._item.status === 'running' && !!lastLine;
    this._progress.hidden = !show;
    this._progress.textContent = show ? (lastLine ?? '') : '';
  }

  /**
   * The final run time, or the run time so far while the call runs; the person's approval
   * wait is shown apart ("waited 8 s for you"), and while the card waits for them the
   * timer says so instead of counting.
   */
  private _updateDuration(): void {
    const item = this._item;
    const waitMs = typeof item.waitMs === 'number' && item.waitMs > 0 ? item.waitMs : 0;
    this._duration.dataset.waitMs = String(waitMs);
    const waited = waitMs >= 1000 ? ` · ${this._trans.__('waited %1 for you', formatDuration(waitMs))}` : '';
    if (item.durationMs !== undefined) {
      this._duration.textContent = `${formatDuration(item.durationMs)}${waited}`;
      this._duration.dataset.elapsed = 'false';
      return;
    }
    const started = Date.parse(item.time);
    if (item.status === 'running' && item.waiting === true) {
      this._duration.textContent = this._trans.__('waiting for you');
      this._duration.dataset.elapsed = 'waiting';
    } else if (item.status === 'running' && Number.isFinite(started)) {
      this._duration.textContent = `${formatElapsed(Date.now() - started - waitMs)}${waited}`;
      this._duration.dataset.elapsed = 'true';
    } else {
      this._duration.textContent = '';
    }
  }

  /** Ticks the elapsed time once a second while the call runs. */
  private _tick(on: boolean): void {
    if (on && this._timer === undefined) {
      this._timer = window.setInterval(() => this._updateDuration(), 1000);
    } else if (!on && this._timer !== undefined) {
      window.clearInterval(this._timer);
      this._timer = undefined;
    }
  }

  /** "Copy to notebook" for cards that carry code (eval). */
  private _renderActions(item: ToolCallItem): void {
    const code = codeOf(item);
    const copy = this._actions.copyToNotebook;
    if (!code || !copy) {
      this._tools.replaceChildren();
      this._tools.hidden = true;
      return;
    }
    this._tools.hidden = false;
    if (this._tools.childElementCount === 0) {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'jp-Button jp-mod-minimal jp-cellmate-copy-to-notebook';
      button.textContent = this._trans.__('Copy to notebook');
      button.setAttribute('aria-label', this._trans.__('Copy this code to the notebook as a new cell'));
      button.title = this._trans.__('Insert the code as a new cell below the active cell');
      button.addEventListener('click', () => {
        const current = codeOf(this._item);
        if (current) {
          copy(current);
        }
      });
      this._tools.appendChild(button);
    }
  }

  /** The display part, by kind: its summary label (eval: the kernel) and its body. */
  private _renderDisplay(item: ToolCallItem): void {
    this._displayShown = true;
    this._view?.dispose();
    this._view =
      this._displays.render(item.display, {
        rendermime: this._rendermime,
        trans: this._trans,
        resolveEdit: this._actions.resolveEdit,
        ...(this._actions.resolvePlan ? { resolvePlan: this._actions.resolvePlan } : {}),
        ...(this._actions.approveReviewNode ? { approveReviewNode: this._actions.approveReviewNode } : {}),
        ...(this._actions.acceptVerifyOutputs ? { acceptVerifyOutputs: this._actions.acceptVerifyOutputs } : {}),
        ...(this._actions.resolveOrchestration ? { resolveOrchestration: this._actions.resolveOrchestration } : {}),
        ...(this._actions.debug ? { debug: this._actions.debug } : {}),
        ...(this._actions.openLocation ? { openLocation: this._actions.openLocation } : {})
      }) ?? undefined;
    this._kernel.textContent = this._view?.summary ?? '';
    if (!this._view) {
      return;
    }
    this._display.appendChild(this._view.node);
    if (this._view.openByDefault) {
      this._card.open = true;
    }
  }

  private _renderResult(output: string | undefined): void {
    this._resultShown = true;
    if (output === undefined) {
      this._result.replaceChildren();
      return;
    }
    const pre = document.createElement('pre');
    pre.className = 'jp-cellmate-tool-output';
    pre.textContent = output;
    const lines = countLines(output);
    if (lines > LONG_LINES || output.length > LONG_CHARS) {
      // The whole text stays in the DOM (find, copy); CSS shows the first lines.
      pre.classList.add('jp-mod-collapsed');
      const more = document.createElement('button');
      more.type = 'button';
      more.className = 'jp-Button jp-mod-minimal jp-cellmate-show-all';
      const label = (): void => {
        const collapsed = pre.classList.contains('jp-mod-collapsed');
        more.textContent = collapsed
          ? this._trans._n('Show all (%1 line)', 'Show all (%1 lines)', lines)
          : this._trans.__('Show less');
        more.setAttribute('aria-expanded', String(!collapsed));
      };
      more.addEventListener('click', () => {
        pre.classList.toggle('jp-mod-collapsed');
        label();
      });
      label();
      this._result.replaceChildren(heading(this._trans._n('Result (%1 line)', 'Result (%1 lines)', lines)), pre, more);
    } else {
      this._result.replaceChildren(heading(this._trans.__('Result')), pre);
    }
  }

  /** The Auto reviewer's line; an auto-approved card folds to it (the person need not look). */
  private _showReview(item: ToolCallItem, previous: ToolCallItem): void {
    const review = item.review;
    this._card.dataset.review = review?.state ?? '';
    if (!review) {
      this._review.textContent = '';
      return;
    }
    if (review.state === 'checking') {
      this._review.textContent = this._trans.__('checking…');
      this._review.title = this._trans.__('The Auto reviewer is judging this call');
    } else if (review.state === 'auto-approved') {
      this._review.textContent = this._trans.__('Auto-approved: %1', review.reason);
      this._review.title = this._review.textContent;
      if (previous.review?.state !== 'auto-approved') {
        this._card.open = false;
      }
    } else {
      const why =
        review.outcome === 'timeout'
          ? this._trans.__('the reviewer did not answer in time')
          : review.outcome === 'ask'
            ? review.reason
            : this._trans.__('no usable verdict (%1)', review.reason);
      this._review.textContent = this._trans.__('Asked you: %1', why);
      this._review.title = this._review.textContent;
    }
  }

  private _statusLabel(status: ToolCallStatus): string {
    switch (status) {
      case 'running':
        return this._trans.__('Running');
      case 'ok':
        return this._trans.__('Done');
      case 'withheld':
        return this._trans.__('Withheld by policy');
      case 'error':
        return this._trans.__('Failed');
      case 'aborted':
        return this._trans.__('Stopped');
    }
  }

  private readonly _card: HTMLDetailsElement;
  private readonly _status: HTMLElement;
  private readonly _name: HTMLElement;
  private readonly _title: HTMLElement;
  private readonly _actor: HTMLElement;
  private readonly _duration: HTMLElement;
  private readonly _args: HTMLElement;
  private readonly _argsHeading: HTMLElement;
  private readonly _result: HTMLElement;
  private readonly _display: HTMLElement;
  private readonly _kernel: HTMLElement;
  private readonly _review: HTMLElement;
  private readonly _tools: HTMLElement;
  private readonly _code: HTMLElement;
  private readonly _progress: HTMLElement;
  private _timer: number | undefined;
  private _view: IToolDisplayView | undefined;
  private _resultShown = false;
  private _displayShown = false;
}

let sharedDisplays: ToolDisplayRegistry | undefined;
/** One default registry for every card (renderers are stateless). */
function defaultDisplays(): ToolDisplayRegistry {
  return (sharedDisplays ??= defaultToolDisplays());
}

function withoutCode(args: unknown): unknown {
  const { code: _code, ...rest } = args as Record<string, unknown>;
  return rest;
}

function statusIcon(status: ToolCallStatus): HTMLElement {
  const icon = STATUS_ICONS[status];
  if (icon) {
    return icon.element({ tag: 'span', className: 'jp-cellmate-status-icon' });
  }
  return span('jp-cellmate-spinner');
}

function span(className: string): HTMLElement {
  const node = document.createElement('span');
  node.className = className;
  return node;
}

function heading(text: string): HTMLElement {
  const node = document.createElement('div');
  node.className = 'jp-cellmate-tool-heading';
  node.textContent = text;
  return node;
}

/** `850 ms`, `1.2 s`, `2 min 5 s`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) {
    return '';
  }
  if (ms < 1000) {
    return `${Math.round(ms)} ms`;
  }
  if (ms < 60_000) {
    return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  }
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return `${minutes} min ${seconds} s`;
}

function countLines(text: string): number {
  let lines = 1;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) {
    lines++;
  }
  return lines;
}
