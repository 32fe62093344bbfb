/**
 * Write-time diagnostics on real basedpyright (SPEC WDIAG-1/2): after edit / write /
 * apply_patch / notebook_edit only the diagnostics that just appeared are appended; the
 * per-chat journal (severity, code, message — not position) mutes one that merely moved;
 * a notebook's error names its cell; a late publish comes with the next result; a file no
 * server claims says nothing about diagnostics. basedpyright's text documents are pulled
 * (LSP 3.17 `textDocument/diagnostic`); typescript-language-server, which only pushes, gets
 * the same new-only results through its publishes.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { lspFixture, type LspFixture } from './lsp-fixtures.js';

const open: LspFixture[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.dispose();
});
async function fixture(options: Parameters<typeof lspFixture>[1] = {}, name = 'py'): Promise<LspFixture> {
  const f = await lspFixture([name], { flat: true, writeTools: true, ...options });
  open.push(f);
  return f;
}

const newBlock = (output: string): string[] => {
  const at = output.indexOf('New diagnostics');
  return at < 0
    ? []
    : output
        .slice(at)
        .split('\n')
        .filter((l) => /\[(error|warning|info|hint)\]/.test(l));
};

describe('write-time diagnostics (WDIAG-1/2)', () => {
  it('edit introducing an undefined name → exactly that error; an edit that only shifts it down 4 lines → not re-reported', async () => {
    const f = await fixture();
    const first = await f.call('edit', {
      path: 'pkg/util.py',
      old_string: '        return len(rows)',
      new_string: '        return len(rows) + undefined_count'
    });
    expect(first.ok).toBe(true);
    expect(newBlock(first.output)).toEqual([
      'pkg/util.py:9 [error] "undefined_count" is not defined (reportUndefinedVariable)'
    ]);
    expect(first.output).toContain('New diagnostics (1):');
    const shifted = await f.call('edit', {
      path: 'pkg/util.py',
      old_string: 'def load_data',
      new_string: '# one\n# two\n# three\n# four\ndef load_data'
    });
    expect(shifted.ok).toBe(true);
    expect(shifted.output).not.toContain('New diagnostics');
    // Still there, four lines down: the journal muted it, the server did not drop it.
    const now = await f.call('lsp', { action: 'diagnostics', file: 'pkg/util.py' });
    expect(now.output).toContain('pkg/util.py:13 [error] "undefined_count" is not defined');
  }, 90_000);

  it('errors the file had before the first write are not reported as new', async () => {
    const f = await fixture();
    const r = await f.call('edit', {
      path: 'pkg/needs_import.py',
      old_string: 'print(load_data(joined))',
      new_string: 'print(load_data(joined), missing_too)'
    });
    expect(newBlock(r.output)).toEqual([
      'pkg/needs_import.py:4 [error] "missing_too" is not defined (reportUndefinedVariable)'
    ]);
  }, 90_000);

  it('write and apply_patch are wrapped too; a file no server claims says nothing about diagnostics', async () => {
    const f = await fixture();
    const w = await f.call('write', {
      path: 'pkg/new_mod.py',
      content: 'from util import load_data\n\nload_data(42)\n'
    });
    expect(newBlock(w.output)).toHaveLength(1);
    expect(newBlock(w.output)[0]).toMatch(
      /^pkg\/new_mod\.py:3 \[error\] Argument of type "Literal\[42\]" cannot be assigned to parameter "path"/
    );
    const p = await f.call('apply_patch', {
      patch:
        '--- a/pkg/other.py\n+++ b/pkg/other.py\n@@ -4,2 +4,2 @@\n def count(p: str) -> int:\n-    return len(load_data(p))\n+    return len(load_dta(p))\n'
    });
    expect(newBlock(p.output)).toEqual(['pkg/other.py:5 [error] "load_dta" is not defined (reportUndefinedVariable)']);
    const notes = await f.call('write', { path: 'notes.md', content: '# no server for this\n' });
    expect(notes.output).toBe('Created notes.md (1 lines, 21 bytes).');
  }, 90_000);

  it('notebook_edit that breaks a cell: the error names the cell; moving it into another cell is not re-reported', async () => {
    const f = await fixture();
    const r = await f.call('notebook_edit', {
      path: 'analysis.ipynb',
      edits: [
        {
          action: 'replace',
          cell_id: 'c-count',
          source: 'files = !ls\ntotal = len(rows) + len(lod_data("b.txt"))\ntotal'
        }
      ]
    });
    expect(r.ok).toBe(true);
    expect(newBlock(r.output)).toEqual([
      'analysis.ipynb cell 3 (id c-count) line 2 [error] "lod_data" is not defined (reportUndefinedVariable)'
    ]);
    const moved = await f.call('notebook_edit', {
      path: 'analysis.ipynb',
      edits: [
        { action: 'replace', cell_id: 'c-count', source: 'total = len(rows)' },
        {
          action: 'insert',
          index: 3,
          cells: [{ cell_type: 'code', source: '# a\n# b\n# c\n# d\nextra = lod_data("c.txt")' }]
        }
      ]
    });
    expect(moved.ok).toBe(true);
    expect(moved.output).not.toContain('New diagnostics');
    const nb = JSON.parse(await readFile(path.join(f.workspace, 'analysis.ipynb'), 'utf8')) as {
      cells: Array<{ id: string; outputs?: unknown[] }>;
    };
    expect(nb.cells[1]!.id).toBe('c-load');
    expect(nb.cells[1]!.outputs).toHaveLength(1);
  }, 90_000);

  it('a diagnostic published after the brief wait comes with the next tool result', async () => {
    // Fault injection: no wait at all, so every publish is "late".
    const f = await fixture({ writeTools: { waitMs: 0 } });
    await f.call('lsp', { action: 'diagnostics', file: 'pkg/util.py' });
    const r = await f.call('edit', {
      path: 'pkg/util.py',
      old_string: '        return len(rows)',
      new_string: '        return len(rows) + late_name'
    });
    expect(r.output).toContain('The server had not finished checking');
    expect(newBlock(r.output)).toEqual([]);
    let next = '';
    for (let i = 0; i < 50 && !next.includes('late_name'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      next = (await f.call('lsp', { action: 'status' })).output;
    }
    expect(next).toContain(
      'New diagnostics reported after the last change (1):\npkg/util.py:9 [error] "late_name" is not defined'
    );
    // Delivered once.
    expect((await f.call('lsp', { action: 'status' })).output).not.toContain('late_name');
  }, 90_000);

  it('WDIAG-1/2 through push: a server without pull diagnostics (typescript-language-server) reports exactly the new error, and not again when it only moves', async () => {
    const f = await fixture({}, 'ts');
    const file = path.join(f.workspace, 'src/greet.ts');
    const { client } = await f.service.serverFor(file);
    expect(client.pullDiagnostics).toBeUndefined();
    const first = await f.call('edit', {
      path: 'src/greet.ts',
      old_string: '    return this.side * this.side;',
      new_string: '    return this.side * this.side + undefined_count;'
    });
    expect(first.ok).toBe(true);
    expect(newBlock(first.output)).toEqual(["src/greet.ts:13 [error] Cannot find name 'undefined_count'. (2304)"]);
    const shifted = await f.call('edit', {
      path: 'src/greet.ts',
      old_string: '/** Says hello to someone. */',
      new_string: '// one\n// two\n// three\n// four\n/** Says hello to someone. */'
    });
    expect(shifted.ok).toBe(true);
    expect(shifted.output).not.toContain('New diagnostics');
    const now = await f.call('lsp', { action: 'diagnostics', file: 'src/greet.ts' });
    expect(now.output).toContain("src/greet.ts:17 [error] Cannot find name 'undefined_count'.");
  }, 90_000);

  it('WDIAG-1 through pull: basedpyright answers textDocument/diagnostic for a text document, which the write hook asks instead of awaiting a publish', async () => {
    const f = await fixture();
    const file = path.join(f.workspace, 'pkg/util.py');
    const { client } = await f.service.serverFor(file);
    const r = await f.call('edit', {
      path: 'pkg/util.py',
      old_string: '        return len(rows)',
      new_string: '        return len(rows) + pulled_name'
    });
    expect(newBlock(r.output)).toEqual([
      'pkg/util.py:9 [error] "pulled_name" is not defined (reportUndefinedVariable)'
    ]);
    expect(client.pullDiagnostics).toBeDefined();
    expect(client.pullsFor(pathToFileURL(file).href)).toBe(true);
  }, 90_000);
});
