/**
 * The one notebook-edit planner (issue #9) as a table of cases: what both the disk path and
 * the open document do with each op. The disk path's file-level behaviour is in
 * server/test/tools/notebook/notebook-disk.test.ts; the open document's in
 * test/e2e/notebook-edits.test.ts (which compares the two).
 */
import { describe, expect, it } from 'vitest';
import {
  NotebookEditError,
  planNotebookEdits,
  toCellData,
  type PlanCell,
  type PlanOptions
} from '../src/notebook-plan.js';
import type { NotebookEditOp } from '../src/index.js';

const mark = { created_by: 'agent' as const, chat: 'c1' };
let counter = 0;
const opts = (withIds = true): PlanOptions => ({ mark, withIds, newId: () => `new${++counter}` });
const code = (id: string | undefined, source: string, extra: Partial<PlanCell> = {}): PlanCell => ({
  cell_type: 'code',
  ...(id ? { id } : {}),
  metadata: { tags: [id ?? 'x'] },
  source,
  outputs: [{ output_type: 'stream', name: 'stdout', text: 'old\n' }],
  execution_count: 3,
  ...extra
});
const md = (id: string, source: string): PlanCell =>
  ({ cell_type: 'markdown', id, metadata: { k: 1 }, source, attachments: { 'a.png': {} } }) as PlanCell;
const three = (): PlanCell[] => [code('a', 'x = 1'), md('b', '# B'), code('c', 'print(x)')];
const ids = (cells: readonly PlanCell[]) => cells.map((c) => c.id);

describe('planNotebookEdits', () => {
  it('insert: marked cells with fresh ids, code cells without outputs, at the index; steps say where', () => {
    counter = 0;
    const plan = planNotebookEdits(
      three(),
      [
        {
          op: 'insert',
          index: 1,
          cells: [
            { cell_type: 'code', source: 'y = 2' },
            { cell_type: 'markdown', source: 'note' }
          ]
        }
      ],
      opts()
    );
    expect(ids(plan.cells)).toEqual(['a', 'new1', 'new2', 'b', 'c']);
    expect(plan.cells[1]).toEqual({
      cell_type: 'code',
      id: 'new1',
      metadata: { cellmate: mark },
      source: 'y = 2',
      execution_count: null,
      outputs: []
    });
    expect(plan.cells[2]).toEqual({ cell_type: 'markdown', id: 'new2', metadata: { cellmate: mark }, source: 'note' });
    expect(plan.insertedIds).toEqual(['new1', 'new2']);
    expect(plan.steps).toEqual([{ kind: 'insert', index: 1, cells: [plan.cells[1], plan.cells[2]] }]);
  });

  it('replace of a code cell clears its outputs and execution count and keeps id, metadata and other fields', () => {
    const cells = three();
    const plan = planNotebookEdits(cells, [{ op: 'replace', cellId: 'c', source: 'print(x + 1)' }], opts());
    expect(plan.cells[2]).toEqual({ ...cells[2], source: 'print(x + 1)', outputs: [], execution_count: null });
    expect(plan.steps).toEqual([{ kind: 'set-source', index: 2, source: 'print(x + 1)', clearOutputs: true }]);
    expect(cells[2]!.outputs).toHaveLength(1); // the input is not mutated
  });

  it('replace of a markdown cell keeps its attachments; a type change makes a fresh cell with the old id and metadata', () => {
    const plan = planNotebookEdits(
      three(),
      [
        { op: 'replace', cellId: 'b', source: '# New' },
        { op: 'replace', cellId: 'a', source: 'prose', cellType: 'markdown' }
      ],
      opts()
    );
    expect(plan.cells[1]).toEqual({ ...md('b', '# New') });
    expect(plan.cells[0]).toEqual({ cell_type: 'markdown', id: 'a', metadata: { tags: ['a'] }, source: 'prose' });
    expect(plan.steps).toEqual([
      { kind: 'set-source', index: 1, source: '# New', clearOutputs: false },
      { kind: 'change-type', index: 0, cell: plan.cells[0] }
    ]);
  });

  it('move and delete: indices are those of the list at each step; untouched cells are the same objects', () => {
    const cells = three();
    const plan = planNotebookEdits(
      cells,
      [
        { op: 'move', cellId: 'c', toIndex: 0 },
        { op: 'delete', cellId: 'b' }
      ],
      opts()
    );
    expect(ids(plan.cells)).toEqual(['c', 'a']);
    expect(plan.cells[0]).toBe(cells[2]);
    expect(plan.cells[1]).toBe(cells[0]);
    expect(plan.steps).toEqual([
      { kind: 'move', from: 2, to: 0 },
      { kind: 'delete', index: 2 }
    ]);
  });

  it('#n refs count from 1 and resolve in the notebook as it is when the op runs; notebooks without ids get none', () => {
    const cells = [code(undefined, 'a'), code(undefined, 'b'), code(undefined, 'c')];
    const plan = planNotebookEdits(
      cells,
      [
        { op: 'insert', index: 0, cells: [{ cell_type: 'code', source: 'new' }] },
        { op: 'delete', cellId: '#2' }
      ],
      opts(false)
    );
    expect(plan.cells.map((c) => c.source)).toEqual(['new', 'b', 'c']);
    expect(plan.cells[0]!.id).toBeUndefined();
    expect(plan.insertedIds).toEqual(['#1']);
  });

  it('an inserted cell rewritten in the same batch is still reported; one deleted again is not', () => {
    counter = 0;
    const plan = planNotebookEdits(
      three(),
      [
        {
          op: 'insert',
          index: 3,
          cells: [
            { cell_type: 'code', source: 'one' },
            { cell_type: 'code', source: 'two' }
          ]
        },
        { op: 'replace', cellId: 'new1', source: 'ONE' },
        { op: 'delete', cellId: 'new2' }
      ],
      opts()
    );
    expect(plan.insertedIds).toEqual(['new1']);
    expect(plan.cells[3]).toMatchObject({ id: 'new1', source: 'ONE', metadata: { cellmate: mark } });
  });

  const bad: Array<[string, NotebookEditOp[], RegExp]> = [
    [
      'insert past the end',
      [{ op: 'insert', index: 4, cells: [{ cell_type: 'code', source: '' }] }],
      /edit 1 \(insert\): index 4 is outside 0–3/
    ],
    [
      'insert at a fraction',
      [{ op: 'insert', index: 1.5, cells: [{ cell_type: 'code', source: '' }] }],
      /index 1.5 is outside/
    ],
    ['insert nothing', [{ op: 'insert', index: 0, cells: [] }], /no cells to insert/],
    [
      'a missing id, after a good op',
      [
        { op: 'delete', cellId: 'a' },
        { op: 'replace', cellId: 'zzz', source: '' }
      ],
      /edit 2 \(replace\): no cell with id "zzz"/
    ],
    ['#n past the end', [{ op: 'delete', cellId: '#4' }], /no cell with id "#4"/],
    ['#0 (cells count from 1)', [{ op: 'delete', cellId: '#0' }], /no cell with id "#0"/],
    [
      'a cell deleted earlier in the batch',
      [
        { op: 'delete', cellId: 'b' },
        { op: 'move', cellId: 'b', toIndex: 0 }
      ],
      /edit 2 \(move\): no cell with id "b"/
    ],
    ['move past the end', [{ op: 'move', cellId: 'a', toIndex: 3 }], /toIndex 3 is outside 0–2/],
    [
      'a bad cell type',
      [{ op: 'replace', cellId: 'a', source: '', cellType: 'heading' as 'raw' }],
      /cellType "heading"/
    ]
  ];
  it.each(bad)('all or nothing: %s throws NotebookEditError naming the op', (_, ops, message) => {
    const cells = three();
    const before = structuredClone(cells);
    let error: unknown;
    try {
      planNotebookEdits(cells, ops, opts());
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(NotebookEditError);
    expect((error as Error).message).toMatch(message);
    expect(cells).toEqual(before);
  });

  it('new ids never collide with existing ones', () => {
    let n = 0;
    const plan = planNotebookEdits(three(), [{ op: 'insert', index: 0, cells: [{ cell_type: 'raw', source: 'r' }] }], {
      mark,
      withIds: true,
      newId: (taken) => ['a', 'b', 'c', 'fresh'].find((id) => !taken.has(id) && ++n > 0)!
    });
    expect(plan.insertedIds).toEqual(['fresh']);
  });
});

describe('toCellData', () => {
  it('joins line-list sources and gives outputs only to code cells', () => {
    expect(toCellData({ cell_type: 'markdown', metadata: {}, source: ['# a\n', 'b'] }, '#0')).toEqual({
      id: '#0',
      cell_type: 'markdown',
      source: '# a\nb',
      metadata: {}
    });
    expect(toCellData({ cell_type: 'code', metadata: {}, source: 'x' }, 'i')).toEqual({
      id: 'i',
      cell_type: 'code',
      source: 'x',
      metadata: {},
      outputs: [],
      execution_count: null
    });
  });
});
