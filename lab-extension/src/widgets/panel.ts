/**
 * The Cellmate side panel: header, setup banner, transcript and composer, bound to a
 * {@link CellmateController}. The root carries `data-running` for tests and styling.
 * Esc anywhere in the pane stops a running turn (question cards take Esc first).
 */
import type { IDebugCardActions } from './debug-card';
import type { EvalKernelInfo, LspDisplayLocation, NotebookKernelRef } from '@cellmate/protocol';
import { Dialog, InputDialog, showDialog } from '@jupyterlab/apputils';
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { Message } from '@lumino/messaging';
import { ISignal, Signal } from '@lumino/signaling';
import { Panel, PanelLayout } from '@lumino/widgets';

import { CellmateController } from '../controller';
import { runSlash, slashCandidates, type ISlashHost } from '../slash-commands';
import { ChatChange, ChatState } from '../model';
import { ComposerWidget } from './composer';
import { HeaderWidget } from './header';
import { ModelPicker } from './model-picker';
import { cellmateIcon } from './icon';
import { SetupBannerWidget } from './setup-banner';
import { TranscriptWidget } from './transcript';
import { WorkersListWidget } from './workers-list';

export const PANEL_ID = 'jp-cellmate-panel';

/** Below this width (px) the header's buttons show icons only. */
const NARROW_WIDTH = 360;

export class CellmatePanel extends Panel {
  constructor(options: CellmatePanel.IOptions) {
    super();
    const { controller, trans } = options;
    this._controller = controller;
    this._trans = trans;
    this.id = PANEL_ID;
    this.addClass('jp-cellmate-panel');
    this.title.icon = cellmateIcon;
    this.title.caption = 'Cellmate';
    this.node.setAttribute('aria-label', 'Cellmate');

    this._header = new HeaderWidget({
      trans,
      onSelect: (id) => void controller.openChat(id),
      onNewChat: () => void this.newChat(),
      onRetry: () => controller.reconnectNow(),
      onRename: (id) => void this.renameChat(id),
      onDelete: (id) => void this.deleteChat(id),
      onReview: () => void controller.startReview('git-diff'),
      onLeaveDemo: () => controller.leaveDemo()
    });
    this._picker = new ModelPicker({ trans, onPick: (choice) => void controller.setChatModel(choice) });
    this._inlineToggle = document.createElement('button');
    this._inlineToggle.type = 'button';
    this._inlineToggle.className = 'jp-Button jp-mod-minimal jp-cellmate-inline-toggle';
    this._inlineToggle.textContent = trans.__('Inline');
    this._inlineToggle.addEventListener(
      'click',
      () => void controller.setInlineCompletions(!controller.inlineCompletions)
    );
    this._header.addStatus(this._picker.node, this._inlineToggle);
    this._banner = new SetupBannerWidget({
      trans,
      onDemo: () => void controller.useDemo(),
      onOpenSettings: options.openSettings ?? (() => undefined),
      canOpenSettings: !!options.openSettings
    });
    this._transcript = new TranscriptWidget({
      rendermime: options.rendermime,
      trans,
      answerQuestion: (questionId, answer) => controller.answer(questionId, answer),
      retry: () => {
        this._transcript.scrollToBottom();
        return controller.retry();
      },
      edit: (text) => {
        this._transcript.scrollToBottom();
        return controller.retry(text);
      },
      copyToNotebook: options.copyToNotebook,
      resolveEdit: (editId, action) => controller.resolveEdit(editId, action),
      resolvePlan: (planId, decision, reason) => controller.resolvePlan(planId, decision, reason),
      resolveOrchestration: (id, decision, reason) => controller.resolveOrchestration(id, decision, reason),
      approveReviewNode: (nodeId) => controller.approveReviewNode(nodeId),
      acceptVerifyOutputs: (runId, path) => controller.acceptVerifyOutputs(runId, path),
      debug: options.debug,
      openLocation: options.openLocation,
      rewind: {
        preview: (itemId, scope) => controller.rewindPreview(itemId, scope),
        apply: (itemId, scope, opts) => controller.rewind(itemId, scope, opts),
        done: (result) => {
          if (result.text !== undefined && !this._composer.input.value.trim()) {
            this._composer.input.value = result.text;
          }
          this._showCheckpoints();
        }
      },
      loadOlder: () => void controller.loadOlder()
    });
    this._composer = new ComposerWidget({
      trans,
      onSend: async (text) => {
        this._transcript.scrollToBottom();
        const handled = await runSlash(text, this._slashHost(options));
        return handled ?? controller.send(text);
      },
      onStop: () => void controller.abort(),
      onMode: (mode) => void controller.setMode(mode),
      onCycleMode: () => void controller.cycleMode(),
      onAuto: (auto) => void controller.setAuto(auto),
      complete: (prefix) => controller.complete(prefix),
      completeSlash: async (prefix) => slashCandidates(prefix, await controller.customCommands().catch(() => [])),
      onCompact: () => void controller.compact()
    });
    const workers = new WorkersListWidget({
      model: controller.workers,
      trans,
      kill: (id) => controller.killWorker(id),
      transcript: (id) => controller.workerTranscript(id)
    });
    const layout = this.layout as PanelLayout;
    layout.addWidget(this._header);
    layout.addWidget(this._banner);
    layout.addWidget(this._transcript);
    layout.addWidget(workers);
    layout.addWidget(this._composer);

    this._unsubscribe = controller.store.subscribe(this._onChat);
    controller.changed.connect(this._refresh, this);
    this._kernelFocus = options.kernelFocus ?? null;
    this._kernelFocus?.kernelChanged.connect(this._onKernel, this);
    this._showKernel();
    this.node.addEventListener('keydown', this._onKeyDown);
    if (typeof ResizeObserver !== 'undefined') {
      this._resize = new ResizeObserver((entries) => {
        const width = entries[0]?.contentRect.width ?? 0;
        this.toggleClass('jp-mod-narrow', width > 0 && width < NARROW_WIDTH);
      });
      this._resize.observe(this.node);
    }
    this._refresh();
    this._onChat(controller.store.state, { updated: [], structure: true, running: true });
  }

  /** What slash commands drive: the controller, and app commands for views outside the pane. */
  private _slashHost(options: CellmatePanel.IOptions): ISlashHost {
    const c = this._controller;
    return {
      setMode: async (mode) => void (await c.setMode(mode)),
      toggleAuto: async () => void (await c.setAuto(!c.auto)),
      startReview: async () => void (await c.startReview('git-diff')),
      compact: async () => void (await c.compact()),
      newChat: () => this.newChat(),
      exportChat: () => c.exportChat(),
      rewind: () => this.openRewind(),
      showSkills: async () => void (await options.runCommand?.('cellmate:show-skills')),
      modelLabel: () => c.modelLabel(),
      setModel: (name) => c.setModel(name),
      notice: (level, text) => c.notice(level, text),
      customCommands: () => c.customCommands(),
      expand: (name, args) => c.expandCommand(name, args),
      send: (text) => c.send(text)
    };
  }

  /** Opens "Rewind to here" on the latest message whose turn changed files (`/rewind`, the palette). */
  openRewind(): boolean {
    return this._transcript.openLatestRewind();
  }

  /** Creates a chat and focuses the composer. */
  async newChat(): Promise<void> {
    await this._controller.newChat();
    this.focusComposer();
  }

  /** Asks for a new title and renames the chat. */
  async renameChat(chatId: string): Promise<void> {
    const trans = this._trans;
    const current = this._controller.chats.find((c) => c.id === chatId)?.title ?? '';
    const result = await InputDialog.getText({
      title: trans.__('Rename chat'),
      label: trans.__('New title'),
      text: current,
      okLabel: trans.__('Rename'),
      cancelLabel: trans.__('Cancel')
    });
    const title = result.value?.trim();
    if (result.button.accept && title && title !== current) {
      await this._controller.rename(chatId, title);
    }
  }

  /** Deletes the chat after a confirmation. */
  async deleteChat(chatId: string): Promise<void> {
    const trans = this._trans;
    const title = this._controller.chats.find((c) => c.id === chatId)?.title ?? chatId;
    const result = await showDialog({
      title: trans.__('Delete chat?'),
      body: trans.__('“%1” and its transcript will be deleted. This cannot be undone.', title),
      buttons: [
        Dialog.cancelButton({ label: trans.__('Cancel') }),
        Dialog.warnButton({ label: trans.__('Delete'), ariaLabel: trans.__('Delete the chat') })
      ],
      defaultButton: 0
    });
    if (result.button.accept) {
      await this._controller.deleteChat(chatId);
    }
  }

  /** Focuses the composer's textarea. */
  focusComposer(): void {
    this._composer.focusInput();
  }

  /** Emitted when the pane is shown or hidden (its sidebar switched panels, or collapsed). */
  get visibilityChanged(): ISignal<this, boolean> {
    return this._visibilityChanged;
  }

  /** Scrolls the transcript to one item (a card waiting for the person) and focuses it. */
  revealItem(itemId: string): void {
    const node = this.node.querySelector<HTMLElement>(`.jp-cellmate-item[data-item-id="${CSS.escape(itemId)}"]`);
    if (!node) {
      return;
    }
    node.scrollIntoView({ block: 'nearest' });
    // The card's own keys (1–9, Enter, Esc) work once it has focus.
    const card = node.querySelector<HTMLElement>('.jp-cellmate-question') ?? node;
    card.focus({ preventScroll: true });
  }

  protected override onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this._visibilityChanged.emit(true);
  }

  protected override onAfterHide(msg: Message): void {
    super.onAfterHide(msg);
    this._visibilityChanged.emit(false);
  }

  override dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._unsubscribe();
    this._controller.changed.disconnect(this._refresh, this);
    this._kernelFocus?.kernelChanged.disconnect(this._onKernel, this);
    this.node.removeEventListener('keydown', this._onKeyDown);
    this._resize?.disconnect();
    super.dispose();
  }

  /** Activating the pane (sidebar tab, command) puts the cursor in the composer. */
  protected override onActivateRequest(msg: Message): void {
    super.onActivateRequest(msg);
    if (this.isVisible) {
      this.focusComposer();
    }
  }

  private _onKernel(): void {
    this._showKernel();
    this._showInstructions();
  }

  /**
   * Asks which instruction files the next turn reads (they depend on the chat, the focused
   * notebook and the files themselves): on connecting, switching chats, a focus change and
   * each turn's start and end. The latest answer wins.
   */
  /** Which turns of the open chat can be undone (their messages offer the rewinds). */
  private _showCheckpoints(): void {
    const generation = ++this._checkpointsGeneration;
    void this._controller.checkpoints().then((turns) => {
      if (generation === this._checkpointsGeneration && !this.isDisposed) {
        this._transcript.setCheckpoints(new Set(turns));
      }
    });
  }

  private _showInstructions(): void {
    const generation = ++this._instructionsGeneration;
    void this._controller.instructions().then((files) => {
      if (generation === this._instructionsGeneration && !this.isDisposed) {
        this._header.setInstructions(files);
      }
    });
  }

  /** The focused notebook's kernel, else the private kernel this chat's last eval used. */
  private _showKernel(): void {
    const items = this._controller.store.state?.items ?? [];
    let last: EvalKernelInfo | null = null;
    for (let i = items.length - 1; i >= 0 && !last; i--) {
      const item = items[i];
      // Eval displays (those in chat files older than display kinds have no `kind`).
      const display = item.kind === 'tool' ? item.display : undefined;
      if (display && (display.kind === 'eval' || display.kind === undefined) && display.kernel?.origin === 'private') {
        last = display.kernel;
      }
    }
    this._header.setKernel(this._kernelFocus?.kernel ?? null, last);
  }

  /** Esc stops the running turn, unless something inside the pane used the key. */
  private readonly _onKeyDown = (event: KeyboardEvent): void => {
    if (event.key !== 'Escape' || event.defaultPrevented || !this._controller.running) {
      return;
    }
    event.preventDefault();
    event.stopPropagation();
    void this._controller.abort();
  };

  private readonly _onChat = (state: ChatState | null, change: ChatChange): void => {
    this._transcript.render(state, change);
    if (change.running || change.structure) {
      this._refresh();
      this._showKernel();
      this._showInstructions();
      this._showCheckpoints();
    }
  };

  /** Updates everything outside the transcript items. */
  private _refresh(): void {
    const c = this._controller;
    const status = c.connectionStatus;
    const connected = status.state === 'connected';
    const state = c.store.state;
    const setup = c.setup;

    if (connected && this.node.dataset.connection !== 'connected') {
      this._showInstructions();
    }
    this.node.dataset.connection = status.state;
    this.node.dataset.running = String(c.running);
    // A turn can start and end between two polls of a test: the id of the last one that ended is stable.
    this.node.dataset.lastTurn = state?.lastEndedTurnId ?? '';
    this._header.setConnection(status);
    this._header.setChats(c.chats, state?.chatId ?? null, state?.title);
    this._header.setEnabled(connected);
    this._header.setMode(c.mode);
    this._header.setDemo(c.demo);
    this._picker.set(c.models, c.chatModel, c.followsSettings);
    this._picker.setEnabled(connected);
    const inline = c.inlineCompletions;
    this._inlineToggle.setAttribute('aria-pressed', String(inline));
    this._inlineToggle.title = inline
      ? this._trans.__('Inline completions are on in notebook cells (fast model). Click to turn them off.')
      : this._trans.__(
          'Inline completions are off. Click to suggest code as you type in notebook cells (fast model; Tab accepts).'
        );
    this._banner.setProblem(setup);
    this._composer.setState({
      running: c.running,
      sending: c.sending,
      canSend: connected && !setup,
      mode: c.mode,
      auto: c.auto,
      blockedReason: !connected ? this._trans.__('Not connected to the Cellmate server') : setup?.message
    });
    this._composer.setContext({
      context: state?.context,
      chatOpen: !!state,
      canCompact: c.canCompact && !setup,
      compacting: c.compacting
    });
  }

  private readonly _controller: CellmateController;
  private readonly _trans: TranslationBundle;
  private readonly _header: HeaderWidget;
  private readonly _picker: ModelPicker;
  private readonly _inlineToggle: HTMLButtonElement;
  private readonly _banner: SetupBannerWidget;
  private readonly _transcript: TranscriptWidget;
  private readonly _composer: ComposerWidget;
  private readonly _unsubscribe: () => void;
  private readonly _visibilityChanged = new Signal<this, boolean>(this);
  private readonly _kernelFocus: CellmatePanel.IKernelFocus | null;
  private _resize: ResizeObserver | null = null;
  private _checkpointsGeneration = 0;
  private _instructionsGeneration = 0;
}

export namespace CellmatePanel {
  export interface IOptions {
    controller: CellmateController;
    rendermime: IRenderMimeRegistry;
    trans: TranslationBundle;
    /** Opens the settings editor on Cellmate's settings, when available. */
    openSettings?: () => void;
    /** Inserts code as a new cell below the active cell of the current notebook. */
    copyToNotebook?: (code: string) => void;
    /** The debug card's Terminate and scroll-to-cell. */
    debug?: IDebugCardActions;
    /** Opens a file at a line or a notebook at a cell (lsp cards' links). */
    openLocation?: (location: LspDisplayLocation) => void;
    /** The focused notebook kernel, for the header's kernel line. */
    kernelFocus?: IKernelFocus;
    /** Runs a JupyterLab command (slash commands that open a view, e.g. `/skills`). */
    runCommand?: (id: string, args?: Record<string, unknown>) => Promise<unknown>;
  }

  /** What the panel reads from the notebook-focus service (`INotebookFocus`). */
  export interface IKernelFocus {
    readonly kernel: NotebookKernelRef | null;
    readonly kernelChanged: ISignal<unknown, NotebookKernelRef | null>;
  }
}
