/**
 * The Cellmate side panel: header, setup banner, transcript and composer, bound to a
 * {@link CellmateController}. The root carries `data-running` for tests and styling.
 */
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { Message } from '@lumino/messaging';
import { Panel, PanelLayout } from '@lumino/widgets';

import { CellmateController } from '../controller';
import { ChatChange, ChatState } from '../model';
import { ComposerWidget } from './composer';
import { HeaderWidget } from './header';
import { cellmateIcon } from './icon';
import { SetupBannerWidget } from './setup-banner';
import { TranscriptWidget } from './transcript';

export const PANEL_ID = 'jp-cellmate-panel';

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
      onSelect: id => void controller.openChat(id),
      onNewChat: () => void this.newChat(),
      onRetry: () => controller.reconnectNow()
    });
    this._banner = new SetupBannerWidget({
      trans,
      onDemo: () => void controller.useDemo(),
      onOpenSettings: options.openSettings ?? (() => undefined),
      canOpenSettings: !!options.openSettings
    });
    this._transcript = new TranscriptWidget({
      rendermime: options.rendermime,
      trans,
      answerQuestion: (questionId, answer) => controller.answer(questionId, answer)
    });
    this._composer = new ComposerWidget({
      trans,
      onSend: text => {
        this._transcript.scrollToBottom();
        return controller.send(text);
      },
      onStop: () => void controller.abort()
    });
    const layout = this.layout as PanelLayout;
    layout.addWidget(this._header);
    layout.addWidget(this._banner);
    layout.addWidget(this._transcript);
    layout.addWidget(this._composer);

    this._unsubscribe = controller.store.subscribe(this._onChat);
    controller.changed.connect(this._refresh, this);
    this._refresh();
    this._onChat(controller.store.state, { updated: [], structure: true, running: true });
  }

  /** Creates a chat and focuses the composer. */
  async newChat(): Promise<void> {
    await this._controller.newChat();
    this.focusComposer();
  }

  /** Focuses the composer's textarea. */
  focusComposer(): void {
    this._composer.focusInput();
  }

  override dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._unsubscribe();
    this._controller.changed.disconnect(this._refresh, this);
    super.dispose();
  }

  /** Activating the pane (sidebar tab, command) puts the cursor in the composer. */
  protected override onActivateRequest(msg: Message): void {
    super.onActivateRequest(msg);
    if (this.isVisible) {
      this.focusComposer();
    }
  }

  private readonly _onChat = (state: ChatState | null, change: ChatChange): void => {
    this._transcript.render(state, change);
    if (change.running || change.structure) {
      this._refresh();
    }
  };

  /** Updates everything outside the transcript items. */
  private _refresh(): void {
    const c = this._controller;
    const status = c.connectionStatus;
    const connected = status.state === 'connected';
    const state = c.store.state;
    const setup = c.setup;

    this.node.dataset.running = String(c.running);
    this._header.setConnection(status);
    this._header.setChats(c.chats, state?.chatId ?? null, state?.title);
    this._header.setEnabled(connected);
    this._banner.setProblem(setup);
    this._composer.setState({
      running: c.running,
      sending: c.sending,
      canSend: connected && !setup,
      blockedReason: !connected
        ? this._trans.__('Not connected to the Cellmate server')
        : setup?.message
    });
  }

  private readonly _controller: CellmateController;
  private readonly _trans: TranslationBundle;
  private readonly _header: HeaderWidget;
  private readonly _banner: SetupBannerWidget;
  private readonly _transcript: TranscriptWidget;
  private readonly _composer: ComposerWidget;
  private readonly _unsubscribe: () => void;
}

export namespace CellmatePanel {
  export interface IOptions {
    controller: CellmateController;
    rendermime: IRenderMimeRegistry;
    trans: TranslationBundle;
    /** Opens the settings editor on Cellmate's settings, when available. */
    openSettings?: () => void;
  }
}
