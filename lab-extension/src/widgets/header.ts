/**
 * The pane's header: chat selector, Rename / Delete / New chat buttons, the connection
 * indicator, the chat's mode, which kernel the chat's evals use, and the instruction files
 * the next turn reads (a chip; clicking it lists them).
 */
import {
  MODE_LABELS,
  type ChatMode,
  type ChatSummary,
  type EvalKernelInfo,
  type InstructionFileInfo,
  type NotebookKernelRef
} from '@cellmate/protocol';
import type { TranslationBundle } from '@jupyterlab/translation';
import { addIcon, checkIcon, deleteIcon, editIcon, LabIcon } from '@jupyterlab/ui-components';
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

    this._newChat = headerButton('jp-cellmate-new-chat', addIcon, trans.__('New'), trans.__('New chat'));
    this._newChat.addEventListener('click', () => options.onNewChat());
    this._rename = headerButton('jp-cellmate-rename-chat', editIcon, '', trans.__('Rename chat'));
    this._rename.addEventListener('click', () => this._openId && options.onRename?.(this._openId));
    this._delete = headerButton('jp-cellmate-delete-chat', deleteIcon, '', trans.__('Delete chat'));
    this._delete.addEventListener('click', () => this._openId && options.onDelete?.(this._openId));
    // "Review changes" (MODE-4): a new Review chat over the workspace's git diff.
    this._review = headerButton(
      'jp-cellmate-review-changes',
      checkIcon,
      trans.__('Review'),
      trans.__("Review changes (the workspace's git diff) in a new chat")
    );
    this._review.addEventListener('click', () => options.onReview?.());
    this._review.hidden = !options.onReview;

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

    this._kernel = document.createElement('div');
    this._kernel.className = 'jp-cellmate-kernel-binding';
    this._kernel.setAttribute('role', 'status');

    const row = document.createElement('div');
    row.className = 'jp-cellmate-header-row';
    row.append(selectWrap, this._rename, this._delete, this._review, this._newChat);
    this._mode = document.createElement('div');
    this._mode.className = 'jp-cellmate-mode-badge';
    this._mode.setAttribute('role', 'status');

    this._instructions = document.createElement('button');
    this._instructions.type = 'button';
    this._instructions.className = 'jp-cellmate-instructions-chip';
    this._instructions.setAttribute('aria-expanded', 'false');
    this._instructions.addEventListener('click', () => {
      const open = this._instructionList.hidden;
      this._instructionList.hidden = !open;
      this._instructions.setAttribute('aria-expanded', String(open));
    });
    this._instructionList = document.createElement('ul');
    this._instructionList.className = 'jp-cellmate-instructions-list';
    this._instructionList.hidden = true;

    // While the offline demo plays: a badge says so, and one click leaves it.
    this._demo = document.createElement('div');
    this._demo.className = 'jp-cellmate-demo-badge';
    this._demo.setAttribute('role', 'status');
    this._demo.title = trans.__('The offline demo: a script plays instead of a model; your settings are unchanged');
    const leave = document.createElement('button');
    leave.type = 'button';
    leave.className = 'jp-cellmate-leave-demo';
    leave.textContent = trans.__('Leave');
    leave.title = trans.__('Leave the demo: the next message uses your own settings');
    leave.addEventListener('click', () => options.onLeaveDemo?.());
    this._demo.append(Object.assign(document.createElement('span'), { textContent: trans.__('Demo') }), leave);
    this._demo.hidden = true;

    const status = document.createElement('div');
    status.className = 'jp-cellmate-header-status';
    status.append(this._demo, this._connection, this._mode, this._kernel, this._instructions);
    this.node.append(row, status, this._instructionList);
    this.setInstructions([]);
    this.setKernel(null);
  }

  /** Shows or hides the Demo badge. */
  setDemo(on: boolean): void {
    this._demo.hidden = !on;
  }

  /** Adds a control to the status row, after the mode (the model picker, the inline toggle). */
  addStatus(...nodes: HTMLElement[]): void {
    this._mode.after(...nodes);
  }

  /** Shows the open chat's mode (MODE-8); `data-mode` is the mode's id. */
  setMode(mode: ChatMode): void {
    if (this._mode.dataset.mode === mode) {
      return;
    }
    this._mode.dataset.mode = mode;
    this._mode.textContent = this._trans.__('Mode: %1', this._trans.__(MODE_LABELS[mode] ?? mode));
    this._mode.title =
      mode === 'agent'
        ? this._trans.__('Agent: reads, edits and runs code (through your policy and approvals)')
        : this._trans.__('%1: read-only; nothing in this mode changes the workspace', MODE_LABELS[mode] ?? mode);
  }

  /**
   * Shows which kernel evals use: the focused notebook's (shared) or the chat's own
   * private kernel. `data-origin` is `notebook` or `private`.
   */
  setKernel(kernel: NotebookKernelRef | null, lastPrivate?: EvalKernelInfo | null): void {
    const trans = this._trans;
    const label = kernel
      ? trans.__('Kernel: %1 · %2', kernel.name, kernel.notebookPath ?? trans.__('notebook'))
      : lastPrivate
        ? trans.__('Kernel: %1 · private (this chat’s own)', lastPrivate.name)
        : trans.__('Kernel: private (this chat’s own)');
    this._kernel.dataset.origin = kernel ? 'notebook' : 'private';
    this._kernel.textContent = label;
    this._kernel.title = kernel
      ? trans.__('Evals run in the kernel of %1, shared with the notebook.', kernel.notebookPath ?? kernel.id)
      : trans.__('No notebook focused: evals run in a private kernel of this chat.');
  }

  /**
   * Shows the instruction files the next turn reads (SKILL-1), general first, nearest last.
   * DOM hooks: `.jp-cellmate-instructions-chip[data-count]`, `li[data-label][data-scope][data-truncated]`.
   */
  setInstructions(files: readonly InstructionFileInfo[]): void {
    const trans = this._trans;
    this._instructions.hidden = files.length === 0;
    this._instructions.dataset.count = String(files.length);
    this._instructions.textContent =
      files.length === 1
        ? trans.__('Instructions: %1', files[0].label)
        : trans.__('Instructions: %1 files', files.length);
    this._instructions.title = trans.__(
      'Instruction files in effect (nearest last; text for the agent, not permissions):\n%1',
      files.map((f) => f.label).join('\n')
    );
    if (files.length === 0) {
      this._instructionList.hidden = true;
      this._instructions.setAttribute('aria-expanded', 'false');
    }
    this._instructionList.replaceChildren(
      ...files.map((f) => {
        const li = document.createElement('li');
        li.dataset.label = f.label;
        li.dataset.scope = f.scope;
        li.dataset.truncated = String(f.shown < f.chars);
        li.textContent =
          f.shown < f.chars ? trans.__('%1 — cut to %2 of %3 characters', f.label, f.shown, f.chars) : f.label;
        return li;
      })
    );
  }

  /** Fills the selector; `openId` is the open chat (null: none yet). */
  setChats(chats: readonly ChatSummary[], openId: string | null, openTitle?: string): void {
    this._openId = openId;
    const options: HTMLOptionElement[] = chats.map((chat) => option(chat.id, chat.title || chat.id));
    if (openId && !chats.some((c) => c.id === openId)) {
      options.unshift(option(openId, openTitle || openId));
    }
    if (!openId) {
      const placeholder = option('', this._trans.__('New chat'));
      placeholder.disabled = true;
      options.unshift(placeholder);
    }
    this._select.replaceChildren(...options);
    this._select.value = openId ?? '';
    // A narrow pane cuts the title short: the whole of it is one hover away.
    this._select.title = this._select.selectedOptions[0]?.textContent ?? '';
    this._select.disabled = chats.length === 0;
    this._hasChat = !!openId && chats.some((c) => c.id === openId);
    this._updateButtons();
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
        label = status.reason ? trans.__('Reconnecting (%1)…', status.reason) : trans.__('Reconnecting…');
    }
    this._label.textContent = label;
    this._connection.title = state === 'reconnecting' ? trans.__('%1 Click to retry now.', label) : label;
  }

  /** Enables the "New chat" button (only useful while connected). */
  setEnabled(enabled: boolean): void {
    this._enabled = enabled;
    this._updateButtons();
  }

  private _updateButtons(): void {
    this._newChat.disabled = !this._enabled;
    this._review.disabled = !this._enabled;
    this._rename.disabled = !this._enabled || !this._hasChat;
    this._delete.disabled = !this._enabled || !this._hasChat;
  }

  private readonly _trans: TranslationBundle;
  private readonly _select: HTMLSelectElement;
  private readonly _newChat: HTMLButtonElement;
  private readonly _review: HTMLButtonElement;
  private readonly _rename: HTMLButtonElement;
  private readonly _delete: HTMLButtonElement;
  private readonly _kernel: HTMLElement;
  private readonly _mode: HTMLElement;
  private readonly _demo: HTMLElement;
  private readonly _instructions: HTMLButtonElement;
  private readonly _instructionList: HTMLUListElement;
  private _enabled = false;
  private _hasChat = false;
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
    onRename?(chatId: string): void;
    onDelete?(chatId: string): void;
    /** "Review changes" (MODE-4); absent: no Review button. */
    onReview?(): void;
    /** The Demo badge's "Leave" button. */
    onLeaveDemo?(): void;
  }
}

function option(value: string, label: string): HTMLOptionElement {
  const node = document.createElement('option');
  node.value = value;
  node.textContent = label;
  return node;
}

function headerButton(className: string, icon: LabIcon, label: string, ariaLabel: string): HTMLButtonElement {
  const node = document.createElement('button');
  node.type = 'button';
  node.className = `jp-Button jp-mod-minimal ${className}`;
  node.setAttribute('aria-label', ariaLabel);
  node.title = ariaLabel;
  node.append(icon.element({ tag: 'span', className: 'jp-cellmate-button-icon' }));
  if (label) {
    node.append(
      Object.assign(document.createElement('span'), { className: 'jp-cellmate-button-label', textContent: label })
    );
  }
  return node;
}
