/**
 * One widget per transcript item: user text, assistant markdown, notices.
 * Tool calls are in `tool-card.ts`. Model text is never set as HTML: user text and
 * notices go in as text, assistant markdown through rendermime as untrusted (sanitized).
 */
import type { AssistantItem, NoticeItem, TranscriptItem, UserItem } from '@cellmate/protocol';
import { IRenderMime, MimeModel } from '@jupyterlab/rendermime';
import { errorIcon, infoIcon, LabIcon } from '@jupyterlab/ui-components';
import { Panel, Widget } from '@lumino/widgets';

import { IItemContext, IItemWidget, markItem } from './item-base';
import { QuestionCardWidget } from './question-card';
import { ToolCardWidget } from './tool-card';

export type { IItemContext, IItemWidget } from './item-base';

/** Creates the widget for an item. */
export function createItemWidget(item: TranscriptItem, context: IItemContext): IItemWidget {
  let widget: IItemWidget;
  switch (item.kind) {
    case 'user':
      widget = new UserWidget(item, context);
      break;
    case 'assistant':
      widget = new AssistantWidget(item, context);
      break;
    case 'tool':
      widget = new ToolCardWidget(item, context.trans, context.rendermime);
      break;
    case 'notice':
      widget = new NoticeWidget(item);
      break;
    case 'question':
      widget = new QuestionCardWidget(item, context);
      break;
  }
  return widget;
}

class UserWidget extends Widget implements IItemWidget {
  readonly kind = 'user' as const;

  constructor(
    private _item: UserItem,
    context: IItemContext
  ) {
    super();
    this.addClass('jp-cellmate-user');
    markItem(this.node, _item);
    this.node.setAttribute('aria-label', context.trans.__('You'));
    this._text = document.createElement('div');
    this._text.className = 'jp-cellmate-user-text';
    this.node.appendChild(this._text);
    this.setItem(_item);
  }

  get itemId(): string {
    return this._item.id;
  }

  setItem(item: TranscriptItem): void {
    if (item.kind === 'user') {
      this._item = item;
      this._text.textContent = item.text;
    }
  }

  private readonly _text: HTMLElement;
}

/** Assistant markdown, re-rendered at most once per animation frame while streaming. */
class AssistantWidget extends Panel implements IItemWidget {
  readonly kind = 'assistant' as const;

  constructor(
    private _item: AssistantItem,
    private readonly _context: IItemContext
  ) {
    super();
    this.addClass('jp-cellmate-assistant');
    markItem(this.node, _item);
    this._renderer = _context.rendermime.createRenderer('text/markdown');
    this._renderer.addClass('jp-cellmate-markdown');
    this.addWidget(this._renderer);
    this.setItem(_item);
  }

  get itemId(): string {
    return this._item.id;
  }

  setItem(item: TranscriptItem): void {
    if (item.kind !== 'assistant') {
      return;
    }
    this._item = item;
    this.node.dataset.streaming = String(item.streaming);
    // Screen readers wait for the final text instead of reading every frame.
    this.node.setAttribute('aria-busy', String(item.streaming));
    if (item.text !== this._renderedText) {
      this._schedule();
    }
  }

  override dispose(): void {
    if (this._frame) {
      cancelAnimationFrame(this._frame);
      this._frame = 0;
    }
    super.dispose();
  }

  private _schedule(): void {
    if (this._frame === 0) {
      this._frame = requestAnimationFrame(() => {
        this._frame = 0;
        void this._render();
      });
    }
  }

  private async _render(): Promise<void> {
    if (this.isDisposed) {
      return;
    }
    if (this._rendering) {
      this._dirty = true;
      return;
    }
    const text = this._item.text;
    if (text === this._renderedText) {
      return;
    }
    this._rendering = true;
    try {
      await this._renderer.renderModel(
        new MimeModel({ data: { 'text/markdown': text }, trusted: false })
      );
      this._renderedText = text;
    } catch (error) {
      console.error('Cellmate: could not render markdown', error);
      this._renderer.node.textContent = text;
      this._renderedText = text;
    } finally {
      this._rendering = false;
    }
    if (this.isDisposed) {
      return;
    }
    this._context.onResize();
    if (this._dirty || this._item.text !== this._renderedText) {
      this._dirty = false;
      this._schedule();
    }
  }

  private readonly _renderer: IRenderMime.IRenderer;
  private _renderedText: string | null = null;
  private _frame = 0;
  private _rendering = false;
  private _dirty = false;
}

const NOTICE_ICONS: Record<NoticeItem['level'], LabIcon> = {
  info: infoIcon,
  warning: errorIcon,
  error: errorIcon
};

class NoticeWidget extends Widget implements IItemWidget {
  readonly kind = 'notice' as const;

  constructor(private _item: NoticeItem) {
    super();
    this.addClass('jp-cellmate-notice');
    markItem(this.node, _item);
    this.node.setAttribute('role', _item.level === 'error' ? 'alert' : 'status');
    this.setItem(_item);
  }

  get itemId(): string {
    return this._item.id;
  }

  setItem(item: TranscriptItem): void {
    if (item.kind !== 'notice') {
      return;
    }
    this._item = item;
    this.node.dataset.level = item.level;
    this.node.replaceChildren(
      NOTICE_ICONS[item.level].element({ tag: 'span', className: 'jp-cellmate-notice-icon' }),
      Object.assign(document.createElement('span'), {
        className: 'jp-cellmate-notice-text',
        textContent: item.text
      })
    );
  }
}
