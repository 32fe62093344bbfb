/**
 * The pane's header: chat selector, "New chat" button and the connection indicator.
 */
import type { ChatSummary } from '@cellmate/protocol';
import type { TranslationBundle } from '@jupyterlab/translation';
import { addIcon } from '@jupyterlab/ui-components';
import { Widget } from '@lumino/widgets';

import type { IConnectionStatus } from '../connection';

export class HeaderWidget extends Widget {
  constructor(options: HeaderWidget.IOptions) {
    super();
    const trans = (this._trans = options.trans);
    this.addClass('jp-cellmate-header');

    this._select = document.createElement('select');
    this._select.className = 'jp-cellmate-chat-select';
    this._select.setAttribute('aria-label', trans.__('Chat'));
    this._select.addEventListener('change', () => {
      const id = this._select.value;
      if (id && id !== this._openId) {
        options.onSelect(id);
      }
    });
    const selectWrap = document.createElement('div');
    selectWrap.className = 'jp-cellmate-chat-select-wrap jp-HTMLSelect jp-DefaultStyle';
    selectWrap.appendChild(this._select);

    this._newChat = document.createElement('button');
    this._newChat.type = 'button';
    this._newChat.className = 'jp-Button jp-mod-minimal jp-cellmate-new-chat';
    this._newChat.setAttribute('aria-label', trans.__('New chat'));
    this._newChat.title = trans.__('New chat');
    this._newChat.append(
      addIcon.element({ tag: 'span', className: 'jp-cellmate-button-icon' }),
      Object.assign(document.createElement('span'), {
        className: 'jp-cellmate-button-label',
        textContent: trans.__('New')
      })
    );
    this._newChat.addEventListener('click', () => options.onNewChat());

    this._connection = document.createElement('div');
    this._connection.className = 'jp-cellmate-connection';
    this._connection.setAttribute('role', 'status');
    this._connection.addEventListener('click', () => {
      if (this._connection.dataset.state === 'reconnecting') {
        options.onRetry();
      }
    });
    this._dot = document.createElement('span');
    this._dot.className = 'jp-cellmate-connection-dot';
    this._label = document.createElement('span');
    this._label.className = 'jp-cellmate-connection-label';
    this._connection.append(this._dot, this._label);

    const row = document.createElement('div');
    row.className = 'jp-cellmate-header-row';
    row.append(selectWrap, this._newChat);
    this.node.append(row, this._connection);
  }

  /** Fills the selector; `openId` is the open chat (null: none yet). */
  setChats(chats: readonly ChatSummary[], openId: string | null, openTitle?: string): void {
    this._openId = openId;
    const options: HTMLOptionElement[] = chats.map(chat => option(chat.id, chat.title || chat.id));
    if (openId && !chats.some(c => c.id === openId)) {
      options.unshift(option(openId, openTitle || openId));
    }
    if (!openId) {
      const placeholder = option('', this._trans.__('New chat'));
      placeholder.disabled = true;
      options.unshift(placeholder);
    }
    this._select.replaceChildren(...options);
    this._select.value = openId ?? '';
    this._select.disabled = chats.length === 0;
  }

  /** Shows the connection state; `data-state` is the hook browser tests wait on. */
  setConnection(status: IConnectionStatus): void {
    const state = status.state === 'disposed' ? 'reconnecting' : status.state;
    this._connection.dataset.state = state;
    const trans = this._trans;
    let label: string;
    switch (state) {
      case 'connected':
        label = trans.__('Connected');
        break;
      case 'connecting':
        label = trans.__('Connecting…');
        break;
      default:
        label = status.reason
          ? trans.__('Reconnecting (%1)…', status.reason)
          : trans.__('Reconnecting…');
    }
    this._label.textContent = label;
    this._connection.title =
      state === 'reconnecting' ? trans.__('%1 Click to retry now.', label) : label;
  }

  /** Enables the "New chat" button (only useful while connected). */
  setEnabled(enabled: boolean): void {
    this._newChat.disabled = !enabled;
  }

  private readonly _trans: TranslationBundle;
  private readonly _select: HTMLSelectElement;
  private readonly _newChat: HTMLButtonElement;
  private readonly _connection: HTMLElement;
  private readonly _dot: HTMLElement;
  private readonly _label: HTMLElement;
  private _openId: string | null = null;
}

export namespace HeaderWidget {
  export interface IOptions {
    trans: TranslationBundle;
    onSelect(chatId: string): void;
    onNewChat(): void;
    onRetry(): void;
  }
}

function option(value: string, label: string): HTMLOptionElement {
  const node = document.createElement('option');
  node.value = value;
  node.textContent = label;
  return node;
}
