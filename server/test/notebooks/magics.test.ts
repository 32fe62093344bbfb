/**
 * One neutralised view of a notebook cell (SPEC LSP-6, AST-6): each row goes through BOTH
 * users — the language-server notebook view (`lsp`) and the documents structural search
 * parses (`ast_grep`, the def/use graph) — and both must see exactly the expected text,
 * with the cell's length, lines and columns unchanged.
 */
import { describe, expect, it } from 'vitest';
import { buildNotebookView } from '../../src/lsp/notebook-view.js';
import { documentsOf } from '../../src/structural/documents.js';

/** What `lsp` serves for a one-cell notebook (the native cell document and the concatenated fallback). */
function lspViews(source: string): string[] {
  const cells = [{ id: 'c1', cellType: 'code' as const, source }];
  return (['native', 'concatenated'] as const).map(
    (mode) => buildNotebookView('/w/nb.ipynb', cells, mode).cells[0]!.text
  );
}

/** What structural search parses for the same cell in a Python notebook. */
function structuralView(source: string): string {
  const nb = {
    metadata: { kernelspec: { language: 'python', name: 'python3' } },
    nbformat: 4,
    nbformat_minor: 5,
    cells: [{ id: 'c1', cell_type: 'code', source, metadata: {}, outputs: [] }]
  };
  const docs = documentsOf('nb.ipynb', JSON.stringify(nb));
  if (!Array.isArray(docs) || docs.length !== 1) throw new Error(`expected one document, got ${JSON.stringify(docs)}`);
  return docs[0]!.parsed;
}

describe('SPEC LSP-6 / AST-6: one magics neutraliser, the same view for lsp and ast_grep', () => {
  it.each([
    // cell magics whose body is Python: only the first line goes
    ['%%python', '%%python\nx = 1\ny = x', '...     \nx = 1\ny = x'],
    ['%%capture', '%%capture out\nprint(1)', '...          \nprint(1)'],
    ['%%time', '%%time\nx = f()\n%ls', '...   \nx = f()\n...'],
    ['%%timeit', '%%timeit -n 3\nf()', '...          \nf()'],
    ['%%prun', '%%prun\nf()', '...   \nf()'],
    // cell magics whose body is not Python: the whole cell is blank
    ['%%bash', '%%bash\necho hi\nls', '      \n       \n  '],
    ['%%html', '%%html\n<b>x = 1</b>', '      \n            '],
    ['%%sql', '%%sql\nSELECT 1', '     \n        '],
    // line magics and shell escapes
    ['!', '!pip install x\n  !ls', '...           \n  ...'],
    ['!! with continuation', '!!echo a \\\n  b\nx = 1', '...       \n   \nx = 1'],
    ['%pip', '%pip install pandas\nimport pandas', '...                \nimport pandas'],
    ['%matplotlib', '%matplotlib inline\nx = 1', '...               \nx = 1'],
    ['%time x', '%time x = f()\nx', '...;  x = f()\nx'],
    ['%timeit with options', '%timeit -n 3 f()', '...             '],
    ['x = !ls', 'files = !ls -la\nfiles', 'files = ...    \nfiles'],
    ['a, b = %sx', 'a, b = %sx ls', 'a, b = ...   '],
    ['magic in a block', 'for f in files:\n    !rm $f', 'for f in files:\n    ...   '],
    // help
    ['df?', 'df?\nlen??', '...\n...  '],
    ['?obj', '?x', "''"],
    // not magics: untouched byte for byte
    ['comparisons', 'a = b != c\nx == !y', 'a = b != c\nx == !y'],
    ['modulo', 'y = 10 % 3', 'y = 10 % 3'],
    ['plain', 'def f():\n    return 1\n', 'def f():\n    return 1\n']
  ])('%s', (_name, source, expected) => {
    const views = [...lspViews(source), structuralView(source)];
    for (const view of views) {
      expect(view).toBe(expected);
      expect(view).toHaveLength(source.length);
      expect(view.split('\n').map((l) => l.length)).toEqual(source.split('\n').map((l) => l.length));
    }
  });
});
