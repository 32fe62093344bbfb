/**
 * `ast_edit` + `resolve` through the real registry (SPEC EDIT-1/2/3): a call pattern
 * changed across 5 `.py` files and 3 notebooks; notebooks validated by `nbformat` from the
 * project venv, with outputs, ids and metadata byte-identical; a file touched after
 * staging → nothing written, the file named; a write failing midway → everything rolled
 * back; overlapping ops reported at staging; expiry and restart.
 */
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { diffLines } from 'diff';
import { describe, expect, it } from 'vitest';
import { builtinTools } from '../../src/tools/index.js';
import { MAX_EDIT_SITES } from '../../src/structural/stage.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { StagedEdits } from '../../src/structural/staged-edits.js';
import { nodeEditFs } from '../../src/edits/index.js';
import { codeCell, fixtureRepo, notebookJson } from './fixture.js';

const venvPython = path.resolve(__dirname, '../../../.venv/bin/python');
const ctxFor = (workspace: string, chatId = 'c') => ({
  workspace,
  signal: new AbortController().signal,
  actor: 'model' as const,
  chatId
});

function setup(options: ConstructorParameters<typeof StagedEdits>[0] = {}) {
  const edits = new StagedEdits(options);
  return { edits, registry: new ToolRegistry(builtinTools({ edits })) };
}

/** 5 Python files and 3 notebooks that call `fetch(url, t)`; one notebook in an unusual JSON layout. */
function repoFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 1; i <= 5; i++)
    files[`pkg/m${i}.py`] =
      `import net\n\ndef run${i}(u):\n    r = fetch(u, ${i})\n    return fetch(\n        u + "/x", ${i} * 2)\n# fetch(u, 0) in a comment\n`;
  files['nb/a.ipynb'] = notebookJson([
    codeCell('a1', '%time r = fetch("a", 1)\nprint(r)'),
    { cell_type: 'markdown', id: 'md', metadata: {}, source: ['fetch(no, 0)'] },
    codeCell('a3', 'fetch("b", 2)\n')
  ]);
  files['nb/b.ipynb'] = notebookJson([codeCell('b1', 'x = 1'), codeCell('b2', 'for u in us:\n    fetch(u, 3)')]);
  // Indent 2, ASCII escapes, keys out of Jupyter's order: must survive byte for byte.
  files['nb/c.ipynb'] = `${JSON.stringify(
    {
      nbformat_minor: 5,
      nbformat: 4,
      metadata: { language_info: { name: 'python' }, note: 'caf\u00e9' },
      cells: [
        {
          id: 'c1',
          cell_type: 'code',
          source: 'y = fetch(z, 9)',
          outputs: [
            { output_type: 'execute_result', data: { 'text/plain': ['caf\u00e9'] }, metadata: {}, execution_count: 4 }
          ],
          execution_count: 4,
          metadata: { scrolled: true }
        }
      ]
    },
    null,
    2
  ).replace(/é/g, '\\u00e9')}\n`;
  return files;
}

async function readAll(ws: string, files: Record<string, string>): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(files)) out[name] = await readFile(path.join(ws, name), 'utf8');
  return out;
}

/** Every notebook validates with nbformat (one Python process for all of them). */
function validateNotebooks(files: string[]): void {
  execFileSync(venvPython, [
    '-c',
    'import nbformat,sys\nfor f in sys.argv[1:]: nbformat.validate(nbformat.read(f, as_version=4))',
    ...files
  ]);
}

/** Everything but cell sources is equal; every removed raw line was a source line. */
function checkNotebook(before: string, after: string): void {
  const strip = (t: string) => {
    const nb = JSON.parse(t) as { cells: Array<Record<string, unknown>> };
    return { ...nb, cells: nb.cells.map(({ source: _s, ...rest }) => rest) };
  };
  expect(strip(after)).toEqual(strip(before));
  const oldSources = new Set(
    (JSON.parse(before) as { cells: Array<{ source: string | string[] }> }).cells.flatMap((c) =>
      Array.isArray(c.source) ? c.source : [c.source]
    )
  );
  for (const part of diffLines(before, after)) {
    if (!part.removed) continue;
    for (const line of part.value.split('\n').filter((l) => l.trim())) {
      const literal = line
        .trim()
        .replace(/,$/, '')
        .replace(/^"source":\s*/, '');
      expect(oldSources.has(JSON.parse(literal) as string), `removed non-source line ${line}`).toBe(true);
    }
  }
}

describe('ast_edit + resolve (EDIT-1/2/3)', () => {
  it('stages without writing, then accept rewrites every site in 5 .py files and 3 notebooks; notebooks stay valid and byte-identical outside sources', async () => {
    const files = repoFiles();
    const ws = await fixtureRepo(files);
    const { registry } = setup();
    const staged = await registry.call(
      'ast_edit',
      { pattern: 'fetch($U, $T)', rewrite: 'fetch($U, timeout=$T)' },
      ctxFor(ws)
    );
    expect(staged.ok).toBe(true);
    expect(staged.output.split('\n')[0]).toMatch(
      /^\(proposed\) 14 replacements in 8 files \(3 notebooks\) — nothing written yet: call resolve with edit_id "(edit_[0-9a-f]+_1)" and action "accept"/
    );
    expect(staged.output).toContain('nb/a.ipynb cell #3 (id a3):1: fetch("b", 2) → fetch("b", timeout=2)');
    expect(staged.output).toContain('pkg/m2.py:5: fetch( u + "/x", 2 * 2) → fetch(u + "/x", timeout=2 * 2)');
    expect(staged.output).toContain('nb/a.ipynb cell #1 (id a1):1: fetch("a", 1) → fetch("a", timeout=1)');
    expect(await readAll(ws, files)).toEqual(files);
    const editId = /edit_[0-9a-f]+_1/.exec(staged.output)![0];

    const accepted = await registry.call('resolve', { edit_id: editId, action: 'accept' }, ctxFor(ws));
    expect(accepted.output).toBe(
      `Applied ${editId}: 14 replacements in 8 files (nb/a.ipynb, nb/b.ipynb, nb/c.ipynb, pkg/m1.py, pkg/m2.py, pkg/m3.py, pkg/m4.py, pkg/m5.py).`
    );
    const after = await readAll(ws, files);
    expect(after['pkg/m3.py']).toBe(
      'import net\n\ndef run3(u):\n    r = fetch(u, timeout=3)\n    return fetch(u + "/x", timeout=3 * 2)\n# fetch(u, 0) in a comment\n'
    );
    const notebooks = ['nb/a.ipynb', 'nb/b.ipynb', 'nb/c.ipynb'];
    validateNotebooks(notebooks.map((nb) => path.join(ws, nb)));
    for (const nb of notebooks) checkNotebook(files[nb]!, after[nb]!);
    expect(after['nb/c.ipynb']).toBe(files['nb/c.ipynb']!.replace('"y = fetch(z, 9)"', '"y = fetch(z, timeout=9)"'));
    expect(JSON.parse(after['nb/a.ipynb']!).cells.map((c: { source: string[] }) => c.source.join(''))).toEqual([
      '%time r = fetch("a", timeout=1)\nprint(r)',
      'fetch(no, 0)',
      'fetch("b", timeout=2)\n'
    ]);
    expect((await registry.call('resolve', { edit_id: editId, action: 'accept' }, ctxFor(ws))).output).toBe(
      `Staged edit ${editId} was already accepted.`
    );
  });

  it('a match that touches an IPython magic is reported and not rewritten', async () => {
    const ws = await fixtureRepo({ 'n.ipynb': notebookJson([codeCell('k', 'files = !ls\ny = 2')]) });
    const { registry } = setup();
    const r = await registry.call('ast_edit', { pattern: '$A = $B', rewrite: '$A = ($B)' }, ctxFor(ws));
    expect(r.output).toContain('n.ipynb cell #1 (id k):2: y = 2 → y = (2)');
    expect(r.output).toMatch(/^\(proposed\) 1 replacement in 1 file \(1 notebook\)/);
    expect(r.output).toContain('1 match not rewritten: they touch IPython magics.');
  });

  it('a file touched after staging: accept writes nothing and names the file', async () => {
    const files = repoFiles();
    const ws = await fixtureRepo(files);
    const { registry } = setup();
    const staged = await registry.call('ast_edit', { pattern: 'fetch($U, $T)', rewrite: 'get($U)' }, ctxFor(ws));
    const editId = /edit_[0-9a-f]+_1/.exec(staged.output)![0];
    await writeFile(path.join(ws, 'pkg/m4.py'), `${files['pkg/m4.py']}# touched\n`);
    const r = await registry.call('resolve', { edit_id: editId, action: 'accept' }, ctxFor(ws));
    expect(r.ok).toBe(false);
    expect(r.output).toBe(
      `Rejected ${editId}: pkg/m4.py changed after the edit was staged, so nothing was written (no file of the edit changed). Run ast_edit again on the current files.`
    );
    expect(await readAll(ws, files)).toEqual({ ...files, 'pkg/m4.py': `${files['pkg/m4.py']}# touched\n` });
  });

  it('a write failing midway rolls back the files already written', async () => {
    const files = repoFiles();
    const ws = await fixtureRepo(files);
    const fs = {
      ...nodeEditFs,
      write: async (file: string, text: string) =>
        file.endsWith('pkg/m3.py') ? Promise.reject(new Error('disk full (injected)')) : nodeEditFs.write(file, text)
    };
    const { registry } = setup({ fs });
    const staged = await registry.call('ast_edit', { pattern: 'fetch($U, $T)', rewrite: 'get($U)' }, ctxFor(ws));
    const editId = /edit_[0-9a-f]+_1/.exec(staged.output)![0];
    const r = await registry.call('resolve', { edit_id: editId, action: 'accept' }, ctxFor(ws));
    expect(r.output).toBe(
      `Could not apply ${editId}: Writing pkg/m3.py failed (disk full (injected)). The 5 files already written (nb/a.ipynb, nb/b.ipynb, nb/c.ipynb, pkg/m1.py, pkg/m2.py) were restored: nothing was changed. The edit is still staged (resolve again once the cause is fixed, or discard it).`
    );
    expect(await readAll(ws, files)).toEqual(files);
  });

  it('overlapping ops are reported at staging; a nested match inside a capture is rewritten inside it', async () => {
    const ws = await fixtureRepo({ 'a.py': 'f(f(1))\ng(f(2))\n' });
    const { registry, edits } = setup();
    const overlap = await registry.call(
      'ast_edit',
      {
        ops: [
          { pattern: 'f($X)', rewrite: 'h($X)' },
          { pattern: 'g($Y)', rewrite: 'k($Y)' }
        ]
      },
      ctxFor(ws)
    );
    expect(overlap.ok).toBe(false);
    expect(overlap.output).toBe(
      'Overlapping replacements: op 2 at a.py line 2 ("g(f(2))") overlaps op 1 at a.py line 2 ("f(2)"). Nothing was staged. Make the patterns disjoint, or stage them in separate ast_edit calls (resolve the first before staging the second).'
    );
    expect(() => edits.get(`edit_${edits.boot}_1`)).toThrow(/No staged edit/);
    const nested = await registry.call('ast_edit', { pattern: 'f($X)', rewrite: 'h($X)' }, ctxFor(ws));
    const editId = /edit_[0-9a-f]+_\d+/.exec(nested.output)![0];
    await registry.call('resolve', { edit_id: editId, action: 'accept' }, ctxFor(ws));
    expect(await readFile(path.join(ws, 'a.py'), 'utf8')).toBe('h(h(1))\ng(h(2))\n');
  });

  it('an op matching more sites than one edit stages is refused whole: nothing staged, nothing written', async () => {
    const text = 'f(1)\n'.repeat(MAX_EDIT_SITES + 1);
    const ws = await fixtureRepo({ 'many.py': text });
    const { registry, edits } = setup();
    const r = await registry.call('ast_edit', { pattern: 'f($X)', rewrite: 'g($X)' }, ctxFor(ws));
    expect(r.ok).toBe(false);
    expect(r.output).toContain(
      `The pattern matches more than ${MAX_EDIT_SITES.toLocaleString('en-US')} sites, the most one edit stages: nothing was staged.`
    );
    expect(() => edits.get(`edit_${edits.boot}_1`)).toThrow(/No staged edit/);
    expect(await readFile(path.join(ws, 'many.py'), 'utf8')).toBe(text);
  }, 60_000);

  it('discard writes nothing; an expired edit and one from before a restart say so; another chat cannot resolve it', async () => {
    const files = repoFiles();
    const ws = await fixtureRepo(files);
    let now = 1_000_000;
    const { registry, edits } = setup({ now: () => now });
    const idOf = async () =>
      /edit_[0-9a-f]+_\d+/.exec(
        (await registry.call('ast_edit', { pattern: 'fetch($U, $T)', rewrite: 'get($U)', path: 'pkg' }, ctxFor(ws)))
          .output
      )![0];
    const first = await idOf();
    expect((await registry.call('resolve', { edit_id: first, action: 'accept' }, ctxFor(ws, 'other'))).output).toBe(
      `Staged edit ${first} belongs to another chat; resolve only edits this chat's ast_edit staged.`
    );
    expect((await registry.call('resolve', { edit_id: first, action: 'discard' }, ctxFor(ws))).output).toBe(
      `Discarded ${first}: nothing was written (10 replacements in 5 files dropped).`
    );
    const second = await idOf();
    now += 30 * 60_000;
    expect((await registry.call('resolve', { edit_id: second, action: 'accept' }, ctxFor(ws))).output).toBe(
      `Staged edit ${second} expired (staged edits last 30 minutes). Nothing was written; run ast_edit again.`
    );
    const restarted = setup().registry;
    expect(
      (await restarted.call('resolve', { edit_id: `edit_${edits.boot}_3`, action: 'accept' }, ctxFor(ws))).output
    ).toMatch(
      /was staged before the Cellmate server restarted; staged edits do not survive a restart\. Nothing was written/
    );
    expect(await readAll(ws, files)).toEqual(files);
  });
});
