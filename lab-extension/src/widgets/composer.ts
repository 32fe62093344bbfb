/**
 * The composer: a textarea (Enter sends, Shift+Enter adds a line), the mode selector
 * (MODE-8: Agent, Plan, Orchestrate; Shift+Tab cycles), the Auto approval switch beside it
 * (SIDE-1), one button that is Send while idle and Stop
 * while a turn runs, and under them the context meter with Compact (CTX-1, CTX-3).
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import { MODE_LABELS, SELECTABLE_MODES, type ChatMode, type MentionCandidate } from '@cellmate/protocol';

import { slashAt } from '../slash-commands';

import { ContextMeter, IContextMeterState } from './context-meter';
import { MentionPopup, type ICompletionCandidate } from './mention-popup';

/** What the composer shows. */
export interface IComposerState {
  /** A turn runs in the open chat: show Stop. */
  running: boolean;
  /** A send is in flight: keep the text, block another send. */
  sending: boolean;
  /** Connected and configured: sending can work. */
  canSend: boolean;
  /** Why sending is blocked, for the button's tooltip. */
  blockedReason?: string;
  /** The open chat's mode (default `chat`, shown as Agent). */
  mode?: ChatMode;
  /** Auto approval is on for the open chat (SIDE-1). */
  auto?: boolean;
}

export class ComposerWidget extends Widget {
  constructor(options: ComposerWidget.IOptions) {
    super();
    const trans = options.trans;
    this._onSend = options.onSend;
    this._onStop = options.onStop;
    this.addClass('jp-cellmate-composer');

    this._input = document.createElement('textarea');
    this._input.className = 'jp-cellmate-input';
    this._input.rows = 2;
    this._input.placeholder = trans.__('Message Cellmate…');
    this._input.title = trans.__('Enter sends, Shift+Enter starts a new line');
    this._input.setAttribute('aria-label', trans.__('Message to Cellmate'));
    this._input.addEventListener('keydown', this._onKeyDown);
    this._input.addEventListener('input', this._autoSize);

    this._send = button('jp-cellmate-send', trans.__('Send'), trans.__('Send message'));
    this._send.addEventListener('click', () => void this.submit());
    this._stop = button('jp-cellmate-stop', trans.__('Stop'), trans.__('Stop the running turn'));
    this._stop.addEventListener('click', () => this._onStop());

    this._mode = document.createElement('select');
    this._mode.className = 'jp-cellmate-mode-select';
    this._mode.setAttribute('aria-label', trans.__('Mode'));
    this._mode.title = trans.__('Mode of this chat, from its next turn (Shift+Tab cycles)');
    for (const mode of SELECTABLE_MODES) {
      const option = document.createElement('option');
      option.value = mode;
      option.textContent = trans.__(MODE_LABELS[mode]);
      this._mode.appendChild(option);
    }
    this._mode.addEventListener('change', () => {
      const mode = this._mode.value as ChatMode;
      if (mode !== this._state.mode) {
        this._onMode?.(mode);
      }
    });
    this._onCycle = options.onCycleMode;
    this._onMode = options.onMode;
    this._mode.hidden = !options.onMode;
    this.node.addEventListener('keydown', this._onShiftTab);

    this._auto = document.createElement('input');
    this._auto.type = 'checkbox';
    this._auto.className = 'jp-cellmate-auto-toggle';
    this._auto.addEventListener('change', () => options.onAuto?.(this._auto.checked));
    this._autoLabel = document.createElement('label');
    this._autoLabel.className = 'jp-cellmate-auto';
    this._autoLabel.title = trans.__(
      'Auto approval: a reviewer model clears routine calls that would ask you; anything else still comes to you (/auto)'
    );
    this._autoLabel.append(this._auto, document.createTextNode(trans.__('Auto')));
    this._autoLabel.hidden = !options.onAuto;

    const buttons = document.createElement('div');
    buttons.className = 'jp-cellmate-composer-buttons';
    buttons.append(this._mode, this._autoLabel, this._send, this._stop);
    this._meter = new ContextMeter(trans, options.onCompact);
    this.node.append(this._input, buttons, this._meter.node);
    // `@` completion lives in its own widget file.
    if (options.complete) {
      this._mentions = new MentionPopup(this._input, this.node, options.complete);
    }
    // `/` completion: the same popup, for a command typed at the start of the message.
    if (options.completeSlash) {
      this._slash = new MentionPopup(this._input, this.node, options.completeSlash, {
        trigger: slashAt,
        sigil: '/',
        className: 'jp-cellmate-slash-commands'
      });
    }
    this.setState({ running: false, sending: false, canSend: false });
  }

  /** The textarea (for focus and tests). */
  get input(): HTMLTextAreaElement {
    return this._input;
  }

  setState(state: IComposerState): void {
    this._state = state;
    this._send.hidden = state.running;
    this._stop.hidden = !state.running;
    this._send.disabled = !state.canSend || state.sending;
    this._send.title = state.canSend ? '' : (state.blockedReason ?? '');
    this.node.dataset.sending = String(state.sending);
    this._showMode(state.mode ?? 'agent');
    this._auto.checked = state.auto === true;
    this.node.dataset.auto = String(state.auto === true);
  }

  /** Shows the open chat's context figures and whether Compact can run. */
  setContext(state: IContextMeterState): void {
    this._meter.update(state);
  }

  /** The mode selector (for tests). */
  get modeSelect(): HTMLSelectElement {
    return this._mode;
  }

  /** Selects `mode`; a mode a person cannot pick (review) shows as a disabled entry. */
  private _showMode(mode: ChatMode): void {
    this.node.dataset.mode = mode;
    for (const option of [...this._mode.options]) {
      if (option.disabled && option.value !== mode) {
        option.remove();
      }
    }
    if (![...this._mode.options].some((o) => o.value === mode)) {
      const option = document.createElement('option');
      option.value = mode;
      option.textContent = MODE_LABELS[mode] ?? mode;
      option.disabled = true;
      this._mode.appendChild(option);
    }
    this._mode.value = mode;
  }

  /** Focuses the textarea. */
  focusInput(): void {
    this._input.focus();
  }

  /** Sends the text if allowed; clears it once the server accepted the turn. */
  async submit(): Promise<void> {
    const { running, sending, canSend } = this._state;
    const text = this._input.value;
    if (running || sending || !canSend || !text.trim()) {
      return;
    }
    if (await this._onSend(text)) {
      // Keep anything typed while the request was in flight.
      if (this._input.value === text) {
        this._input.value = '';
      }
      this._autoSize();
    }
  }

  override dispose(): void {
    this._mentions?.dispose();
    this._slash?.dispose();
    this._input.removeEventListener('keydown', this._onKeyDown);
    this._input.removeEventListener('input', this._autoSize);
    this.node.removeEventListener('keydown', this._onShiftTab);
    super.dispose();
  }

  private readonly _onKeyDown = (event: KeyboardEvent): void => {
    if (event.key !== 'Enter' || event.shiftKey || event.isComposing) {
      return;
    }
    event.preventDefault();
    event.stopPropagation();
    void this.submit();
  };

  /** Shift+Tab anywhere in the composer cycles the mode (MODE-8) instead of moving focus back. */
  private readonly _onShiftTab = (event: KeyboardEvent): void => {
    if (
      event.key !== 'Tab' ||
      !event.shiftKey ||
      event.isComposing ||
      event.altKey ||
      event.ctrlKey ||
      event.metaKey ||
      !this._onCycle
    ) {
      return;
    }
    event.preventDefault();
    event.stopPropagation();
    this._onCycle();
  };

  /** Grows with its content up to the CSS max-height. */
  private readonly _autoSize = (): void => {
    const input = this._input;
    input.style.height = 'auto';
    input.style.height = `${input.scrollHeight + 2}px`;
  };

  private readonly _input: HTMLTextAreaElement;
  private readonly _mentions: MentionPopup | undefined;
  private readonly _slash: MentionPopup | undefined;
  private readonly _meter: ContextMeter;
  private readonly _send: HTMLButtonElement;
  private readonly _mode: HTMLSelectElement;
  private readonly _auto: HTMLInputElement;
  private readonly _autoLabel: HTMLLabelElement;
  private readonly _onMode: ((mode: ChatMode) => void) | undefined;
  private readonly _onCycle: (() => void) | undefined;
  private readonly _stop: HTMLButtonElement;
  private readonly _onSend: (text: string) => Promise<boolean>;
  private readonly _onStop: () => void;
  private _state: IComposerState = { running: false, sending: false, canSend: false };
}

export namespace ComposerWidget {
  export interface IOptions {
    trans: TranslationBundle;
    /** Resolves true when the message was accepted. */
    onSend(text: string): Promise<boolean>;
    onStop(): void;
    /** The person picked a mode in the selector (MODE-8). Without it there is no selector. */
    onMode?(mode: ChatMode): void;
    /** Shift+Tab: switch to the next mode. */
    onCycleMode?(): void;
    /** The person switched Auto approval (SIDE-1). Without it there is no switch. */
    onAuto?(auto: boolean): void;
    /** `@` completion candidates for a prefix (kernel variables, workspace files). */
    complete?(prefix: string): Promise<MentionCandidate[]>;
    /** `/` completion: built-in and custom commands for a prefix. */
    completeSlash?(prefix: string): Promise<ICompletionCandidate[]>;
    /** Compact the open chat (CTX-3). Without it there is no Compact button. */
    onCompact?(): void;
  }
}

function button(className: string, label: string, ariaLabel: string): HTMLButtonElement {
  const node = document.createElement('button');
  node.type = 'button';
  node.className = `jp-Button jp-mod-styled ${className}`;
  node.textContent = label;
  node.setAttribute('aria-label', ariaLabel);
  return node;
}
