/**
 * Transcript items about the context (CTX-1, CTX-3): a turn's usage as one muted line, and
 * the card of a compaction — why, what was pruned and summarised, tokens before and after,
 * the summary the model now reads (collapsed). Neither is part of what the model is sent.
 */
import type { CompactionItem, TranscriptItem, UsageItem } from '@cellmate/protocol';
import { IRenderMime, MimeModel } from '@jupyterlab/rendermime';
import { collapseAllIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import { compactionHeadline, usageLine, usageTooltip } from '../context-format';
import { IItemContext, IItemWidget, markItem } from './item-base';

/** `↑ 12.3k in (9.8k cached) · ↓ 450 out · 3 requests · ≈ $0.004` at the end of a turn. */
export class UsageWidget extends Widget implements IItemWidget {
  readonly kind = 'usage' as const;

  constructor(
    private _item: UsageItem,
    private readonly _context: IItemContext
  ) {
    super();
    this.addClass('jp-cellmate-usage');
    markItem(this.node, _item);
    this.setItem(_item);
  }

  get itemId(): string {
    return this._item.id;
  }

  setItem(item: TranscriptItem): void {
    if (item.kind !== 'usage') {
      return;
    }
    this._item = item;
    const trans = this._context.trans;
    this.node.textContent = usageLine(item, trans);
    this.node.title = usageTooltip(item, trans);
  }
}

/** "Context compacted (auto) · 12 old outputs pruned · 14.2k → 5.1k tokens", the summary, a note. */
export class CompactionWidget extends Widget implements IItemWidget {
  readonly kind = 'compaction' as const;

  constructor(
    private _item: CompactionItem,
    private readonly _context: IItemContext
  ) {
    super();
    const trans = _context.trans;
    this.addClass('jp-cellmate-compaction');
    markItem(this.node, _item);
    this.node.setAttribute('role', 'status');

    const head = document.createElement('div');
    head.className = 'jp-cellmate-compaction-headline';
    this._headline = document.createElement('span');
    this._headline.className = 'jp-cellmate-compaction-text';
    head.append(collapseAllIcon.element({ tag: 'span', className: 'jp-cellmate-compaction-icon' }), this._headline);

    this._details = document.createElement('details');
    this._details.className = 'jp-cellmate-compaction-summary';
    const summary = document.createElement('summary');
    summary.textContent = trans.__('Summary the model now reads in place of the earlier turns');
    this._body = document.createElement('div');
    this._body.className = 'jp-cellmate-compaction-body';
    this._details.append(summary, this._body);
    // Rendered on first open: most summaries are never read in the pane.
    this._details.addEventListener('toggle', () => {
      if (this._details.open) {
        void this._renderSummary();
      }
    });

    const note = document.createElement('div');
    note.className = 'jp-cellmate-compaction-note';
    note.textContent = trans.__(
      'Only what the model is sent changed: the full history stays in this transcript and in the chat file.'
    );
    this.node.append(head, this._details, note);
    this.setItem(_item);
  }

  get itemId(): string {
    return this._item.id;
  }

  setItem(item: TranscriptItem): void {
    if (item.kind !== 'compaction') {
      return;
    }
    const summaryChanged = item.summary !== this._item.summary;
    this._item = item;
    this.node.dataset.trigger = item.trigger;
    this._headline.textContent = compactionHeadline(item, this._context.trans);
    this._details.hidden = !item.summary;
    if (summaryChanged && this._details.open) {
      void this._renderSummary();
    }
  }

  override dispose(): void {
    this._renderer?.dispose();
    super.dispose();
  }

  /** The summary as markdown through rendermime, untrusted (sanitized) like assistant text. */
  private async _renderSummary(): Promise<void> {
    const text = this._item.summary ?? '';
    if (this._renderedSummary === text || this.isDisposed) {
      return;
    }
    this._renderedSummary = text;
    if (!this._renderer) {
      this._renderer = this._context.rendermime.createRenderer('text/markdown');
      this._renderer.addClass('jp-cellmate-markdown');
      // The details element is open, so in the page: Lumino can attach there.
      Widget.attach(this._renderer, this._body);
    }
    try {
      await this._renderer.renderModel(new MimeModel({ data: { 'text/markdown': text }, trusted: false }));
    } catch {
      this._renderer.node.textContent = text;
    }
    this._context.onResize();
  }

  private readonly _headline: HTMLElement;
  private readonly _details: HTMLDetailsElement;
  private readonly _body: HTMLElement;
  private _renderer: IRenderMime.IRenderer | null = null;
  private _renderedSummary: string | null = null;
}
