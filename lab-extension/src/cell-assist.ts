/**
 * Cellmate where a data scientist asks for help: "Fix with Cellmate" and "Explain" under a
 * cell's error output, in the cell's toolbar and right-click menu (for the cell clicked; the schema's
 * `jupyter.lab.toolbars` / `jupyter.lab.menus`), and as palette commands with shortcuts.
 * Each starts a turn in the pane (`CellmateController.assistCell`); what the turn carries
 * is built by the companion from the notebook and its kernel, not here.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { Cell, CodeCell } from '@jupyterlab/cells';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { CellAssist } from '@cellmate/protocol';
import { PanelLayout, Widget } from '@lumino/widgets';

import { cellmateIcon } from './widgets/icon';

/** Command ids. */
export const FIX_CELL = 'cellmate:fix-cell';
export const EXPLAIN_CELL = 'cellmate:explain-cell';

/** What the commands need from the rest of the pane. */
export interface ICellAssistHost {
  /** Shows the pane. */
  reveal(): void;
  /** Starts the turn; false when it could not (the person was told). */
  assist(assist: CellAssist, notebookPath: string, error: string): Promise<boolean>;
  /** Whether the pane can start a turn now (connected). */
  readonly ready: boolean;
}

/** The error a code cell shows, as `KeyError: 'revenue'`, or null. */
export function cellErrorText(cell: Cell | null | undefined): string | null {
  if (!cell || cell.model.type !== 'code') {
    return null;
  }
  const outputs = (cell as CodeCell).model.outputs;
  for (let i = 0; i < outputs.length; i++) {
    const o = outputs.get(i).toJSON() as { output_type?: string; ename?: string; evalue?: string };
    if (o.output_type === 'error') {
      // The exception's message, not its traceback: the message is what names the cell's problem.
      return `${o.ename ?? 'Error'}${o.evalue ? `: ${o.evalue}` : ''}`.slice(0, 200);
    }
  }
  return null;
}

/** Registers the commands and keeps a Fix / Explain bar under every error output. */
export function registerCellAssist(
  app: JupyterFrontEnd,
  tracker: INotebookTracker,
  host: ICellAssistHost,
  trans: TranslationBundle
): void {
  /** The notebook and cell the command acts on: the args' (`path`, `index`), else the current notebook's active cell. */
  const target = (args: Record<string, unknown>): { panel: NotebookPanel; index: number } | null => {
    // From the right-click menu: the cell under the pointer, which need not be the active one.
    const hit =
      args.path === undefined ? app.contextMenuHitTest((node) => node.classList.contains('jp-Cell')) : undefined;
    if (hit) {
      let found: { panel: NotebookPanel; index: number } | null = null;
      tracker.forEach((panel) => {
        const index = panel.content.widgets.findIndex((cell) => cell.node === hit);
        if (index >= 0) {
          found = { panel, index };
        }
      });
      return found;
    }
    const path = typeof args.path === 'string' ? args.path : undefined;
    const panel = path ? (tracker.find((p) => p.context.path === path) ?? null) : tracker.currentWidget;
    if (!panel) {
      return null;
    }
    const index = typeof args.index === 'number' ? args.index : panel.content.activeCellIndex;
    return index >= 0 && index < panel.content.widgets.length ? { panel, index } : null;
  };
  const errorOf = (args: Record<string, unknown>): string | null => {
    const t = target(args);
    return t ? cellErrorText(t.panel.content.widgets[t.index]) : null;
  };
  const run = async (action: CellAssist['action'], args: Record<string, unknown>): Promise<void> => {
    const t = target(args);
    const error = t ? cellErrorText(t.panel.content.widgets[t.index]) : null;
    if (!t || !error) {
      return;
    }
    host.reveal();
    const cell = t.panel.content.widgets[t.index]!;
    await host.assist({ action, cell: t.index, cellId: cell.model.id }, t.panel.context.path, error);
  };

  app.commands.addCommand(FIX_CELL, {
    label: (args) => (args.short ? trans.__('Fix') : trans.__('Fix with Cellmate')),
    caption: trans.__("Find the cause of this cell's error — often an earlier cell — and propose the fix there"),
    icon: (args) => (args.short ? undefined : cellmateIcon),
    isEnabled: (args) => host.ready && errorOf(args) !== null,
    isVisible: (args) => errorOf(args) !== null,
    execute: (args) => run('fix', args)
  });
  app.commands.addCommand(EXPLAIN_CELL, {
    label: trans.__('Explain Error with Cellmate'),
    caption: trans.__("Explain this cell's error and where its cause lies, without changing anything"),
    isEnabled: (args) => host.ready && errorOf(args) !== null,
    isVisible: (args) => errorOf(args) !== null,
    execute: (args) => run('explain', args)
  });

  // The toolbar button and the menu items follow the active cell and its outputs.
  const refresh = (): void => {
    app.commands.notifyCommandChanged(FIX_CELL);
    app.commands.notifyCommandChanged(EXPLAIN_CELL);
  };
  tracker.activeCellChanged.connect(refresh);

  const bars = new WeakMap<Cell, AssistBar>();
  const watch = (panel: NotebookPanel): void => {
    const follow = (cell: Cell): void => {
      if (cell.model.type !== 'code' || bars.has(cell)) {
        return;
      }
      const bar = new AssistBar(trans, (action) => {
        const index = panel.content.widgets.indexOf(cell);
        void run(action, { path: panel.context.path, index });
      });
      bars.set(cell, bar);
      // Right below the outputs: the cell builds its input and output widgets only once it is
      // first rendered (`ready`), so the bar goes in after that, next to the output wrapper.
      void cell.ready.then(() => {
        if (cell.isDisposed || bar.isDisposed) {
          return;
        }
        const layout = cell.layout as PanelLayout;
        const outputs = (cell as CodeCell).outputArea.parent;
        const at = outputs ? layout.widgets.indexOf(outputs) : -1;
        layout.insertWidget(at >= 0 ? at + 1 : layout.widgets.length, bar);
      });
      const update = (): void => {
        bar.setError(cellErrorText(cell));
        refresh();
      };
      (cell as CodeCell).model.outputs.changed.connect(update);
      cell.disposed.connect(() => (cell as CodeCell).model.outputs.changed.disconnect(update));
      update();
    };
    const followAll = (): void => panel.content.widgets.forEach(follow);
    panel.content.model?.cells.changed.connect(() => requestAnimationFrame(followAll));
    panel.context.ready.then(followAll).catch(() => undefined);
    followAll();
  };
  tracker.forEach(watch);
  tracker.widgetAdded.connect((_, panel) => watch(panel));
}

/** The two buttons under a cell's error output; hidden while the cell shows no error. */
class AssistBar extends Widget {
  constructor(trans: TranslationBundle, onClick: (action: CellAssist['action']) => void) {
    super();
    this.addClass('jp-cellmate-cell-assist');
    this.node.setAttribute('role', 'group');
    this.node.setAttribute('aria-label', trans.__('Cellmate on this error'));
    const button = (action: CellAssist['action'], label: string, title: string): HTMLButtonElement => {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = `jp-cellmate-cell-assist-${action}`;
      b.textContent = label;
      b.title = title;
      b.addEventListener('click', (event) => {
        event.stopPropagation();
        onClick(action);
      });
      return b;
    };
    const icon = document.createElement('span');
    icon.className = 'jp-cellmate-cell-assist-icon';
    cellmateIcon.element({ container: icon, height: '14px', width: '14px' });
    this.node.append(
      icon,
      button(
        'fix',
        trans.__('Fix with Cellmate'),
        trans.__('Find the cause — often an earlier cell — and propose the fix there')
      ),
      button(
        'explain',
        trans.__('Explain'),
        trans.__('Explain the error and where its cause lies, without changing anything')
      )
    );
    this.hide();
  }

  setError(error: string | null): void {
    this.node.dataset.error = error ?? '';
    this.setHidden(error === null);
  }
}
