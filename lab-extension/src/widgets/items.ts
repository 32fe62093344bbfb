/**
 * One widget per transcript item: user text, assistant markdown, notices.
 * Tool calls are in `tool-card.ts`, usage lines and compaction cards in `context-items.ts`. Model text is never set as HTML: user text and
 * notices go in as text, assistant markdown through rendermime as untrusted (sanitized).
 */
import type { AssistantItem, NoticeItem, TranscriptItem, UserItem } from '@cellmate/protocol';
import { IRenderMime, MimeModel } from '@jupyterlab/rendermime';
import { editIcon, errorIcon, infoIcon, LabIcon, refreshIcon } from '@jupyterlab/ui-components';
import { Panel, Widget } from '@lumino/widgets';

import { CompactionWidget, UsageWidget } from './context-items';
import { IItemContext, IItemWidget, markItem } from './item-base';
import { QuestionCardWidget } from './question-card';
import { renderRewind } from './rewind-view';
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
      widget = new ToolCardWidget(item, context.trans, context.rendermime, {
        copyToNotebook: context.copyToNotebook,
        resolveEdit: context.resolveEdit,
        resolvePlan: context.resolvePlan,
        resolveOrchestration: context.resolveOrchestration,
        approveReviewNode: context.approveReviewNode,
        acceptVerifyOutputs: context.acceptVerifyOutputs,
        debug: context.debug,
        openLocation: context.openLocation
      });
      break;
    case 'notice':
      widget = new NoticeWidget(item);
      break;
    case 'question':
      widget = new QuestionCardWidget(item, context);
      break;
    case 'usage':
      widget = new UsageWidget(item, context);
      break;
    case 'compaction':
      widget = new CompactionWidget(item, context);
      break;
  }
  return widget;
}

/**
 * A user message. The last one (`.jp-mod-last`, set by the transcript) offers Retry and
 * Edit while no turn runs; Edit swaps the text for a textarea (Enter resends, Shift+Enter
 * adds a line, Esc cancels).
 */
class UserWidget extends Widget implements IItemWidget {
  readonly kind = 'user' as const;

  constructor(
    private _item: UserItem,
    private readonly _context: IItemContext
  ) {
    super();
    const trans = _context.trans;
    this.addClass('jp-cellmate-user');
    markItem(this.node, _item);
    this.node.setAttribute('aria-label', trans.__('You'));
    this._text = document.createElement('div');
    this._text.className = 'jp-cellmate-user-text';
    this.node.appendChild(this._text);
    if (_context.retry && _context.edit) {
      const actions = document.createElement('div');
      actions.className = 'jp-cellmate-user-actions';
      actions.append(
        iconButton('jp-cellmate-retry', refreshIcon, trans.__('Retry'), trans.__('Run this turn again')),
        iconButton('jp-cellmate-edit', editIcon, trans.__('Edit'), trans.__('Edit this message and send it again'))
      );
      actions.addEventListener('click', (event) => {
        const target = (event.target as HTMLElement).closest('button');
        if (target?.classList.contains('jp-cellmate-retry')) {
          void _context.retry?.();
        } else if (target?.classList.contains('jp-cellmate-edit')) {
          this._startEdit();
        }
      });
      this.node.appendChild(actions);
    }
    const rewind = _context.rewind;
    if (rewind) {
      this._rewindBar = document.createElement('div');
      this._rewindBar.className = 'jp-cellmate-rewind-bar';
      this._rewindBar.hidden = true;
      const undo = textButton(
        'jp-mod-minimal jp-cellmate-undo-turn',
        trans.__("Undo this turn's changes"),
        trans.__('Restore the files and notebooks this turn changed, as they were before it')
      );
      const back = textButton(
        'jp-mod-minimal jp-cellmate-rewind-here',
        trans.__('Rewind to here'),
        trans.__('Restore everything changed from this message on')
      );
      undo.addEventListener('click', () => this._openRewind('turn'));
      back.addEventListener('click', () => this._openRewind('from'));
      this._rewindBar.append(undo, back);
      this.node.appendChild(this._rewindBar);
    }
    this.setItem(_item);
  }

  get itemId(): string {
    return this._item.id;
  }

  /** Which rewinds this message offers: its own turn changed files (`turn`), or it or a later one did (`from`). */
  setRewind(turn: boolean, from: boolean): void {
    if (!this._rewindBar) {
      return;
    }
    this._rewindBar.hidden = !turn && !from;
    (this._rewindBar.querySelector('.jp-cellmate-undo-turn') as HTMLElement).hidden = !turn;
    (this._rewindBar.querySelector('.jp-cellmate-rewind-here') as HTMLElement).hidden = !from;
  }

  /** Opens the rewind box when this message offers that rewind (`/rewind`, the palette). */
  openRewind(scope: 'turn' | 'from'): boolean {
    const button = this._rewindBar?.querySelector(
      scope === 'turn' ? '.jp-cellmate-undo-turn' : '.jp-cellmate-rewind-here'
    ) as HTMLElement | null;
    if (!button || this._rewindBar!.hidden || button.hidden) {
      return false;
    }
    this._openRewind(scope);
    return true;
  }

  private _openRewind(scope: 'turn' | 'from'): void {
    const rewind = this._context.rewind;
    if (!rewind) {
      return;
    }
    this._rewindBox?.remove();
    const close = (): void => {
      box.remove();
      this._rewindBox = null;
      this.node.classList.remove('jp-mod-rewinding');
      this._context.onResize();
    };
    const box = renderRewind(this._item.id, scope, rewind, this._context.trans, close, (result) => {
      rewind.done(result);
      this._context.onResize();
    });
    this._rewindBox = box;
    this.node.classList.add('jp-mod-rewinding');
    this.node.appendChild(box);
    this._context.onResize();
  }

  setItem(item: TranscriptItem): void {
    if (item.kind === 'user') {
      this._item = item;
      this._text.textContent = item.text;
    }
  }

  private _startEdit(): void {
    if (this._editor) {
      this._editor.querySelector('textarea')?.focus();
      return;
    }
    const trans = this._context.trans;
    const editor = (this._editor = document.createElement('div'));
    editor.className = 'jp-cellmate-user-editor';
    const input = document.createElement('textarea');
    input.className = 'jp-cellmate-edit-input';
    input.value = this._item.text;
    input.rows = Math.min(8, Math.max(2, this._item.text.split('\n').length));
    input.setAttribute('aria-label', trans.__('Edited message'));
    const send = textButton(
      'jp-cellmate-edit-send jp-mod-accept',
      trans.__('Send'),
      trans.__('Send the edited message')
    );
    const cancel = textButton('jp-cellmate-edit-cancel', trans.__('Cancel'), trans.__('Cancel editing'));
    const submit = async (): Promise<void> => {
      if (input.value.trim() && (await this._context.edit?.(input.value))) {
        this._stopEdit();
      }
    };
    send.addEventListener('click', () => void submit());
    cancel.addEventListener('click', () => this._stopEdit());
    input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        event.stopPropagation();
        void submit();
      } else if (event.key === 'Escape') {
        event.preventDefault();
        event.stopPropagation();
        this._stopEdit();
      }
    });
    const buttons = document.createElement('div');
    buttons.className = 'jp-cellmate-user-editor-buttons';
    buttons.append(cancel, send);
    editor.append(input, buttons);
    this.node.classList.add('jp-mod-editing');
    this.node.appendChild(editor);
    input.focus();
    input.setSelectionRange(input.value.length, input.value.length);
  }

  private _stopEdit(): void {
    this._editor?.remove();
    this._editor = null;
    this.node.classList.remove('jp-mod-editing');
  }

  private readonly _text: HTMLElement;
  private _editor: HTMLElement | null = null;
  private _rewindBar: HTMLElement | null = null;
  private _rewindBox: HTMLElement | null = null;
}

function iconButton(className: string, icon: LabIcon, label: string, ariaLabel: string): HTMLButtonElement {
  const node = textButton(`jp-mod-minimal ${className}`, '', ariaLabel);
  node.append(
    icon.element({ tag: 'span', className: 'jp-cellmate-button-icon' }),
    Object.assign(document.createElement('span'), { className: 'jp-cellmate-button-label', textContent: label })
  );
  return node;
}

function textButton(className: string, text: string, ariaLabel: string): HTMLButtonElement {
  const node = document.createElement('button');
  node.type = 'button';
  node.className = `jp-Button ${className}`;
  node.textContent = text;
  node.title = ariaLabel;
  node.setAttribute('aria-label', ariaLabel);
  return node;
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
      await this._renderer.renderModel(new MimeModel({ data: { 'text/markdown': text }, trusted: false }));
      this._renderedText = text;
      this._addCodeActions();
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

  /** A "Copy to notebook" button under each code block of the rendered markdown. */
  private _addCodeActions(): void {
    const copy = this._context.copyToNotebook;
    if (!copy) {
      return;
    }
    const trans = this._context.trans;
    for (const pre of Array.from(this._renderer.node.querySelectorAll('pre'))) {
      if (pre.nextElementSibling?.classList.contains('jp-cellmate-code-actions')) {
        continue;
      }
      const bar = document.createElement('div');
      bar.className = 'jp-cellmate-code-actions';
      const button = textButton(
        'jp-mod-minimal jp-cellmate-copy-code',
        trans.__('Copy to notebook'),
        trans.__('Copy this code block to the notebook as a new cell')
      );
      button.addEventListener('click', () => copy((pre.textContent ?? '').replace(/\n$/, '')));
      bar.appendChild(button);
      pre.after(bar);
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
