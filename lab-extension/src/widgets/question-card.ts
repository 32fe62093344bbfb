/**
 * Question cards (SPEC ASK-2, ASK-2a, HARN-6): `ask_user` questions and approval requests,
 * rendered as numbered cards. Keys: 1–9 pick an option (toggle with multi-select), Enter
 * submits, Esc skips. Approval cards offer Approve once / Always for this pattern / Deny
 * with a reason (sent back to the model). Once settled the card stays as a record.
 *
 * DOM hooks: `.jp-cellmate-question[data-type="ask|approval"][data-state]` (approvals also
 * `[data-tool]`, the tool asked about), options
 * `.jp-cellmate-question-option[data-index][aria-pressed]`, free text
 * `textarea.jp-cellmate-question-text`, buttons `.jp-cellmate-answer`, `.jp-cellmate-skip`,
 * `.jp-cellmate-approve-once`, `.jp-cellmate-approve-always`, `.jp-cellmate-deny`,
 * deny reason `input.jp-cellmate-deny-reason`. An approval shows its diff
 * (`.jp-cellmate-question-preview`) or else its arguments (`dl.jp-cellmate-question-fields`);
 * the raw JSON folds under `details.jp-cellmate-question-raw`.
 */
import type { QuestionAnswer, QuestionItem, TranscriptItem } from '@cellmate/protocol';
import { Widget } from '@lumino/widgets';

import { argumentFields } from '../argument-fields';
import { renderArgumentFields } from './argument-list';
import { renderDiff } from './diff-view';
import { IItemContext, IItemWidget, markItem } from './item-base';

export class QuestionCardWidget extends Widget implements IItemWidget {
  readonly kind = 'question' as const;

  constructor(
    private _item: QuestionItem,
    private readonly _context: IItemContext
  ) {
    super();
    this.addClass('jp-cellmate-question-item');
    markItem(this.node, _item);
    this._card = document.createElement('div');
    this._card.className = 'jp-cellmate-question';
    this._card.tabIndex = 0;
    this._card.addEventListener('keydown', this._onKey);
    this.node.appendChild(this._card);
    this._build();
    this.setItem(_item);
  }

  get itemId(): string {
    return this._item.id;
  }

  setItem(item: TranscriptItem): void {
    if (item.kind !== 'question') {
      return;
    }
    this._item = item;
    this._card.dataset.type = item.type;
    this._card.dataset.state = item.state;
    if (item.approval) this._card.dataset.tool = item.approval.tool;
    const pending = item.state === 'pending' && !this._busy;
    for (const control of this._card.querySelectorAll<HTMLButtonElement | HTMLTextAreaElement | HTMLInputElement>(
      'button, textarea, input'
    )) {
      control.disabled = !pending;
    }
    this._status.textContent = this._statusText(item);
    if (item.answer?.action === 'answer') {
      this._selected = new Set(item.answer.selected);
      this._paintSelection();
    }
  }

  protected override onAfterAttach(): void {
    if (this._item.state === 'pending') {
      // The card blocks the turn: put the keyboard on it (keys 1–9, Enter, Esc).
      requestAnimationFrame(() => this._card.focus({ preventScroll: true }));
    }
  }

  override dispose(): void {
    this._card.removeEventListener('keydown', this._onKey);
    super.dispose();
  }

  private _build(): void {
    const trans = this._context.trans;
    const item = this._item;
    const title = document.createElement('div');
    title.className = 'jp-cellmate-question-title';
    title.textContent = item.question;
    this._card.appendChild(title);
    if (item.context) {
      const context = document.createElement('div');
      context.className = 'jp-cellmate-question-context';
      context.textContent = item.context;
      this._card.appendChild(context);
    }
    if (item.type === 'approval') {
      this._buildApproval();
    } else {
      const list = document.createElement('ol');
      list.className = 'jp-cellmate-question-options';
      item.options.forEach((option, index) => {
        const li = document.createElement('li');
        const button = document.createElement('button');
        button.type = 'button';
        button.className = 'jp-cellmate-question-option';
        button.dataset.index = String(index);
        button.setAttribute('aria-pressed', 'false');
        const key = document.createElement('span');
        key.className = 'jp-cellmate-question-key';
        key.textContent = String(index + 1);
        const label = document.createElement('span');
        label.className = 'jp-cellmate-question-label';
        label.textContent = option.label;
        button.append(key, label);
        if (option.description) {
          const description = document.createElement('span');
          description.className = 'jp-cellmate-question-description';
          description.textContent = option.description;
          button.appendChild(description);
        }
        button.addEventListener('click', () => this._pick(index));
        li.appendChild(button);
        list.appendChild(li);
        this._options.push(button);
      });
      if (item.options.length > 0) {
        this._card.appendChild(list);
      }
      if (item.allowFreeText) {
        this._text = document.createElement('textarea');
        this._text.className = 'jp-cellmate-question-text';
        this._text.rows = 2;
        this._text.placeholder = trans.__('Type an answer (Enter sends, Shift+Enter new line)');
        this._card.appendChild(this._text);
      }
      const actions = document.createElement('div');
      actions.className = 'jp-cellmate-question-actions';
      actions.append(
        this._button('jp-cellmate-answer', trans.__('Answer'), () => void this._submit()),
        this._button('jp-cellmate-skip', trans.__('Skip'), () => void this._send({ action: 'skip' }))
      );
      this._card.appendChild(actions);
    }
    this._status = document.createElement('div');
    this._status.className = 'jp-cellmate-question-status';
    this._card.appendChild(this._status);
  }

  private _buildApproval(): void {
    const trans = this._context.trans;
    const approval = this._item.approval;
    if (approval) {
      const args = document.createElement('pre');
      args.className = 'jp-cellmate-question-args';
      args.textContent = `${approval.tool} ${JSON.stringify(approval.args, null, 2)}`;
      const raw = document.createElement('details');
      raw.className = 'jp-cellmate-question-raw';
      const label = document.createElement('summary');
      label.textContent = trans.__('Raw arguments');
      raw.append(label, args);
      if (approval.preview) {
        // The change itself first; the raw arguments stay one click away.
        const preview = document.createElement('div');
        preview.className = 'jp-cellmate-question-preview';
        preview.appendChild(
          renderDiff(
            {
              kind: 'diff',
              editId: '',
              summary: approval.preview.summary,
              expiresAt: 0,
              files: approval.preview.files
            },
            { trans }
          )
        );
        this._card.append(preview, raw);
      } else {
        // No diff to show: the arguments as a person reads them (a command verbatim, not a JSON string).
        this._card.append(renderArgumentFields(argumentFields(approval.args), 'jp-cellmate-question-fields'), raw);
      }
      const pattern = document.createElement('div');
      pattern.className = 'jp-cellmate-question-pattern';
      pattern.textContent = approval.allows
        ? trans.__('"Always" allows: %1', approval.allows)
        : trans.__('"Always" allows: %1 matching %2', approval.tool, approval.pattern);
      this._card.appendChild(pattern);
    }
    this._reason = document.createElement('input');
    this._reason.type = 'text';
    this._reason.className = 'jp-cellmate-deny-reason';
    this._reason.placeholder = trans.__('Reason for denying (sent to the agent)');
    const actions = document.createElement('div');
    actions.className = 'jp-cellmate-question-actions';
    actions.append(
      this._button(
        'jp-cellmate-approve-once',
        trans.__('1 Approve once'),
        () => void this._send({ action: 'answer', selected: [0] })
      ),
      this._button(
        'jp-cellmate-approve-always',
        trans.__('2 Always for this pattern'),
        () => void this._send({ action: 'answer', selected: [1] })
      ),
      this._button('jp-cellmate-deny', trans.__('3 Deny'), () => void this._deny())
    );
    this._card.append(this._reason, actions);
  }

  private _button(className: string, label: string, onClick: () => void): HTMLButtonElement {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = `jp-mod-styled ${className}`;
    button.textContent = label;
    button.addEventListener('click', onClick);
    return button;
  }

  private _pick(index: number): void {
    if (this._item.state !== 'pending' || index >= this._item.options.length) {
      return;
    }
    if (this._item.multiSelect) {
      if (this._selected.has(index)) {
        this._selected.delete(index);
      } else {
        this._selected.add(index);
      }
      this._paintSelection();
      return;
    }
    this._selected = new Set([index]);
    this._paintSelection();
    if (!this._text || this._text.value.trim() === '') {
      void this._submit();
    }
  }

  private _paintSelection(): void {
    this._options.forEach((button, index) => button.setAttribute('aria-pressed', String(this._selected.has(index))));
  }

  private async _submit(): Promise<void> {
    const text = this._text?.value.trim() ?? '';
    const selected = [...this._selected].sort((a, b) => a - b);
    if (selected.length === 0 && !text) {
      this._status.textContent = this._context.trans.__('Pick an option or write an answer (or Skip).');
      return;
    }
    await this._send({ action: 'answer', selected, ...(text ? { text } : {}) });
  }

  private async _deny(): Promise<void> {
    const reason = this._reason?.value.trim() ?? '';
    await this._send({ action: 'answer', selected: [2], ...(reason ? { text: reason } : {}) });
  }

  private async _send(answer: QuestionAnswer): Promise<void> {
    if (this._item.state !== 'pending' || this._busy || !this._context.answerQuestion) {
      return;
    }
    this._busy = true;
    this.setItem(this._item);
    try {
      await this._context.answerQuestion(this._item.questionId, answer);
    } finally {
      this._busy = false;
      this.setItem(this._item);
    }
  }

  private readonly _onKey = (event: KeyboardEvent): void => {
    if (this._item.state !== 'pending') {
      return;
    }
    const inText = event.target instanceof HTMLTextAreaElement || event.target instanceof HTMLInputElement;
    if (event.key === 'Escape') {
      event.preventDefault();
      void (this._item.type === 'approval' ? this._deny() : this._send({ action: 'skip' }));
    } else if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault();
      if (this._item.type === 'approval') {
        if (event.target === this._reason) {
          void this._deny();
        }
      } else {
        void this._submit();
      }
    } else if (!inText && /^[1-9]$/.test(event.key)) {
      event.preventDefault();
      const index = Number(event.key) - 1;
      if (this._item.type === 'approval') {
        if (index === 0) void this._send({ action: 'answer', selected: [0] });
        else if (index === 1) void this._send({ action: 'answer', selected: [1] });
        else if (index === 2) this._reason?.focus();
      } else {
        this._pick(index);
      }
    }
  };

  private _statusText(item: QuestionItem): string {
    const trans = this._context.trans;
    switch (item.state) {
      case 'pending':
        return item.expiresAt
          ? trans.__('Waiting for you (until %1)', new Date(item.expiresAt).toLocaleTimeString())
          : trans.__('Waiting for you');
      case 'answered': {
        if (item.type === 'approval' && item.answer?.action === 'answer') {
          const choice = item.answer.selected[0];
          const decision =
            choice === 0
              ? trans.__('Approved once')
              : choice === 1
                ? trans.__('Approved for this pattern')
                : trans.__('Denied');
          // An answered approval collapses to this one line: what was decided, about what.
          const what = item.approval?.preview?.summary ?? item.approval?.allows ?? item.approval?.tool;
          return what ? `${decision} · ${what}` : decision;
        }
        return trans.__('Answered');
      }
      case 'skipped':
        return item.type === 'approval' ? trans.__('Denied') : trans.__('Skipped');
      case 'expired':
        return trans.__('Expired without an answer');
      case 'cancelled':
        return trans.__('Cancelled');
    }
  }

  private readonly _card: HTMLDivElement;
  private _status!: HTMLDivElement;
  private readonly _options: HTMLButtonElement[] = [];
  private _text: HTMLTextAreaElement | null = null;
  private _reason: HTMLInputElement | null = null;
  private _selected = new Set<number>();
  private _busy = false;
}
