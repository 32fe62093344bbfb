/**
 * The composer's context meter (CTX-1) and its Compact button (CTX-3): the last request's
 * tokens against the model's window as a label and a thin bar, amber past 80 % of the
 * window, red past the point where the next step compacts. The tooltip has the details.
 */
import type { ContextStatus } from '@cellmate/protocol';
import type { TranslationBundle } from '@jupyterlab/translation';
import { collapseAllIcon } from '@jupyterlab/ui-components';

import { compactMark, contextLabel, contextLevel, contextShare, contextTooltip } from '../context-format';

/** What the meter row shows. */
export interface IContextMeterState {
  /** The open chat's figures; absent before its first request (the meter hides). */
  context?: ContextStatus;
  /** A chat is open: the row (and Compact) shows. */
  chatOpen: boolean;
  /** Compact can run now (no turn, send or compaction under way, connected). */
  canCompact: boolean;
  /** A compaction is in flight. */
  compacting: boolean;
}

/** The row under the message box: `.jp-cellmate-context` with the meter and `button.jp-cellmate-compact`. */
export class ContextMeter {
  /** The row's element, placed by the composer. */
  readonly node: HTMLElement;

  constructor(trans: TranslationBundle, onCompact: (() => void) | undefined) {
    this._trans = trans;
    this.node = document.createElement('div');
    this.node.className = 'jp-cellmate-context';

    this._meter = document.createElement('div');
    this._meter.className = 'jp-cellmate-context-meter';
    this._meter.setAttribute('role', 'meter');
    this._meter.setAttribute('aria-label', trans.__('Context used'));
    this._meter.setAttribute('aria-valuemin', '0');
    // Keyboard users reach the tooltip's figures through focus.
    this._meter.tabIndex = 0;
    this._label = document.createElement('span');
    this._label.className = 'jp-cellmate-context-label';
    const bar = document.createElement('span');
    bar.className = 'jp-cellmate-context-bar';
    this._fill = document.createElement('span');
    this._fill.className = 'jp-cellmate-context-fill';
    this._mark = document.createElement('span');
    this._mark.className = 'jp-cellmate-context-mark';
    bar.append(this._fill, this._mark);
    this._meter.append(this._label, bar);

    this._compact = document.createElement('button');
    this._compact.type = 'button';
    this._compact.className = 'jp-Button jp-mod-minimal jp-cellmate-compact';
    this._compact.title = trans.__('Compact the conversation');
    this._compact.setAttribute('aria-label', trans.__('Compact the conversation'));
    this._compact.append(collapseAllIcon.element({ tag: 'span', className: 'jp-cellmate-button-icon' }));
    this._compact.hidden = !onCompact;
    this._compact.addEventListener('click', () => onCompact?.());

    this.node.append(this._meter, this._compact);
    this.update({ chatOpen: false, canCompact: false, compacting: false });
  }

  /** Shows `state`. */
  update(state: IContextMeterState): void {
    const trans = this._trans;
    this.node.hidden = !state.chatOpen;
    this._compact.disabled = !state.canCompact;
    this._compact.dataset.compacting = String(state.compacting);
    this._compact.title = state.compacting
      ? trans.__('Compacting the conversation…')
      : trans.__('Compact the conversation');
    const context = state.context;
    this._meter.hidden = !context;
    if (!context) {
      delete this._meter.dataset.level;
      return;
    }
    const level = contextLevel(context);
    const label = contextLabel(context, trans);
    this._meter.dataset.level = level;
    this._meter.dataset.used = String(context.usedTokens);
    if (context.window) {
      this._meter.dataset.window = String(context.window);
      this._meter.setAttribute('aria-valuemax', String(context.window));
    } else {
      delete this._meter.dataset.window;
      this._meter.removeAttribute('aria-valuemax');
    }
    if (context.compactAtTokens !== undefined) {
      this._meter.dataset.compactAt = String(context.compactAtTokens);
    } else {
      delete this._meter.dataset.compactAt;
    }
    this._meter.setAttribute('aria-valuenow', String(context.usedTokens));
    this._meter.setAttribute('aria-valuetext', label);
    this._meter.title = contextTooltip(context, trans);
    this._label.textContent = label;
    this._fill.style.width = `${(contextShare(context) * 100).toFixed(1)}%`;
    const mark = compactMark(context);
    this._mark.hidden = mark === null;
    this._mark.style.left = mark === null ? '' : `${(mark * 100).toFixed(1)}%`;
  }

  private readonly _trans: TranslationBundle;
  private readonly _meter: HTMLElement;
  private readonly _label: HTMLElement;
  private readonly _fill: HTMLElement;
  private readonly _mark: HTMLElement;
  private readonly _compact: HTMLButtonElement;
}
