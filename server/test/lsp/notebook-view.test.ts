/**
 * Notebooks as a language server sees them (SPEC LSP-6): the concatenated view (pure; the
 * magics view itself is `server/test/notebooks/magics.test.ts`), and the concatenated-document
 * fallback on real basedpyright configured without notebook documents — locations still map
 * back to (cell, id, line).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildNotebookView } from '../../src/lsp/notebook-view.js';
import { lspFixture, type LspFixture } from './lsp-fixtures.js';

describe('SPEC LSP-6: the concatenated view', () => {
  it('the concatenated view maps every line of every code cell back, markdown cells skipped', () => {
    const view = buildNotebookView(
      '/w/nb.ipynb',
      [
        { id: 'm', cellType: 'markdown', source: '# t' },
        { id: 'a', cellType: 'code', source: 'x = 1\ny = 2' },
        { id: 'b', cellType: 'code', source: '%ls\nz = x' }
      ],
      'concatenated'
    );
    expect(view.cells[0]!.text).toBe('x = 1\ny = 2\n\n\n...\nz = x');
    expect(view.toServer(2, 2, 4)).toEqual({ uri: 'file:///w/nb.ipynb.cellmate-concat.py', line: 5, character: 4 });
    expect(view.fromServer(view.cells[0]!.uri, 5, 4)).toEqual({ index: 2, id: 'b', line: 2, character: 4 });
    expect(view.fromServer(view.cells[0]!.uri, 2, 0)).toBeUndefined();
  });
});

describe('concatenated fallback on real basedpyright (notebooks: "concatenated")', () => {
  let f: LspFixture;
  beforeAll(async () => {
    f = await lspFixture(['py'], { flat: true, tableFiles: undefined, env: { ...process.env, HOME: '/nonexistent' } });
    await mkdir(path.join(f.workspace, '.cellmate'), { recursive: true });
    await writeFile(
      path.join(f.workspace, '.cellmate', 'lsp.json'),
      JSON.stringify({ servers: { basedpyright: { notebooks: 'concatenated' } } })
    );
  }, 60_000);
  afterAll(() => f?.dispose());

  it('definition and references from a cell map back to cells, across the magics', async () => {
    const def = await f.call('lsp', {
      action: 'definition',
      file: 'analysis.ipynb',
      cell: 'c-count',
      line: 2,
      symbol: 'rows'
    });
    expect(def.output).toContain('analysis.ipynb cell 2 (id c-load) line 3  rows = load_data("a.txt")');
    const refs = await f.call('lsp', {
      action: 'references',
      file: 'analysis.ipynb',
      cell: 'c-load',
      line: 3,
      symbol: 'rows'
    });
    expect(refs.output).toContain(
      'analysis.ipynb cell 3 (id c-count) line 2  total = len(rows) + len(load_data("b.txt"))'
    );
    const diag = await f.call('lsp', { action: 'diagnostics', file: 'analysis.ipynb' });
    // A plain document does not know a cell's last expression is displayed: the fallback's
    // one known difference from notebook documents, mapped back to its cell like any other.
    expect(diag.output).toBe(
      '1 diagnostic in analysis.ipynb:\nanalysis.ipynb cell 3 (id c-count) line 3 [warning] Expression value is unused (reportUnusedExpression)\n    total'
    );
  }, 60_000);
});
