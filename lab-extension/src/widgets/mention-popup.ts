/**
 * `@` completion in the composer: while the word before the caret starts with
 * `@`, asks the server (`context/complete`) for kernel variables and workspace files and
 * shows them above the textarea. ↑/↓ choose, Enter or Tab insert, Esc closes. Keys are
 * taken in the capture phase on the composer, before its own Enter-sends handler, and
 * only while the list is open.
 *
 * DOM hooks: `.jp-cellmate-mentions` (the list, `hidden` when closed), items
 * `.jp-cellmate-mention[data-kind="variable|file"][data-name][aria-selected]`.
 */
/** One completion: what follows the sigil when chosen, a one-line detail, a kind for styling. */
export interface ICompletionCandidate {
  kind: string;
  name: string;
  detail: string;
}

/** Where a completion applies: the word being completed ends at the caret. */
export type CompletionTrigger = (text: string, caret: number) => { start: number; prefix: string } | null;

/** The `@word` ending at the caret, or null. */
export function mentionAt(text: string, caret: number): { start: number; prefix: string } | null {
  const m = /(?:^|\s)@([\w.\-/]*)$/.exec(text.slice(0, caret));
  return m ? { start: caret - m[1]!.length - 1, prefix: m[1]! } : null;
}

/**
 * Whether completions asked for `asked` still apply to the composer as it is now: the same
 * word still ends at the caret. The text can change without an input event (the composer
 * clears itself once a message or a command is sent), so a reply arriving after that would
 * open a stale list over the empty composer, whose next Enter would insert it.
 */
export function stillAsked(
  trigger: CompletionTrigger,
  text: string,
  caret: number,
  asked: { start: number; prefix: string }
): boolean {
  const now = trigger(text, caret);
  return now !== null && now.start === asked.start && now.prefix === asked.prefix;
}

/**
 * The popup itself; `@` mentions by default. Slash commands reuse it with their own trigger
 * and sigil (`options`), so both lists look and behave alike.
 */
export class MentionPopup {
  constructor(
    private readonly _input: HTMLTextAreaElement,
    private readonly _host: HTMLElement,
    private readonly _complete: (prefix: string) => Promise<ICompletionCandidate[]>,
    options: { trigger?: CompletionTrigger; sigil?: string; className?: string } = {}
  ) {
    this._trigger = options.trigger ?? mentionAt;
    this._sigil = options.sigil ?? '@';
    this._list = document.createElement('ul');
    this._list.className = `jp-cellmate-mentions${options.className ? ` ${options.className}` : ''}`;
    this._list.setAttribute('role', 'listbox');
    this._list.hidden = true;
    _host.prepend(this._list);
    _input.addEventListener('input', this._onInput);
    _input.addEventListener('blur', this._onBlur);
    _host.addEventListener('keydown', this._onKeyDown, true);
  }

  get isOpen(): boolean {
    return !this._list.hidden;
  }

  dispose(): void {
    this._input.removeEventListener('input', this._onInput);
    this._input.removeEventListener('blur', this._onBlur);
    this._host.removeEventListener('keydown', this._onKeyDown, true);
    this._list.remove();
  }

  close(): void {
    this._list.hidden = true;
    this._items = [];
    this._generation++;
  }

  private readonly _onBlur = (): void => {
    // Let a click on an item land first.
    setTimeout(() => {
      if (document.activeElement !== this._input) {
        this.close();
      }
    }, 150);
  };

  private readonly _onInput = (): void => {
    const at = this._trigger(this._input.value, this._input.selectionStart ?? this._input.value.length);
    if (!at) {
      this.close();
      return;
    }
    const generation = ++this._generation;
    clearTimeout(this._timer);
    this._timer = setTimeout(() => {
      this._complete(at.prefix).then(
        (items) => {
          const input = this._input;
          const caret = input.selectionStart ?? input.value.length;
          if (generation === this._generation && stillAsked(this._trigger, input.value, caret, at)) {
            this._show(items);
          }
        },
        () => undefined
      );
    }, 120);
  };

  private _show(items: ICompletionCandidate[]): void {
    this._items = items;
    this._selected = 0;
    this._list.replaceChildren(
      ...items.map((item, i) => {
        const li = document.createElement('li');
        li.className = 'jp-cellmate-mention';
        li.setAttribute('role', 'option');
        li.dataset.kind = item.kind;
        li.dataset.name = item.name;
        const name = document.createElement('span');
        name.className = 'jp-cellmate-mention-name';
        name.textContent = `${this._sigil}${item.name}`;
        const detail = document.createElement('span');
        detail.className = 'jp-cellmate-mention-detail';
        detail.textContent = item.detail;
        li.append(name, detail);
        li.addEventListener('mousedown', (event) => {
          event.preventDefault();
          this._accept(i);
        });
        return li;
      })
    );
    this._list.hidden = items.length === 0;
    this._mark();
  }

  private _mark(): void {
    Array.from(this._list.children).forEach((li, i) => {
      li.setAttribute('aria-selected', String(i === this._selected));
      if (i === this._selected) {
        (li as HTMLElement).scrollIntoView?.({ block: 'nearest' });
      }
    });
  }

  private _accept(index: number): void {
    const item = this._items[index];
    const input = this._input;
    const caret = input.selectionStart ?? input.value.length;
    const at = this._trigger(input.value, caret);
    if (item && at) {
      const insert = `${this._sigil}${item.name} `;
      input.value = input.value.slice(0, at.start) + insert + input.value.slice(caret);
      const pos = at.start + insert.length;
      input.setSelectionRange(pos, pos);
      input.dispatchEvent(new Event('input', { bubbles: true }));
    }
    this.close();
    input.focus();
  }

  private readonly _onKeyDown = (event: KeyboardEvent): void => {
    if (!this.isOpen || event.isComposing) {
      return;
    }
    const n = this._items.length;
    let handled = true;
    if (event.key === 'ArrowDown') {
      this._selected = (this._selected + 1) % n;
      this._mark();
    } else if (event.key === 'ArrowUp') {
      this._selected = (this._selected - 1 + n) % n;
      this._mark();
    } else if ((event.key === 'Enter' && !event.shiftKey) || event.key === 'Tab') {
      this._accept(this._selected);
    } else if (event.key === 'Escape') {
      this.close();
    } else {
      handled = false;
    }
    if (handled) {
      event.preventDefault();
      event.stopPropagation();
    }
  };

  private readonly _list: HTMLUListElement;
  private readonly _trigger: CompletionTrigger;
  private readonly _sigil: string;
  private _items: ICompletionCandidate[] = [];
  private _selected = 0;
  private _generation = 0;
  private _timer: ReturnType<typeof setTimeout> | undefined;
}
