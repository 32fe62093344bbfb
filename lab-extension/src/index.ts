/**
 * JupyterLab plugin for Cellmate: registers the chat pane in the right sidebar, its
 * commands and its settings, and connects it to the companion server.
 */
import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { IDebugger, IDebuggerHandler } from '@jupyterlab/debugger';
import { ICompletionProviderManager } from '@jupyterlab/completer';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStateDB } from '@jupyterlab/statedb';
import { ITranslator, nullTranslator, type TranslationBundle } from '@jupyterlab/translation';
import { addIcon, checkIcon, collapseAllIcon } from '@jupyterlab/ui-components';
import type { ReviewScope } from '@cellmate/protocol';

import { EXPLAIN_CELL, FIX_CELL, registerCellAssist } from './cell-assist';
import { CellmateConnection } from './connection';
import { CellmateController, Notify } from './controller';
import { CellmateInlineProvider } from './inline-completion';
import { KernelFocusReporter } from './kernel-focus';
import { localStorageMemory, stateDBMemory } from './memory';
import { insertCodeCell } from './notebook-copy';
import { INotebookFocus, NotebookFocus } from './notebook-focus';
import { notebookDebuggerSync } from './notebook-debugger';
import { NotebookPort } from './notebook-port';
import { openLocation } from './open-location';
import { PendingQuestions } from './pending-questions';
import { PLUGIN_ID } from './settings';
import { cellmateIcon } from './widgets/icon';
import { showMetricsDialog } from './widgets/metrics';
import { showMcpServersDialog } from './widgets/mcp-servers';
import { showSkillsDialog } from './widgets/skills-view';
import { CellmatePanel } from './widgets/panel';

/** Command ids. */
export namespace CommandIDs {
  export const openChat = 'cellmate:open-chat';
  export const newChat = 'cellmate:new-chat';
  export const showMetrics = 'cellmate:show-metrics';
  export const showMcpServers = 'cellmate:show-mcp-servers';
  export const showSkills = 'cellmate:show-skills';
  export const reviewChanges = 'cellmate:review-changes';
  export const reviewNotebook = 'cellmate:review-notebook';
  export const compactChat = 'cellmate:compact-chat';
  export const rewind = 'cellmate:rewind';
}

const CATEGORY = 'Cellmate';

/** The notebook-focus service: one follower of the current notebook for the pane. */
const notebookFocusPlugin: JupyterFrontEndPlugin<INotebookFocus> = {
  id: 'jupyterlab-cellmate:notebook-focus',
  description: 'The notebook the user works in, its kernel, and the open notebooks, for Cellmate.',
  autoStart: true,
  requires: [INotebookTracker],
  provides: INotebookFocus,
  activate: (_app: JupyterFrontEnd, tracker: INotebookTracker) => new NotebookFocus(tracker)
};

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'Cellmate: a notebook agent in a chat pane.',
  autoStart: true,
  requires: [IRenderMimeRegistry, ISettingRegistry, INotebookFocus, INotebookTracker],
  optional: [
    ICommandPalette,
    ILayoutRestorer,
    IStateDB,
    ITranslator,
    IDebugger,
    IDebuggerHandler,
    ICompletionProviderManager
  ],
  activate
};

async function activate(
  app: JupyterFrontEnd,
  rendermime: IRenderMimeRegistry,
  settingRegistry: ISettingRegistry,
  focus: INotebookFocus,
  tracker: INotebookTracker,
  palette: ICommandPalette | null,
  restorer: ILayoutRestorer | null,
  stateDB: IStateDB | null,
  translator: ITranslator | null,
  debuggerService: IDebugger | null,
  debuggerHandler: IDebugger.IHandler | null,
  completionManager: ICompletionProviderManager | null
): Promise<void> {
  const trans = (translator ?? nullTranslator).load('jupyterlab_cellmate');

  let settings: ISettingRegistry.ISettings | null = null;
  try {
    settings = await settingRegistry.load(PLUGIN_ID);
  } catch (error) {
    console.error('Cellmate: could not load the settings', error);
  }

  const notify: Notify = (level, message) => {
    Notification.emit(message, level, { autoClose: level === 'error' ? 10_000 : 5_000 });
  };
  const connection = new CellmateConnection({
    serverSettings: app.serviceManager.serverSettings
  });
  // Notebook tools edit open notebooks through this pane; messages carry the focused notebook.
  const notebookPort = new NotebookPort(connection, focus);
  const controller = new CellmateController({
    context: () => focus.context(),
    connection,
    memory: stateDB ? stateDBMemory(stateDB) : localStorageMemory(),
    notify,
    trans,
    settings,
    // The demo works on a notebook: the open one, else a new one (its kernel ready first).
    prepareDemo: async () => {
      if (focus.notebook) {
        return;
      }
      const created = (await app.commands.execute('notebook:create-new', { kernelName: 'python3' })) as
        { context?: { ready: Promise<void> }; sessionContext?: { ready: Promise<void> } } | undefined;
      await created?.context?.ready;
      await created?.sessionContext?.ready;
    }
  });

  // Inline completions in notebook cells: off until the person turns them on (the settings or the pane's toggle).
  completionManager?.registerInlineProvider(
    new CellmateInlineProvider({
      request: (method, params, signal) => connection.request(method, params, signal),
      notified: connection.notified,
      model: () => (connection.status.state === 'connected' ? controller.inlineModel() : null)
    })
  );

  // Evals share the focused notebook's kernel (SPEC EVAL-2).
  const kernelFocus = new KernelFocusReporter(connection, focus);
  const copyToNotebook = (code: string): void => {
    const notebook = focus.notebook;
    if (!notebook) {
      notify('warning', trans.__('Open a notebook to copy the code into.'));
      return;
    }
    try {
      const index = insertCodeCell(notebook, code);
      notify('info', trans.__('Copied to the notebook as cell %1.', index + 1));
    } catch (error) {
      notify('error', trans.__('Could not copy to the notebook: %1', String(error)));
    }
  };
  const panel = new CellmatePanel({
    controller,
    rendermime,
    trans,
    openSettings: () => {
      if (app.commands.hasCommand('settingeditor:open')) {
        void app.commands.execute('settingeditor:open', { query: 'Cellmate' });
      }
    },
    copyToNotebook,
    runCommand: (id, args) => app.commands.execute(id, args as never),
    debug: {
      terminate: (sessionId) => controller.terminateDebug(sessionId),
      // A stop in a cell scrolls the open notebook there.
      revealCell: (path, index) => {
        const notebook = focus.find(path);
        if (!notebook || index < 0 || index >= notebook.content.widgets.length) {
          return;
        }
        notebook.content.activeCellIndex = index;
        void notebook.content.scrollToItem(index, 'center');
      },
      // Breakpoints the agent set in a notebook's own kernel show in JupyterLab's gutter.
      syncNotebookDebugger: notebookDebuggerSync(debuggerService, debuggerHandler, focus)
    },
    openLocation: (location) => {
      openLocation(app, location).catch((error) =>
        notify('error', trans.__('Could not open %1: %2', location.path, String(error)))
      );
    },
    kernelFocus: focus
  });
  panel.disposed.connect(() => {
    kernelFocus.dispose();
    notebookPort.dispose();
    controller.dispose();
    connection.dispose();
  });
  app.shell.add(panel, 'right', { rank: 900 });
  restorer?.add(panel, 'jupyterlab-cellmate');

  const reveal = (): void => {
    app.shell.activateById(panel.id);
    // The sidebar expands on the next frame; focus after that.
    requestAnimationFrame(() => panel.focusComposer());
  };
  watchPendingQuestions(app, panel, controller, trans);
  app.commands.addCommand(CommandIDs.openChat, {
    label: trans.__('Open Cellmate Chat'),
    caption: trans.__('Show the Cellmate pane and focus its message box'),
    icon: cellmateIcon,
    execute: reveal
  });
  app.commands.addCommand(CommandIDs.newChat, {
    label: trans.__('New Cellmate Chat'),
    caption: trans.__('Start a new Cellmate chat'),
    icon: addIcon,
    isEnabled: () => connection.status.state === 'connected',
    execute: async () => {
      app.shell.activateById(panel.id);
      await panel.newChat();
    }
  });
  app.commands.addCommand(CommandIDs.showMetrics, {
    label: trans.__('Show Cellmate Tool Metrics'),
    caption: trans.__('Calls, success rate and mean duration per tool, from the audit log'),
    isEnabled: () => connection.status.state === 'connected',
    execute: async () => {
      try {
        await showMetricsDialog(() => controller.metrics(), trans);
      } catch (error) {
        notify('error', trans.__('Could not load the tool metrics: %1', String(error)));
      }
    }
  });
  app.commands.addCommand(CommandIDs.showSkills, {
    label: trans.__('Show Cellmate Skills'),
    caption: trans.__('Installed skills, where they come from, and which the agent is offered'),
    isEnabled: () => connection.status.state === 'connected',
    execute: async () => {
      try {
        await showSkillsDialog(
          () => controller.skills(),
          (folder, enabled) => controller.setSkillEnabled(folder, enabled),
          trans
        );
      } catch (error) {
        notify('error', trans.__('Could not load the skills: %1', String(error)));
      }
    }
  });
  app.commands.addCommand(CommandIDs.showMcpServers, {
    label: trans.__('Show Cellmate MCP Servers'),
    caption: trans.__('The configured MCP servers, their state and tools'),
    isEnabled: () => connection.status.state === 'connected',
    execute: async () => {
      try {
        await showMcpServersDialog(
          () => controller.mcpServers(),
          trans,
          () => controller.mcpConfigProblems()
        );
      } catch (error) {
        notify('error', trans.__('Could not load the MCP servers: %1', String(error)));
      }
    }
  });
  // "Review changes" (MODE-4): a new chat in Review mode, set by the companion (review/start).
  const review = async (scope: ReviewScope): Promise<void> => {
    app.shell.activateById(panel.id);
    await controller.startReview(scope);
  };
  app.commands.addCommand(CommandIDs.reviewChanges, {
    label: trans.__('Review Changes with Cellmate'),
    caption: trans.__("Review the workspace's git diff (or the notebook given as `notebook`) in a new Cellmate chat"),
    icon: checkIcon,
    isEnabled: () => connection.status.state === 'connected',
    execute: (args) =>
      review(typeof args?.notebook === 'string' && args.notebook ? { notebook: args.notebook } : 'git-diff')
  });
  app.commands.addCommand(CommandIDs.reviewNotebook, {
    label: trans.__('Review This Notebook with Cellmate'),
    caption: trans.__('Review the current notebook (as saved) in a new Cellmate chat'),
    isEnabled: () => connection.status.state === 'connected' && !!focus.notebook,
    execute: () => {
      const path = focus.notebook?.context.path;
      if (!path) {
        notify('warning', trans.__('Open a notebook to review it.'));
        return;
      }
      return review({ notebook: path });
    }
  });
  // CTX-3: the same as the pane's Compact button.
  app.commands.addCommand(CommandIDs.compactChat, {
    label: trans.__('Compact Cellmate Chat'),
    caption: trans.__(
      'Compact the conversation: prune old tool outputs, then summarise earlier turns (the transcript keeps everything)'
    ),
    icon: collapseAllIcon,
    isEnabled: () => controller.canCompact,
    execute: async () => {
      app.shell.activateById(panel.id);
      await controller.compact();
    }
  });
  // Fix / Explain on a failing cell: under its error output, in its toolbar and context menu.
  registerCellAssist(
    app,
    tracker,
    {
      reveal: () => app.shell.activateById(panel.id),
      assist: (assist, path, error) => controller.assistCell(assist, path, error),
      get ready() {
        return connection.status.state === 'connected';
      }
    },
    trans
  );
  // The `/rewind` command from the palette: the preview opens under the message it restores to.
  app.commands.addCommand(CommandIDs.rewind, {
    label: trans.__('Rewind Cellmate Chat…'),
    caption: trans.__("Restore the files and notebooks the agent's latest turns changed (a preview comes first)"),
    execute: () => {
      app.shell.activateById(panel.id);
      if (!panel.openRewind()) {
        controller.notice(
          'info',
          trans.__(
            'Nothing to rewind: no turn of this chat changed files or notebooks (or their changes were already undone).'
          )
        );
      }
    }
  });
  let couldCompact = controller.canCompact;
  controller.changed.connect(() => {
    // Menus and the palette re-render on each notice: only when the answer changes.
    if (controller.canCompact !== couldCompact) {
      couldCompact = controller.canCompact;
      app.commands.notifyCommandChanged(CommandIDs.compactChat);
    }
  });
  connection.statusChanged.connect(() => app.commands.notifyCommandChanged(CommandIDs.newChat));
  connection.statusChanged.connect(() => app.commands.notifyCommandChanged(CommandIDs.reviewChanges));
  if (palette) {
    palette.addItem({ command: CommandIDs.openChat, category: CATEGORY });
    palette.addItem({ command: CommandIDs.newChat, category: CATEGORY });
    palette.addItem({ command: CommandIDs.showMetrics, category: CATEGORY });
    palette.addItem({ command: CommandIDs.showMcpServers, category: CATEGORY });
    palette.addItem({ command: CommandIDs.showSkills, category: CATEGORY });
    palette.addItem({ command: CommandIDs.reviewChanges, category: CATEGORY });
    palette.addItem({ command: CommandIDs.reviewNotebook, category: CATEGORY });
    palette.addItem({ command: CommandIDs.compactChat, category: CATEGORY });
    palette.addItem({ command: FIX_CELL, category: CATEGORY });
    palette.addItem({ command: EXPLAIN_CELL, category: CATEGORY });
    palette.addItem({ command: CommandIDs.rewind, category: CATEGORY });
  }

  // The state database holds the last chat id only after the layout is restored.
  void app.restored.then(() => controller.start());
}

/**
 * A card waiting for the person never stays unseen: when one arrives while the pane is
 * hidden (its sidebar collapsed, or another panel such as the Debugger shown there), the
 * pane is revealed at that card; while any waits and the pane is hidden, its sidebar tab
 * carries a badge and a notification offers "Open", which reveals the card again.
 */
function watchPendingQuestions(
  app: JupyterFrontEnd,
  panel: CellmatePanel,
  controller: CellmateController,
  trans: TranslationBundle
): void {
  const pending = new PendingQuestions(controller.store);
  let notice: string | null = null;
  let last: string | null = null;
  const showCard = (itemId: string): void => {
    app.shell.activateById(panel.id);
    // The sidebar lays the pane out on the next frame; scroll after that.
    requestAnimationFrame(() => panel.revealItem(itemId));
  };
  const badge = (): void => {
    const waiting = pending.count > 0 && !panel.isVisible;
    panel.title.className = waiting ? 'jp-cellmate-mod-waiting' : '';
    panel.title.caption = waiting ? trans.__('Cellmate — waiting for your answer') : 'Cellmate';
    if (pending.count === 0 && notice !== null) {
      Notification.dismiss(notice);
      notice = null;
    }
  };
  pending.added.connect((_, question) => {
    last = question.id;
    if (panel.isVisible) {
      requestAnimationFrame(() => panel.revealItem(question.id));
      return;
    }
    showCard(question.id);
    const what = question.approval ? trans.__('approve %1', question.approval.tool) : trans.__('answer a question');
    if (notice !== null) {
      Notification.dismiss(notice);
    }
    notice = Notification.emit(trans.__('Cellmate is waiting for you to %1.', what), 'warning', {
      autoClose: false,
      actions: [
        {
          label: trans.__('Open'),
          caption: trans.__('Show the card in the Cellmate pane'),
          callback: () => last !== null && showCard(last)
        }
      ]
    });
  });
  pending.changed.connect(badge);
  panel.visibilityChanged.connect(badge);
  panel.disposed.connect(() => pending.dispose());
}

export default [notebookFocusPlugin, plugin];
