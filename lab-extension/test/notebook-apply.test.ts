/**
 * The pane's side of `notebook/set-sources` (the multi-file edit on an open notebook) on a
 * real shared model (`@jupyter/ydoc`'s YNotebook, what JupyterLab's document holds):
 * every expected source is checked before anything changes; the sources change in one
 * undo step; outputs, execution counts, ids and metadata are kept.
 */
import { YNotebook } from '@jupyter/ydoc';
import { describe, expect, it } from 'vitest';

import { setSharedSources, type ISharedNotebook } from '../src/notebook-apply';

function notebook(): YNotebook {
  const nb = YNotebook.create();
  nb.insertCells(0, [
    {
      cell_type: 'code',
      id: 'aa',
      source: 'greet(1)',
      metadata: { tags: ['x'] },
      execution_count: 3,
      outputs: [{ output_type: 'stream', name: 'stdout', text: 'hi\n' }]
    },
    { cell_type: 'markdown', id: 'bb', source: 'About `greet`', metadata: {} },
    { cell_type: 'code', id: 'cc', source: 'x = greet(2)', metadata: {}, execution_count: null, outputs: [] }
  ]);
  nb.undoManager.clear();
  return nb;
}

const shared = (nb: YNotebook) => nb as unknown as ISharedNotebook;

describe('setSharedSources', () => {
  it('sets every source in one undo step, outputs and the rest kept', () => {
    const nb = notebook();
    const changed = setSharedSources(shared(nb), [
      { cellId: 'aa', expected: 'greet(1)', source: 'hello(1)' },
      { cellId: '#3', expected: 'x = greet(2)', source: 'x = hello(2)' }
    ]);
    expect(changed).toBe(2);
    expect(nb.cells.map((c) => c.getSource())).toEqual(['hello(1)', 'About `greet`', 'x = hello(2)']);
    expect(nb.cells[0]!.toJSON()).toMatchObject({
      id: 'aa',
      execution_count: 3,
      metadata: { tags: ['x'] },
      outputs: [{ output_type: 'stream', text: 'hi\n' }]
    });
    nb.undo();
    expect(nb.cells.map((c) => c.getSource())).toEqual(['greet(1)', 'About `greet`', 'x = greet(2)']);
  });

  it('a cell that differs from its expected source: an error naming it, and nothing changed (also the cells before it)', () => {
    const nb = notebook();
    expect(() =>
      setSharedSources(shared(nb), [
        { cellId: 'aa', expected: 'greet(1)', source: 'hello(1)' },
        { cellId: 'cc', expected: 'x = greet(99)', source: 'x = hello(2)' }
      ])
    ).toThrow('cell "cc" (cell 3) is not the text the change was computed from: it was edited since');
    expect(() => setSharedSources(shared(nb), [{ cellId: 'zz', expected: '', source: '' }])).toThrow(
      'no cell "zz" in the open notebook'
    );
    expect(nb.cells.map((c) => c.getSource())).toEqual(['greet(1)', 'About `greet`', 'x = greet(2)']);
    expect(nb.undoManager.canUndo()).toBe(false);
  });

  it('dryRun checks only', () => {
    const nb = notebook();
    expect(
      setSharedSources(shared(nb), [{ cellId: 'bb', expected: 'About `greet`', source: 'About `hello`' }], true)
    ).toBe(0);
    expect(nb.cells[1]!.getSource()).toBe('About `greet`');
  });
});
