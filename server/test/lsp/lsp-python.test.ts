/**
 * The `lsp` tool on real basedpyright over the Python fixture (SPEC LSP-2/3/4): definition
 * across files, references, hover, workspace symbols, a code action for a missing import,
 * `#N` occurrences, and the errors for a symbol that is not on the line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lspFixture, type LspFixture } from './lsp-fixtures.js';

let f: LspFixture;
beforeAll(async () => {
  f = await lspFixture(['py'], { flat: true });
}, 60_000);
afterAll(() => f?.dispose());

describe('lsp on basedpyright (Python fixture)', () => {
  it('definition across files: main.py load_data → pkg/util.py:1 with its source line', async () => {
    const r = await f.call('lsp', { action: 'definition', file: 'pkg/main.py', line: 3, symbol: 'load_data' });
    expect(r.ok).toBe(true);
    expect(r.output).toContain('pkg/util.py:1  def load_data(path: str) -> list[str]:');
  }, 60_000);

  it('references: every use in four files and a notebook (cells the server indexed from disk, mapped back to cell and line), declaration included', async () => {
    const r = await f.call('lsp', { action: 'references', file: 'pkg/util.py', line: 1, symbol: 'load_data' });
    expect(r.output.split('\n')[0]).toMatch(/^12 references of "load_data"/);
    expect(r.output).toContain('analysis.ipynb cell 2 (id c-load) line 2  from pkg.util import load_data');
    expect(r.output).toContain('analysis.ipynb cell 2 (id c-load) line 3  rows = load_data("a.txt")');
    expect(r.output).toContain(
      'analysis.ipynb cell 3 (id c-count) line 2  total = len(rows) + len(load_data("b.txt"))'
    );
    for (const at of ['pkg/util.py:1', 'pkg/main.py:1', 'pkg/other.py:1', 'pkg/other.py:5', 'pkg/needs_import.py:4'])
      expect(r.output).toContain(at);
    // Two uses on one line are two references.
    expect(r.output.split('\n').filter((l) => l.startsWith('pkg/main.py:3 '))).toHaveLength(2);
  }, 60_000);

  it('#2 picks the second occurrence on the line: "data" is the variable, "data#2" the inside of load_data', async () => {
    const first = await f.call('lsp', { action: 'hover', file: 'pkg/main.py', line: 5, symbol: 'data' });
    expect(first.output).toMatch(/\(variable\) data: list\[str\]/);
    const second = await f.call('lsp', { action: 'hover', file: 'pkg/main.py', line: 5, symbol: 'data#2' });
    expect(second.output).toContain('def load_data(path: str) -> list[str]');
    const missing = await f.call('lsp', { action: 'definition', file: 'pkg/main.py', line: 5, symbol: 'data#3' });
    expect(missing.ok).toBe(false);
    expect(missing.output).toContain('occurs 2 times on line 5');
  }, 60_000);

  it('hover gives the signature and the doc comment', async () => {
    const r = await f.call('lsp', { action: 'hover', file: 'pkg/other.py', line: 5, symbol: 'load_data' });
    expect(r.output).toContain('def load_data(path: str) -> list[str]');
    expect(r.output).toContain('Read the lines of a file.');
  }, 60_000);

  it('workspace symbols find a class by name; document symbols list a file', async () => {
    const ws = await f.call('lsp', { action: 'symbols', file: 'pkg/main.py', query: 'Store' });
    expect(ws.output).toMatch(/class Store — pkg\/util\.py:7/);
    const doc = await f.call('lsp', { action: 'symbols', file: 'pkg/util.py' });
    expect(doc.output).toMatch(/function load_data — pkg\/util\.py:1/);
    expect(doc.output).toMatch(/method save — pkg\/util\.py:8/);
  }, 60_000);

  it('code_actions offer the missing import; diagnostics name the undefined name', async () => {
    const d = await f.call('lsp', { action: 'diagnostics', file: 'pkg/needs_import.py' });
    expect(d.output).toContain(
      '1 diagnostic in pkg/needs_import.py:\npkg/needs_import.py:3 [error] "dedent" is not defined (reportUndefinedVariable)\n    joined = dedent("  a")'
    );
    const r = await f.call('lsp', { action: 'code_actions', file: 'pkg/needs_import.py', line: 3, symbol: 'dedent' });
    expect(r.output).toMatch(/^1\. from textwrap import dedent \[quickfix\]$/m);
  }, 60_000);

  it('a navigation call without symbol is an error; a symbol not on the line quotes the line', async () => {
    const none = await f.call('lsp', { action: 'definition', file: 'pkg/main.py', line: 3 });
    expect(none.ok).toBe(false);
    expect(none.output).toContain('needs "line" (1-based) and "symbol"');
    const wrong = await f.call('lsp', { action: 'definition', file: 'pkg/main.py', line: 4, symbol: 'load_data' });
    expect(wrong.ok).toBe(false);
    expect(wrong.output).toContain('"load_data" is not on line 4 of pkg/main.py; that line is: "Store().save(rows)"');
  }, 60_000);
});
