/**
 * "Copy to notebook": inserts code from the transcript (an eval card's code, a markdown
 * code block) as a new code cell below the active cell of the current notebook (the
 * notebook-focus service's). The cell is marked `metadata.cellmate.created_by =
 * "agent-copy"`. The insert is planned and applied like the agent's edits (one planner,
 * one shared-model transaction), so it is one undoable step and collaborators see it.
 */
import type { CopyCellMark } from '@cellmate/protocol';
import type { NotebookPanel } from '@jupyterlab/notebook';

import { editSharedNotebook } from './notebook-apply';

/** The metadata a copied cell carries. */
export const COPY_MARK: CopyCellMark = { created_by: 'agent-copy' };

/** The part of a `NotebookPanel` this uses. */
export type ICopyTarget = { readonly content: Pick<NotebookPanel['content'], 'activeCellIndex' | 'model'> };

/**
 * Inserts `code` below the active cell of `notebook` and makes the new cell active.
 * Returns the new cell's index.
 */
export function insertCodeCell(notebook: ICopyTarget, code: string): number {
  const content = notebook.content;
  const model = content.model;
  if (!model) {
    throw new Error('the notebook has no model yet');
  }
  const index = Math.max(0, Math.min(content.activeCellIndex + 1, model.sharedModel.cells.length));
  editSharedNotebook(
    model.sharedModel,
    [{ op: 'insert', index, cells: [{ cell_type: 'code', source: code }] }],
    COPY_MARK
  );
  content.activeCellIndex = index;
  return index;
}
