/**
 * `lsp_rename` on real basedpyright (SPEC RENAME-1) through the shared all-or-nothing edit:
 * a function used in three .py files and two notebook cells is renamed everywhere, the
 * notebook still validates with nbformat and keeps its outputs and ids; the same rename with
 * one file changed after the server computed its edit changes nothing and names the file.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLspRenameTool } from '../../src/tools/lsp_rename/lsp_rename.js';
import { lspFixture, REPO, type LspFixture } from './lsp-fixtures.js';
import { PolicyStore } from '../../src/policy/policy-store.js';
import { answeringPerson } from '../helpers/answering-person.js';

const PYTHON = path.join(REPO, '.venv', 'bin', 'python');
const FILES = ['pkg/util.py', 'pkg/main.py', 'pkg/other.py', 'pkg/needs_import.py', 'analysis.ipynb'];

const open: LspFixture[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.dispose();
});

async function snapshot(ws: string): Promise<Record<string, string>> {
  return Object.fromEntries(
    await Promise.all(FILES.map(async (f) => [f, await readFile(path.join(ws, f), 'utf8')] as const))
  );
}

describe('lsp_rename (RENAME-1)', () => {
  it('renames a function in 3 .py files and 2 notebook cells; the notebook validates, outputs and ids untouched', async () => {
    const f = await lspFixture(['py'], {
      flat: true,
      writeTools: true,
      extraTools: ({ docs }) => [createLspRenameTool(docs)]
    });
    open.push(f);
    const before = await snapshot(f.workspace);
    const r = await f.call('lsp_rename', { file: 'pkg/util.py', line: 1, symbol: 'load_data', new_name: 'read_rows' });
    expect(r.ok, r.output).toBe(true);
    expect(r.output.split('\n')[0]).toBe('Renamed load_data → read_rows: 12 edits in 5 files.');
    expect(r.output).toContain('M analysis.ipynb (3 edits; cells c-load, c-count)');
    const after = await snapshot(f.workspace);
    for (const file of FILES) {
      expect(after[file]).not.toContain('load_data');
      expect(after[file]).toBe(before[file]!.replaceAll('load_data', 'read_rows'));
    }
    // nbformat itself says the notebook is valid; outputs, ids and metadata are as they were.
    execFileSync(PYTHON, [
      '-c',
      'import nbformat, sys; nbformat.validate(nbformat.read(sys.argv[1], as_version=4))',
      path.join(f.workspace, 'analysis.ipynb')
    ]);
    const nb = JSON.parse(after['analysis.ipynb']!) as {
      cells: Array<{ id: string; outputs?: unknown; metadata: unknown }>;
    };
    const old = JSON.parse(before['analysis.ipynb']!) as typeof nb;
    expect(nb.cells.map((c) => c.id)).toEqual(old.cells.map((c) => c.id));
    expect(nb.cells.map((c) => [c.outputs, c.metadata])).toEqual(old.cells.map((c) => [c.outputs, c.metadata]));
  }, 120_000);

  it('a second rename right after the first reaches every file again: the server is told what the first one wrote', async () => {
    const f = await lspFixture(['py'], {
      flat: true,
      writeTools: true,
      extraTools: ({ docs }) => [createLspRenameTool(docs)]
    });
    open.push(f);
    const before = await snapshot(f.workspace);
    // The other files are open in the server, as after a person's questions about them.
    for (const file of ['pkg/main.py', 'pkg/other.py', 'analysis.ipynb'])
      expect((await f.call('lsp', { action: 'diagnostics', file })).ok).toBe(true);
    const first = await f.call('lsp_rename', {
      file: 'pkg/util.py',
      line: 1,
      symbol: 'load_data',
      new_name: 'read_rows'
    });
    expect(first.ok, first.output).toBe(true);
    const second = await f.call('lsp_rename', {
      file: 'pkg/util.py',
      line: 1,
      symbol: 'read_rows',
      new_name: 'fetch_rows'
    });
    expect(second.ok, second.output).toBe(true);
    expect(second.output.split('\n')[0]).toBe('Renamed read_rows → fetch_rows: 12 edits in 5 files.');
    const after = await snapshot(f.workspace);
    for (const file of FILES) expect(after[file]).toBe(before[file]!.replaceAll('load_data', 'fetch_rows'));
  }, 180_000);

  it('one file changed after the server computed its edit: nothing is written and the error names the file', async () => {
    const f = await lspFixture(['py'], {
      flat: true,
      extraTools: ({ docs }) => [
        createLspRenameTool(docs, {
          beforeApply: async () => {
            const file = path.join(f.workspace, 'pkg/other.py');
            await writeFile(file, `${await readFile(file, 'utf8')}# touched meanwhile\n`);
          }
        })
      ]
    });
    open.push(f);
    const before = await snapshot(f.workspace);
    const r = await f.call('lsp_rename', { file: 'pkg/util.py', line: 1, symbol: 'load_data', new_name: 'read_rows' });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(/pkg\/other\.py/);
    expect(r.output).toMatch(/nothing was (changed|written)/i);
    const after = await snapshot(f.workspace);
    for (const file of FILES.filter((x) => x !== 'pkg/other.py')) expect(after[file]).toBe(before[file]);
    expect(after['pkg/other.py']).toBe(`${before['pkg/other.py']}# touched meanwhile\n`);
  }, 120_000);

  it('from a notebook cell the server has open as a notebook document (magics neutralised): the same rename', async () => {
    const f = await lspFixture(['py'], {
      flat: true,
      extraTools: ({ docs }) => [createLspRenameTool(docs)]
    });
    open.push(f);
    const before = await snapshot(f.workspace);
    const hover = await f.call('lsp', {
      action: 'hover',
      file: 'analysis.ipynb',
      cell: 'c-count',
      line: 2,
      symbol: 'load_data'
    });
    expect(hover.output).toContain('def load_data(path: str) -> list[str]');
    const r = await f.call('lsp_rename', {
      file: 'analysis.ipynb',
      cell: '#3',
      line: 2,
      symbol: 'load_data',
      new_name: 'read_rows'
    });
    expect(r.ok, r.output).toBe(true);
    const after = await snapshot(f.workspace);
    for (const file of FILES) expect(after[file]).toBe(before[file]!.replaceAll('load_data', 'read_rows'));
  }, 120_000);

  it('answered "Approve once" on the default policy: the rename writes every file it touches, unless a deny rule covers one', async () => {
    const person = answeringPerson('once');
    const gate = (ws: string) => ({
      policy: new PolicyStore({
        workspace: ws,
        env: { HOME: path.join(ws, '.home'), CELLMATE_TRUSTED_WORKSPACES: ws }
      }),
      approvals: person.broker
    });
    const f = await lspFixture(['py'], {
      flat: true,
      gate,
      extraTools: ({ docs }) => [createLspRenameTool(docs)]
    });
    open.push(f);
    const before = await snapshot(f.workspace);
    // A deny rule for one of the files the server's edit reaches wins over the answer.
    const policyFile = path.join(f.workspace, '.cellmate', 'policy.json');
    await mkdir(path.dirname(policyFile), { recursive: true });
    await writeFile(
      policyFile,
      JSON.stringify({ rules: [{ tool: 'lsp_rename', pattern: 'pkg/other.py', action: 'deny' }] })
    );
    const refused = await f.call('lsp_rename', {
      file: 'pkg/util.py',
      line: 1,
      symbol: 'load_data',
      new_name: 'read_rows'
    });
    expect(person.approvals().map((c) => c.approval!.tool)).toEqual(['lsp_rename']);
    expect(refused.ok).toBe(false);
    expect(refused.output).toBe(
      'The rename would change pkg/other.py, which the policy does not let lsp_rename write. Nothing was changed.'
    );
    expect(await snapshot(f.workspace)).toEqual(before);

    await rm(policyFile);
    const r = await f.call('lsp_rename', { file: 'pkg/util.py', line: 1, symbol: 'load_data', new_name: 'read_rows' });
    expect(person.approvals()).toHaveLength(2);
    expect(r.ok, r.output).toBe(true);
    const after = await snapshot(f.workspace);
    for (const file of FILES) expect(after[file]).toBe(before[file]!.replaceAll('load_data', 'read_rows'));
  }, 120_000);
});
