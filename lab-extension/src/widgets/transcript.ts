/**
 * The transcript: one widget per item, kept in the model's order, updated per change.
 * Follows the bottom while the user is at the bottom; stays put when they scrolled up.
 * A long chat shows its latest items; scrolling to the top (or the "earlier messages"
 * button there) loads the page before them, keeping what the user looks at in place.
 */
import type { TranscriptItem } from '@cellmate/protocol';
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Panel } from '@lumino/widgets';

import { ChatChange, ChatState } from '../model';
import { createItemWidget, IItemContext, IItemWidget } from './items';

/** Within this many pixels of the bottom counts as "at the bottom". */
const BOTTOM_SLACK = 32;
/** Within this many pixels of the top, older items are loaded. */
const TOP_SLACK = 48;

export class TranscriptWidget extends Panel {
  constructor(options: TranscriptWidget.IOptions) {
    super();
    this.addClass('jp-cellmate-transcript');
    this.node.setAttribute('role', 'log');
    this.node.setAttribute('aria-live', 'polite');
    this.node.setAttribute('aria-label', options.trans.__('Cellmate transcript'));
    this.node.tabIndex = 0;
    this._context = {
      rendermime: options.rendermime,
      trans: options.trans,
      onResize: () => this._follow(),
      answerQuestion: options.answerQuestion,
      retry: options.retry,
      edit: options.edit,
      copyToNotebook: options.copyToNotebook,
      resolveEdit: options.resolveEdit,
      resolvePlan: options.resolvePlan,
      resolveOrchestration: options.resolveOrchestration,
      approveReviewNode: options.approveReviewNode,
      acceptVerifyOutputs: options.acceptVerifyOutputs,
      debug: options.debug,
      openLocation: options.openLocation,
      ...(options.rewind ? { rewind: options.rewind } : {})
    };
    this._empty = document.createElement('div');
    this._empty.className = 'jp-cellmate-empty';
    this._empty.textContent = options.trans.__(
      'Ask Cellmate about your notebooks and files. It works in your kernels and shows every tool it uses.'
    );
    this.node.appendChild(this._empty);
    this._trans = options.trans;
    this._loadOlder = options.loadOlder;
    this._older = document.createElement('button');
    this._older.className = 'jp-cellmate-older';
    this._older.hidden = true;
    this._older.addEventListener('click', () => this._loadOlder?.());
    this.node.insertBefore(this._older, this.node.firstChild);
    this.node.addEventListener('scroll', this._onScroll, { passive: true });
  }

  /** Shows `state`; `change` says which items to touch. */
  render(state: ChatState | null, change: ChatChange): void {
    const items = state?.items ?? [];
    this._empty.hidden = items.length > 0;
    const older = state?.olderCount ?? 0;
    this._older.hidden = older === 0;
    this._older.textContent = this._trans._n('Show %1 earlier item', 'Show %1 earlier items', older);
    if (change.structure || this._byId.size !== items.length) {
      // Items put in front (an older page) must not move what the user is looking at.
      const first = this.widgets[0];
      const top = first ? first.node.getBoundingClientRect().top : 0;
      this._reconcile(items);
      if (!this._stick && first && !first.isDisposed && this.widgets[0] !== first) {
        this.node.scrollTop += first.node.getBoundingClientRect().top - top;
      }
    } else {
      for (const id of change.updated) {
        const item = items.find((i) => i.id === id);
        const widget = this._byId.get(id);
        if (!item || !widget || widget.kind !== item.kind) {
          this._reconcile(items);
          break;
        }
        widget.setItem(item);
      }
    }
    for (const id of change.updated) {
      this._byId.get(id)?.setProgress?.(state?.progress?.get(id));
    }
    if (change.structure) {
      for (const [id, widget] of this._byId) {
        widget.setProgress?.(state?.progress?.get(id));
      }
    }
    this._markLastUser(items);
    this._items = items;
    this._markRewind();
    this._follow();
  }

  /** Scrolls to the newest item and sticks there. */
  scrollToBottom(): void {
    this._stick = true;
    this._follow();
  }

  override dispose(): void {
    this.node.removeEventListener('scroll', this._onScroll);
    this._byId.clear();
    super.dispose();
  }

  private _reconcile(items: readonly TranscriptItem[]): void {
    const keep = new Set(items.map((i) => i.id));
    for (const [id, widget] of this._byId) {
      if (!keep.has(id)) {
        this._byId.delete(id);
        widget.dispose();
      }
    }
    items.forEach((item, index) => {
      let widget = this._byId.get(item.id);
      if (widget && widget.kind !== item.kind) {
        this._byId.delete(item.id);
        widget.dispose();
        widget = undefined;
      }
      if (!widget) {
        widget = createItemWidget(item, this._context);
        this._byId.set(item.id, widget);
      } else {
        widget.setItem(item);
      }
      if (this.widgets[index] !== widget) {
        this.insertWidget(index, widget);
      }
    });
  }

  /**
   * Which turns changed files (each has a checkpoint): a user message offers "Undo this
   * turn's changes" for its own turn and "Rewind to here" when it or a later turn has one.
   */
  setCheckpoints(turnIds: ReadonlySet<string>): void {
    this._checkpoints = turnIds;
    this._markRewind();
  }

  /** Opens "Rewind to here" on the latest user message that offers it; false when none does. */
  openLatestRewind(): boolean {
    for (let i = this._items.length - 1; i >= 0; i--) {
      const item = this._items[i];
      if (item.kind !== 'user') {
        continue;
      }
      const widget = this._byId.get(item.id) as
        (IItemWidget & { openRewind?(scope: 'turn' | 'from'): boolean }) | undefined;
      if (widget?.openRewind?.('from')) {
        widget.node.scrollIntoView({ block: 'nearest' });
        return true;
      }
    }
    return false;
  }

  private _markRewind(): void {
    let later = false;
    for (let i = this._items.length - 1; i >= 0; i--) {
      const item = this._items[i];
      const has = this._checkpoints.has(item.turnId);
      later = later || has;
      if (item.kind === 'user') {
        const widget = this._byId.get(item.id) as
          (IItemWidget & { setRewind?(turn: boolean, from: boolean): void }) | undefined;
        widget?.setRewind?.(has, later);
      }
    }
  }

  /** Retry and Edit belong to the last user message only. */
  private _markLastUser(items: readonly TranscriptItem[]): void {
    let last: string | undefined;
    for (let i = items.length - 1; i >= 0; i--) {
      if (items[i].kind === 'user') {
        last = items[i].id;
        break;
      }
    }
    for (const [id, widget] of this._byId) {
      widget.toggleClass('jp-mod-last', id === last);
    }
  }

  private _follow(): void {
    if (this._stick) {
      this.node.scrollTop = this.node.scrollHeight;
    }
  }

  private readonly _onScroll = (): void => {
    const node = this.node;
    this._stick = node.scrollHeight - node.scrollTop - node.clientHeight <= BOTTOM_SLACK;
    if (node.scrollTop <= TOP_SLACK && !this._older.hidden) {
      this._loadOlder?.();
    }
  };

  private readonly _context: IItemContext;
  private _checkpoints: ReadonlySet<string> = new Set();
  private _items: readonly TranscriptItem[] = [];
  private readonly _byId = new Map<string, IItemWidget>();
  private readonly _empty: HTMLElement;
  private readonly _older: HTMLButtonElement;
  private readonly _trans: TranslationBundle;
  private readonly _loadOlder: (() => void) | undefined;
  private _stick = true;
}

export namespace TranscriptWidget {
  export interface IOptions {
    rendermime: IRenderMimeRegistry;
    trans: TranslationBundle;
    /** Sends a question card's answer. */
    answerQuestion?: IItemContext['answerQuestion'];
    retry?: IItemContext['retry'];
    edit?: IItemContext['edit'];
    copyToNotebook?: IItemContext['copyToNotebook'];
    resolveEdit?: IItemContext['resolveEdit'];
    resolvePlan?: IItemContext['resolvePlan'];
    resolveOrchestration?: IItemContext['resolveOrchestration'];
    approveReviewNode?: IItemContext['approveReviewNode'];
    acceptVerifyOutputs?: IItemContext['acceptVerifyOutputs'];
    debug?: IItemContext['debug'];
    openLocation?: IItemContext['openLocation'];
    rewind?: IItemContext['rewind'];
    /** Loads the page of items before the first one shown (the user scrolled to the top). */
    loadOlder?: () => void;
  }
}
