/**
 * Opens what an `lsp` card's link points at: a file at a line (the editor's
 * cursor there, scrolled into view), or a notebook scrolled to a cell (found by id, else by
 * index), that cell made active and its cursor put on the line.
 */
import type { LspDisplayLocation } from '@cellmate/protocol';
import type { JupyterFrontEnd } from '@jupyterlab/application';
import { NotebookPanel } from '@jupyterlab/notebook';
import type { Widget } from '@lumino/widgets';

/** An editor-bearing widget (a file editor's document widget) as far as this module needs it. */
interface IHasEditor {
  content: {
    editor?: {
      setCursorPosition(p: { line: number; column: number }): void;
      revealPosition?(p: { line: number; column: number }): void;
      focus(): void;
    };
  };
}

/** Opens the location through the document manager; resolves when it is shown. */
export async function openLocation(app: JupyterFrontEnd, location: LspDisplayLocation): Promise<void> {
  const widget = (await app.commands.execute('docmanager:open', { path: location.path })) as Widget | undefined;
  if (!widget) {
    return;
  }
  if (widget instanceof NotebookPanel) {
    await widget.context.ready;
    await widget.revealed;
    const notebook = widget.content;
    const cells = notebook.widgets;
    const byId = location.cell ? cells.findIndex((c) => c.model.id === location.cell!.id) : -1;
    const index = byId >= 0 ? byId : Math.min(location.cell?.index ?? 0, cells.length - 1);
    if (index < 0) {
      return;
    }
    notebook.activeCellIndex = index;
    const cell = cells[index];
    await notebook.scrollToItem(index, 'center');
    cell.editor?.setCursorPosition({ line: Math.max(0, location.line - 1), column: 0 });
    return;
  }
  // A document widget with a file editor has `content.editor`; optional chaining covers the widgets that do not.
  const editor = (widget as unknown as IHasEditor).content?.editor;
  if (editor) {
    const position = { line: Math.max(0, location.line - 1), column: 0 };
    editor.setCursorPosition(position);
    editor.revealPosition?.(position);
    editor.focus();
  }
}
