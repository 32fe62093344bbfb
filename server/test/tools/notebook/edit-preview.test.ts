/**
 * The cell-by-cell change a `notebook_edit` approval card shows, from the same planner the
 * edit runs: source diffs, and what else happens to a cell (outputs cleared, inserted,
 * deleted, moved).
 */
import type { NotebookEditOp, PlanCell } from '@cellmate/protocol';
import { describe, expect, it } from 'vitest';
import { notebookEditPreview } from '../../../src/tools/notebook/edit-preview.js';

const CELLS: PlanCell[] = [
  {
    id: 'load',
    cell_type: 'code',
    source: 'rows = load()\n',
    metadata: {},
    outputs: [{ output_type: 'stream', name: 'stdout', text: '3\n' }],
    execution_count: 1
  },
  { id: 'mean', cell_type: 'code', source: 'm = sum(rows)', metadata: {}, outputs: [], execution_count: null },
  { id: 'note', cell_type: 'markdown', source: '# Notes', metadata: {} }
];

describe('notebook_edit preview', () => {
  it.each<[string, NotebookEditOp[], { where: string; cells: unknown[] }]>([
    [
      'replace clears outputs',
      [{ op: 'replace', cellId: 'load', source: 'rows = load(cache=True)\n' }],
      {
        where: 'analysis.ipynb cell 1',
        cells: [
          {
            index: 0,
            id: 'load',
            diff: '@@ -1,1 +1,1 @@\n-rows = load()\n+rows = load(cache=True)',
            note: 'outputs cleared'
          }
        ]
      }
    ],
    [
      'insert',
      [{ op: 'insert', index: 1, cells: [{ cell_type: 'code', source: 'print(m)' }] }],
      {
        where: 'analysis.ipynb cell 2',
        cells: [{ index: 1, diff: '@@ -1,0 +1,1 @@\n+print(m)', note: 'cell inserted at 2' }]
      }
    ],
    [
      'delete',
      [{ op: 'delete', cellId: 'note' }],
      {
        where: 'analysis.ipynb cell 3',
        cells: [{ index: 2, id: 'note', diff: '@@ -1,1 +1,0 @@\n-# Notes', note: 'cell deleted' }]
      }
    ],
    [
      'move',
      [{ op: 'move', cellId: 'note', toIndex: 0 }],
      {
        where: 'analysis.ipynb cell 1',
        cells: [{ index: 0, id: 'note', diff: '', note: 'moved from 3 to 1' }]
      }
    ]
  ])('%s', (_name, ops, expected) => {
    const { file, where } = notebookEditPreview('analysis.ipynb', CELLS, ops);
    expect(where).toBe(expected.where);
    expect(file).toEqual({ path: 'analysis.ipynb', cells: expected.cells });
  });
});
