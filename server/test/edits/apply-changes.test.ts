/**
 * The one all-or-nothing multi-file edit (EDIT-2, RENAME-1; issue #10 item 5, issue #11
 * item 5) on real temporary folders: a rename-shaped change over 3 .py files and 2
 * notebooks' cells; a file touched after the edit was computed → nothing written, the
 * error names it; a write that fails mid-way (fault injection) → everything rolled back;
 * open notebooks go through the pane (PaneHub over a JSON-RPC connection).
 */
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NotebookSourceChange } from '@cellmate/protocol';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node.js';
import { describe, expect, it } from 'vitest';
import {
  applyChanges,
  EditError,
  locateCellSources,
  nodeEditFs,
  type Change,
  type EditFs
} from '../../src/edits/index.js';
import { PathRefusedError } from '../../src/base/tool-errors.js';
import { PaneHub } from '../../src/notebooks/pane-hub.js';
import { tempDir } from '../helpers/temp.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const PYTHON = path.resolve(here, '../../../.venv/bin/python');
const NOTEBOOK = await readFile(path.join(here, 'fixtures', 'greetings.ipynb'), 'utf8');
const CELL1 = 'from helper import greet\n\nmessage = greet("wörld")\nprint(message)';
const CELL4 = 'import matplotlib\n%matplotlib inline\nplot(greet)\n';

const FILES: Record<string, string> = {
  'helper.py': 'def greet(name):\n    return f"hello {name}"\n',
  'app/main.py': 'from helper import greet\n\nprint(greet("a"))\n',
  'app/cli.py': 'import helper\n\nhelper.greet("b")\n',
  'nb/one.ipynb': NOTEBOOK,
  'nb/two.ipynb': NOTEBOOK
};

async function workspace(files: Record<string, string> = FILES): Promise<string> {
  const ws = await tempDir();
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(ws, name)), { recursive: true });
    await writeFile(path.join(ws, name), text);
  }
  return ws;
}

async function snapshot(ws: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else out[path.relative(ws, p)] = await readFile(p, 'utf8');
    }
  };
  await walk(ws);
  return out;
}

const rename = (s: string) => s.replaceAll('greet', 'hello');
/** The change a rename of greet → hello computes from FILES. */
function renameChanges(): Change[] {
  return [
    ...['helper.py', 'app/main.py', 'app/cli.py'].map((p): Change => ({
      kind: 'text',
      path: p,
      expected: FILES[p]!,
      next: rename(FILES[p]!)
    })),
    ...['nb/one.ipynb', 'nb/two.ipynb'].map((p): Change => ({
      kind: 'cells',
      path: p,
      cells: [
        { cell: 'c0ffee01', expected: CELL1, next: rename(CELL1) },
        { cell: 'c0ffee04', expected: CELL4, next: rename(CELL4) }
      ]
    }))
  ];
}

const outsideSources = (text: string): string[] => {
  const gaps: string[] = [];
  let at = 0;
  for (const s of locateCellSources(text)) {
    if (!s) continue;
    gaps.push(text.slice(at, s.start));
    at = s.end;
  }
  return [...gaps, text.slice(at)];
};

describe('applyChanges', () => {
  it('a rename across 3 .py files and 2 notebooks: all changed; notebooks valid, outputs/ids/metadata byte-identical', async () => {
    const ws = await workspace();
    const applied = await applyChanges(renameChanges(), { workspace: ws });
    expect(applied.map((a) => `${a.how} ${a.path}`)).toEqual([
      'modified helper.py',
      'modified app/main.py',
      'modified app/cli.py',
      'modified nb/one.ipynb',
      'modified nb/two.ipynb'
    ]);
    const after = await snapshot(ws);
    for (const p of ['helper.py', 'app/main.py', 'app/cli.py']) expect(after[p]).toBe(rename(FILES[p]!));
    for (const p of ['nb/one.ipynb', 'nb/two.ipynb']) {
      expect(outsideSources(after[p]!)).toEqual(outsideSources(NOTEBOOK));
      const cells = (JSON.parse(after[p]!) as { cells: Array<{ source: string[] }> }).cells;
      expect(cells[1]!.source.join('')).toBe(rename(CELL1));
      expect(cells[2]!.source.join('')).toBe('greet'); // not part of the change
    }
    execFileSync(PYTHON, [
      '-c',
      'import nbformat, sys\nfor p in sys.argv[1:]: nbformat.validate(nbformat.read(p, as_version=4))',
      path.join(ws, 'nb/one.ipynb'),
      path.join(ws, 'nb/two.ipynb')
    ]);
    expect(Object.keys(after).filter((f) => f.includes('.tmp'))).toEqual([]);
  });

  it('one file changed after the edit was computed: nothing is written anywhere, and the error names that file', async () => {
    const ws = await workspace();
    await writeFile(path.join(ws, 'app/cli.py'), `${FILES['app/cli.py']}# touched\n`);
    const before = await snapshot(ws);
    const error = (await applyChanges(renameChanges(), { workspace: ws }).catch((e: unknown) => e)) as EditError;
    expect(error).toBeInstanceOf(EditError);
    expect(error.code).toBe('conflict');
    expect(error.files).toEqual(['app/cli.py']);
    expect(error.message).toBe(
      'Nothing was changed: a file is not what the edit was computed from.\n- app/cli.py: changed since the edit was computed\nRead it again and recompute the edit.'
    );
    expect(await snapshot(ws)).toEqual(before);
  });

  it('a notebook cell changed since: nothing written, the error names the notebook and the cell; every stale file is listed', async () => {
    const ws = await workspace();
    const edited = NOTEBOOK.replace('plot(greet)', 'plot(greet, dpi=200)');
    await writeFile(path.join(ws, 'nb/two.ipynb'), edited);
    await writeFile(path.join(ws, 'helper.py'), 'def greet(): ...\n');
    const before = await snapshot(ws);
    const error = (await applyChanges(renameChanges(), { workspace: ws }).catch((e: unknown) => e)) as EditError;
    expect(error.files).toEqual(['helper.py', 'nb/two.ipynb']);
    expect(error.message).toContain('- nb/two.ipynb: cell "c0ffee04" (cell 5) changed since the edit was computed');
    expect(error.message).toContain('- helper.py: changed since the edit was computed');
    expect(await snapshot(ws)).toEqual(before);
  });

  it('a snapshot of the whole notebook (expectedFile) is compared byte for byte', async () => {
    const ws = await workspace();
    await writeFile(path.join(ws, 'nb/one.ipynb'), NOTEBOOK.replace('"tags": [', '"tags": ["x", '));
    const change: Change = {
      kind: 'cells',
      path: 'nb/one.ipynb',
      expectedFile: NOTEBOOK,
      cells: [{ cell: 'c0ffee01', expected: CELL1, next: 'x' }]
    };
    await expect(applyChanges([change], { workspace: ws })).rejects.toThrow(
      /nb\/one\.ipynb: changed since the edit was computed \(the file differs from the snapshot\)/
    );
  });

  it('creates and deletes; a create over an existing file and an edit of a missing one are conflicts', async () => {
    const ws = await workspace();
    const applied = await applyChanges(
      [
        { kind: 'text', path: 'new/mod.py', expected: null, next: 'x = 1\n' },
        { kind: 'text', path: 'app/cli.py', expected: FILES['app/cli.py']!, next: null }
      ],
      { workspace: ws }
    );
    expect(applied.map((a) => a.how)).toEqual(['created', 'deleted']);
    const after = await snapshot(ws);
    expect(after['new/mod.py']).toBe('x = 1\n');
    expect(after['app/cli.py']).toBeUndefined();
    const error = (await applyChanges(
      [
        { kind: 'text', path: 'helper.py', expected: null, next: 'x' },
        { kind: 'text', path: 'gone.py', expected: 'y', next: 'z' }
      ],
      { workspace: ws }
    ).catch((e: unknown) => e)) as EditError;
    expect(error.message).toContain('- helper.py: exists, but the change creates it');
    expect(error.message).toContain('- gone.py: does not exist (any more)');
  });

  it('a byte-order mark is part of the text: compared as read with readFile(…, "utf8") and kept', async () => {
    const ws = await workspace({ 'bom.py': '\ufeffgreet = 1\n' });
    const expected = await readFile(path.join(ws, 'bom.py'), 'utf8');
    await applyChanges([{ kind: 'text', path: 'bom.py', expected, next: rename(expected) }], { workspace: ws });
    expect(await readFile(path.join(ws, 'bom.py'))).toEqual(Buffer.from('\ufeffhello = 1\n'));
  });

  it('a write failing mid-way (fault injection): the files already written are restored, a created file removed', async () => {
    const ws = await workspace();
    const before = await snapshot(ws);
    const writes: string[] = [];
    const failing: EditFs = {
      ...nodeEditFs,
      write: async (abs, text) => {
        writes.push(path.relative(ws, abs));
        if (path.relative(ws, abs) === 'nb/one.ipynb' && text !== NOTEBOOK)
          throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
        return nodeEditFs.write(abs, text);
      }
    };
    const changes = [{ kind: 'text', path: 'created.py', expected: null, next: 'new\n' } as Change, ...renameChanges()];
    const error = (await applyChanges(changes, { workspace: ws, fs: failing }).catch((e: unknown) => e)) as EditError;
    expect(error.code).toBe('write-failed');
    expect(error.message).toBe(
      'Writing nb/one.ipynb failed (ENOSPC: no space left on device). The 4 files already written (created.py, helper.py, app/main.py, app/cli.py) were restored: nothing was changed.'
    );
    // It really had written them before failing, then put them back.
    expect(writes.slice(0, 5)).toEqual(['created.py', 'helper.py', 'app/main.py', 'app/cli.py', 'nb/one.ipynb']);
    expect(await snapshot(ws)).toEqual(before);
  });

  it('a rollback that fails too says exactly which file holds the new content', async () => {
    const ws = await workspace();
    let failNext = false;
    const failing: EditFs = {
      ...nodeEditFs,
      write: async (abs, text) => {
        const rel = path.relative(ws, abs);
        if (rel === 'app/cli.py') throw new Error('EIO: i/o error');
        if (rel === 'helper.py' && failNext) throw new Error('EROFS: read-only file system');
        if (rel === 'app/main.py') failNext = true;
        return nodeEditFs.write(abs, text);
      }
    };
    const error = (await applyChanges(renameChanges(), { workspace: ws, fs: failing }).catch(
      (e: unknown) => e
    )) as EditError;
    expect(error.message).toBe(
      'Writing app/cli.py failed (EIO: i/o error). Restoring failed for helper.py (EROFS: read-only file system): that file holds the new content; the others of helper.py, app/main.py were restored.'
    );
    expect(await readFile(path.join(ws, 'app/main.py'), 'utf8')).toBe(FILES['app/main.py']);
    expect(await readFile(path.join(ws, 'helper.py'), 'utf8')).toBe(rename(FILES['helper.py']!));
  });

  it('paths stay inside the workspace; a file named twice, a non-UTF-8 file and a broken notebook are refused before writing', async () => {
    const ws = await workspace({ ...FILES, 'latin.txt': '' });
    await writeFile(path.join(ws, 'latin.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    await writeFile(path.join(ws, 'broken.ipynb'), '{"cells": [');
    const before = await snapshot(ws);
    const first = { kind: 'text', path: 'helper.py', expected: FILES['helper.py']!, next: 'x' } as Change;
    await expect(
      applyChanges([first, { kind: 'text', path: '../outside.py', expected: null, next: 'x' }], { workspace: ws })
    ).rejects.toBeInstanceOf(PathRefusedError);
    await expect(applyChanges([first, { ...first, path: './helper.py' } as Change], { workspace: ws })).rejects.toThrow(
      'helper.py appears twice in the change set'
    );
    await expect(
      applyChanges([first, { kind: 'text', path: 'latin.txt', expected: 'café\n', next: 'x' }], { workspace: ws })
    ).rejects.toThrow('latin.txt is not UTF-8 text');
    await expect(
      applyChanges([first, { kind: 'cells', path: 'broken.ipynb', cells: [{ cell: '#1', expected: '', next: 'x' }] }], {
        workspace: ws
      })
    ).rejects.toThrow(/^broken\.ipynb is not a valid nbformat 4 notebook/);
    expect(await snapshot(ws)).toEqual(before);
  });
});

/**
 * A pane over a real JSON-RPC connection, holding one open notebook's cells; it answers
 * `notebook/set-sources` with the pane's contract (check all, then set). The pane's own
 * implementation on JupyterLab's shared model is tested in the browser (test/e2e) and in
 * lab-extension/test/notebook-apply.test.ts.
 */
function paneWith(openPath: string, cells: Array<{ id: string; source: string }>, failApply = false) {
  const a = new PassThrough();
  const b = new PassThrough();
  const server = createMessageConnection(new StreamMessageReader(a), new StreamMessageWriter(b));
  const pane = createMessageConnection(new StreamMessageReader(b), new StreamMessageWriter(a));
  const calls: Array<{ dryRun: boolean; changes: NotebookSourceChange[] }> = [];
  const asked = { openDocuments: 0 };
  pane.onRequest('notebook/open-documents', () => {
    asked.openDocuments++;
    return { paths: [openPath] };
  });
  pane.onRequest('notebook/set-sources', (p: { path: string; changes: NotebookSourceChange[]; dryRun?: boolean }) => {
    calls.push({ dryRun: !!p.dryRun, changes: p.changes });
    for (const c of p.changes) {
      const cell = cells.find((x) => x.id === c.cellId);
      if (!cell) throw new Error(`no cell "${c.cellId}" in the open notebook`);
      if (cell.source !== c.expected)
        throw new Error(`cell "${c.cellId}" is not the text the change was computed from: it was edited since`);
    }
    if (p.dryRun) return { changed: 0 };
    if (failApply) throw new Error('the notebook was closed');
    for (const c of p.changes) cells.find((x) => x.id === c.cellId)!.source = c.source;
    return { changed: p.changes.length };
  });
  server.listen();
  pane.listen();
  const hub = new PaneHub();
  hub.attach(server);
  return { hub, cells, calls, asked };
}

describe('applyChanges with an open notebook', () => {
  it('changes the open document through its pane (dry run first), not the file on disk', async () => {
    const ws = await workspace();
    const { hub, cells, calls, asked } = paneWith('nb/one.ipynb', [
      { id: 'c0ffee01', source: CELL1 },
      { id: 'c0ffee04', source: CELL4 }
    ]);
    const applied = await applyChanges(renameChanges(), { workspace: ws, port: hub });
    expect(asked.openDocuments).toBe(1); // once for both notebooks of the change set
    expect(applied.find((x) => x.path === 'nb/one.ipynb')).toEqual({
      path: 'nb/one.ipynb',
      how: 'open-notebook',
      cells: ['c0ffee01', 'c0ffee04']
    });
    expect(cells.map((c) => c.source)).toEqual([rename(CELL1), rename(CELL4)]);
    expect(calls.map((c) => c.dryRun)).toEqual([true, false]);
    expect(await readFile(path.join(ws, 'nb/one.ipynb'), 'utf8')).toBe(NOTEBOOK);
    expect(await readFile(path.join(ws, 'nb/two.ipynb'), 'utf8')).not.toBe(NOTEBOOK);
  });

  it('a cell edited in the open notebook since: nothing written, the error names the notebook and the cell', async () => {
    const ws = await workspace();
    const before = await snapshot(ws);
    const { hub, calls } = paneWith('nb/one.ipynb', [
      { id: 'c0ffee01', source: `${CELL1}\n# typing…` },
      { id: 'c0ffee04', source: CELL4 }
    ]);
    const error = (await applyChanges(renameChanges(), { workspace: ws, port: hub }).catch(
      (e: unknown) => e
    )) as EditError;
    expect(error.code).toBe('conflict');
    expect(error.message).toContain(
      '- nb/one.ipynb: open in JupyterLab, and cell "c0ffee01" is not the text the change was computed from: it was edited since'
    );
    expect(calls.every((c) => c.dryRun)).toBe(true);
    expect(await snapshot(ws)).toEqual(before);
  });

  it('the pane failing to apply after the disk writes: the disk is rolled back', async () => {
    const ws = await workspace();
    const before = await snapshot(ws);
    const { hub } = paneWith(
      'nb/one.ipynb',
      [
        { id: 'c0ffee01', source: CELL1 },
        { id: 'c0ffee04', source: CELL4 }
      ],
      true
    );
    const error = (await applyChanges(renameChanges(), { workspace: ws, port: hub }).catch(
      (e: unknown) => e
    )) as EditError;
    expect(error.code).toBe('write-failed');
    expect(error.message).toMatch(
      /^Could not change nb\/one\.ipynb in JupyterLab \(the notebook was closed\)\. The 4 files already written \(.*\) were restored: nothing was changed\.$/
    );
    expect(await snapshot(ws)).toEqual(before);
  });
});
