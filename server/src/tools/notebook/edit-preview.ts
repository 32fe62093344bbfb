/**
 * What a `notebook_edit` would change, cell by cell, for its approval card: each changed
 * cell's source as a unified diff, and what else happens to it (`outputs cleared`, `cell
 * inserted at 4`, `cell deleted`, `moved from 2 to 5`). Pure: the same planner the edit runs.
 */
import { planNotebookEdits, type NotebookEditOp, type PlanCell, type DiffFileChange } from '@cellmate/protocol';
import { unifiedDiff } from '../../edits/unified-diff.js';

type PreviewCell = NonNullable<DiffFileChange['cells']>[number];

/** The per-cell change of applying `ops` to `cells` (throws the planner's error when an op cannot apply). */
export function notebookEditPreview(
  path: string,
  cells: readonly PlanCell[],
  ops: readonly NotebookEditOp[]
): { file: DiffFileChange; where: string } {
  let next = 0;
  const plan = planNotebookEdits(cells, ops, {
    mark: { created_by: 'agent', chat: '' },
    withIds: true,
    newId: () => `new-${++next}`
  });
  const before = new Map(cells.map((c, i) => [key(c, i), { cell: c, index: i }]));
  const changed: PreviewCell[] = [];
  const moved = new Set(ops.flatMap((o) => (o.op === 'move' ? [o.cellId] : [])));
  const seen = new Set<string>();
  plan.cells.forEach((cell, index) => {
    const old = cells.includes(cell as PlanCell)
      ? { cell: cell as PlanCell, index: cells.indexOf(cell as PlanCell) }
      : cell.id !== undefined
        ? before.get(`id:${cell.id}`)
        : undefined;
    const id = cell.id ?? old?.cell.id;
    if (old) seen.add(key(old.cell, old.index));
    if (!old || String(cell.id ?? '').startsWith('new-')) {
      changed.push({
        index,
        ...(id && !id.startsWith('new-') ? { id } : {}),
        diff: unifiedDiff('', text(cell.source)),
        note: `cell inserted at ${index + 1}`
      });
      return;
    }
    const notes: string[] = [];
    // Cells shifted by an insert or a delete are not moves: only a move op's own cell is.
    if (old.index !== index && moved.has(String(id))) notes.push(`moved from ${old.index + 1} to ${index + 1}`);
    if ((old.cell.outputs?.length ?? 0) > 0 && (cell.outputs?.length ?? 0) === 0) notes.push('outputs cleared');
    const diff =
      text(old.cell.source) === text(cell.source) ? '' : unifiedDiff(text(old.cell.source), text(cell.source));
    if (diff || notes.length)
      changed.push({ index, ...(id ? { id } : {}), diff, ...(notes.length ? { note: notes.join('; ') } : {}) });
  });
  cells.forEach((cell, index) => {
    if (!seen.has(key(cell, index)))
      changed.push({
        index,
        ...(cell.id ? { id: cell.id } : {}),
        diff: unifiedDiff(text(cell.source), ''),
        note: 'cell deleted'
      });
  });
  const where = changed.length === 1 ? `${path} cell ${changed[0]!.index + 1}` : `${path} (${changed.length} cells)`;
  return { file: { path, cells: changed }, where };
}

function key(cell: PlanCell, index: number): string {
  return cell.id !== undefined ? `id:${cell.id}` : `at:${index}`;
}

function text(source: string | string[]): string {
  return Array.isArray(source) ? source.join('') : source;
}
