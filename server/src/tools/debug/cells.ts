/**
 * A notebook cell's current code for the debugger: from the pane's open document when
 * the notebook is open in JupyterLab (unsaved edits included), else from the .ipynb on disk.
 */
import { readFile } from 'node:fs/promises';
import { findCellIndex, type NotebookCellData } from '@cellmate/protocol';
import type { DebugCell } from '../../dap/kernel-adapter.js';
import { ToolInputError } from '../../base/tool-errors.js';
import { parseNotebook, toCellData } from '../../notebooks/ipynb.js';
import type { NotebookPort } from '../../notebooks/pane-hub.js';

/** Reads cell `ref` (an id or `#<n>`) of the notebook at `absolute` (`relative` in messages). */
export async function readCell(opts: {
  absolute: string;
  relative: string;
  ref: string;
  port?: NotebookPort;
  signal?: AbortSignal;
}): Promise<DebugCell> {
  const { absolute, relative, ref } = opts;
  let cells: NotebookCellData[];
  const pane = await opts.port?.find(relative, opts.signal).catch(() => undefined);
  if (pane) {
    cells = (await pane.request('notebook/read', { path: relative }, opts.signal)).cells;
  } else {
    let text: string;
    try {
      text = await readFile(absolute, 'utf8');
    } catch {
      throw new ToolInputError(`${relative} does not exist. Check the notebook path with glob "**/*.ipynb".`);
    }
    let nb;
    try {
      nb = parseNotebook(text);
    } catch (e) {
      throw new ToolInputError(`${relative} is not a valid notebook: ${(e as Error).message}`);
    }
    cells = nb.cells.map((_, i) => toCellData(nb, i));
  }
  const index = findCellIndex(cells, ref);
  if (index < 0)
    throw new ToolInputError(
      `${relative} has no cell "${ref}" (${cells.length} cells). Use a cell id from notebook_read, or "#<n>" counting from 1.`
    );
  const cell = cells[index]!;
  if (cell.cell_type !== 'code')
    throw new ToolInputError(`${relative} cell ${ref} is a ${cell.cell_type} cell; only code cells can be debugged.`);
  return { notebook: relative, index, code: cell.source, ...(cell.id.startsWith('#') ? {} : { cellId: cell.id }) };
}
