/**
 * Issue #5, notebook tools on a closed notebook: edits go to the `.ipynb` atomically, keep
 * every other cell's id and metadata and the nbformat minor version, mark agent cells, and
 * the result validates with `nbformat` from the project venv.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createNotebookTools } from '../../../src/tools/notebook/notebook.js';
import { ToolRegistry } from '../../../src/gate/registry.js';
import { tempDir } from '../../helpers/temp.js';

const venvPython = path.resolve(__dirname, '../../../../.venv/bin/python');
const noPane = { find: async () => undefined };
const registry = new ToolRegistry(createNotebookTools({ port: noPane }) as never);
const ctx = (workspace: string) => ({
  workspace,
  signal: new AbortController().signal,
  actor: 'model' as const,
  chatId: 'chat-1'
});

const NB = {
  cells: [
    { cell_type: 'markdown', id: 'intro', metadata: { tags: ['keep'] }, source: ['# Title\n', 'text'] },
    {
      cell_type: 'code',
      id: 'load',
      metadata: { collapsed: false, custom: { x: 1 } },
      source: 'x = 1',
      execution_count: 3,
      outputs: [{ output_type: 'stream', name: 'stdout', text: 'hi\n' }]
    }
  ],
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' }, custom_top: true },
  nbformat: 4,
  nbformat_minor: 5
};

describe('notebook tools on disk (issue #5)', () => {
  it('insert two cells, replace, move, delete: ids/metadata elsewhere untouched, agent cells marked, nbformat-valid', async () => {
    const ws = await tempDir();
    await writeFile(path.join(ws, 'a.ipynb'), JSON.stringify(NB));
    const r = await registry.call(
      'notebook_edit',
      {
        path: 'a.ipynb',
        edits: [
          {
            action: 'insert',
            index: 1,
            cells: [
              { cell_type: 'code', source: 'y = 2\nprint(y)' },
              { cell_type: 'markdown', source: 'note' }
            ]
          }
        ]
      },
      ctx(ws)
    );
    expect(r.ok).toBe(true);
    const nb = JSON.parse(await readFile(path.join(ws, 'a.ipynb'), 'utf8'));
    expect(nb.nbformat_minor).toBe(5);
    expect(nb.metadata).toEqual(NB.metadata);
    expect(nb.cells.map((c: { id: string }) => c.id).slice(0, 1)).toEqual(['intro']);
    expect(nb.cells[0]).toEqual(NB.cells[0]);
    expect(nb.cells[3]).toEqual(NB.cells[1]);
    expect(nb.cells[1]).toMatchObject({
      cell_type: 'code',
      source: ['y = 2\n', 'print(y)'],
      outputs: [],
      execution_count: null,
      metadata: { cellmate: { created_by: 'agent', chat: 'chat-1' } }
    });
    expect(nb.cells[2].outputs).toBeUndefined();
    expect(nb.cells[1].id).toMatch(/^[0-9a-f]{8}$/);

    const moved = await registry.call(
      'notebook_edit',
      {
        path: 'a.ipynb',
        edits: [
          { action: 'move', cell_id: 'load', to_index: 0 },
          { action: 'delete', cell_id: nb.cells[2].id }
        ]
      },
      ctx(ws)
    );
    expect(moved.ok).toBe(true);
    const after = JSON.parse(await readFile(path.join(ws, 'a.ipynb'), 'utf8'));
    expect(after.cells.map((c: { id: string }) => c.id)).toEqual(['load', 'intro', nb.cells[1].id]);

    const bad = await registry.call(
      'notebook_edit',
      { path: 'a.ipynb', edits: [{ action: 'delete', cell_id: 'nope' }] },
      ctx(ws)
    );
    expect(bad).toMatchObject({ ok: false });
    expect(bad.output).toContain('no cell with id "nope"');

    const read = await registry.call('notebook_read', { path: 'a.ipynb' }, ctx(ws));
    expect(read.output).toContain('[1] id=load code, execution_count 3');
    // One numbering (HARN-3): cells count from 1, and offset is a cell number.
    const second = await registry.call('notebook_read', { path: 'a.ipynb', offset: 2, limit: 1 }, ctx(ws));
    expect(second.output).toMatch(/^a\.ipynb: 3 cells, on disk \(not open in JupyterLab\)\.\n\[2\] id=intro markdown/);
    expect(second.output.split('\n').at(-1)).toBe('(cells 2–2 of 3; call notebook_read with offset=3 to continue)');
    const past = await registry.call('notebook_read', { path: 'a.ipynb', offset: 4 }, ctx(ws));
    expect(past.output).toBe('offset 4 is past the end (3 cells). Call notebook_read with an offset between 1 and 3.');
    expect((await registry.call('notebook_read', { path: 'a.ipynb', offset: 0 }, ctx(ws))).ok).toBe(false);
    expect(read.output).toContain('made by the agent');

    if (existsSync(venvPython)) {
      execFileSync(venvPython, [
        '-c',
        'import nbformat,sys; nbformat.validate(nbformat.read(sys.argv[1], as_version=4))',
        path.join(ws, 'a.ipynb')
      ]);
    }
  });

  it('nbformat 4.4 notebooks get no ids (minor kept) and cells are addressed as #<n>, counting from 1 like notebook_read', async () => {
    const ws = await tempDir();
    const old = { ...NB, nbformat_minor: 4, cells: NB.cells.map(({ id: _id, ...c }) => c) };
    await writeFile(path.join(ws, 'old.ipynb'), JSON.stringify(old));
    const r = await registry.call(
      'notebook_edit',
      {
        path: 'old.ipynb',
        edits: [
          { action: 'replace', cell_id: '#2', source: 'x = 2' },
          { action: 'insert', index: 2, cells: [{ cell_type: 'code', source: 'x' }] }
        ]
      },
      ctx(ws)
    );
    expect(r.ok).toBe(true);
    const nb = JSON.parse(await readFile(path.join(ws, 'old.ipynb'), 'utf8'));
    expect(nb.nbformat_minor).toBe(4);
    expect(nb.cells.some((c: { id?: string }) => 'id' in c)).toBe(false);
    expect(nb.cells[1]).toMatchObject({ source: ['x = 2'], outputs: [], metadata: NB.cells[1]!.metadata });
    expect(r.ok && r.output).toContain('New cell ids: #3.');
    const listed = await registry.call('notebook_read', { path: 'old.ipynb' }, ctx(ws));
    expect(listed.output).toContain('[2] id=#2 ');
    expect(
      (
        await registry.call(
          'notebook_edit',
          { path: 'old.ipynb', edits: [{ action: 'delete', cell_id: '#0' }] },
          ctx(ws)
        )
      ).ok
    ).toBe(false);
    if (existsSync(venvPython)) {
      execFileSync(venvPython, [
        '-c',
        'import nbformat,sys; nbformat.validate(nbformat.read(sys.argv[1], as_version=4))',
        path.join(ws, 'old.ipynb')
      ]);
    }
  });
});

describe('what the model sees (HARN-1): notebook tool schemas snapshotted', () => {
  for (const tool of createNotebookTools({ port: noPane })) {
    it(tool.name, async () => {
      const declared = {
        name: tool.name,
        tier: tool.tier,
        parameters: registry.inputJsonSchema(tool.name),
        description: registry.modelDescription(tool.name)
      };
      await expect(`${JSON.stringify(declared, null, 2)}\n`).toMatchFileSnapshot(`__schemas__/${tool.name}.json`);
      expect(tool.examples.length).toBeGreaterThanOrEqual(1);
      for (const example of tool.examples)
        expect((tool.parameters as import('zod').ZodType).safeParse(example.args).success).toBe(true);
      for (const word of [/When to use/, /cannot/, /Returns/, /Cost/]) expect(tool.description).toMatch(word);
    });
  }

  it('a long output is cut explicitly: the marker names the read call that shows the saved, uncut cell (HARN-2/3)', async () => {
    const ws = await tempDir();
    const long = Array.from({ length: 400 }, (_, i) => `row ${String(i).padStart(4, '0')} ok`).join('\n');
    const nb = {
      ...NB,
      cells: [
        ...NB.cells,
        {
          cell_type: 'code',
          id: 'big',
          metadata: {},
          source: 'print(rows)',
          execution_count: 4,
          outputs: [{ output_type: 'stream', name: 'stdout', text: `${long}\n` }]
        }
      ]
    };
    await writeFile(path.join(ws, 'big.ipynb'), JSON.stringify(nb));
    const r = await registry.call('notebook_read', { path: 'big.ipynb' }, ctx(ws));
    expect(r.ok).toBe(true);
    const marker =
      /… \[cut: (\d+) of (\d+) characters not shown; the whole output: call read with \{"path": "([^"]+)", "offset": (\d+)\}\]/.exec(
        r.output
      );
    expect(marker).not.toBeNull();
    const [, omitted, all, saved, offset] = marker!;
    expect([Number(all), Number(omitted)]).toEqual([long.length, long.length - 2_000]);
    expect(r.output).toContain('row 0000 ok');
    expect(r.output).not.toContain('row 0399 ok');
    const { readTool } = await import('../../../src/tools/read/read.js');
    const reader = new ToolRegistry([readTool]);
    const whole = await reader.call('read', { path: saved, offset: Number(offset), limit: 500 }, ctx(ws));
    expect(whole.output.split('\n')[0]).toMatch(/^ +\d+\t\[3\] id=big code, execution_count 4$/);
    expect(whole.output).toContain('row 0399 ok');
    expect(whole.output).not.toContain('[cut:');
  });

  it('a page of cells over the head/tail limits reaches the model as one page, not shaped a second time', async () => {
    const ws = await tempDir();
    const cells = Array.from({ length: 60 }, (_, i) => ({
      cell_type: 'code',
      id: `c${i}`,
      metadata: {},
      source: `# cell ${i}\n${'x = 1\n'.repeat(50)}`,
      execution_count: null,
      outputs: []
    }));
    await writeFile(path.join(ws, 'many.ipynb'), JSON.stringify({ ...NB, cells }));
    const r = await registry.call('notebook_read', { path: 'many.ipynb' }, ctx(ws));
    expect(r.ok && r.output.length).toBeGreaterThan(10_000);
    expect(r.output).not.toContain('lines omitted');
    expect(r.output).toContain('[50] id=c49 code');
    expect(r.output.split('\n').at(-1)).toBe('(cells 1–50 of 60; call notebook_read with offset=51 to continue)');
  });
});
