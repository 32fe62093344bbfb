/**
 * `ast_grep` through the real registry on a fixture repo (SPEC AST-1…6): metavariable
 * equality, `$_`, strings and comments, the scaffold ladder, notebooks with magics,
 * .gitignore and paging.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { structuralSearch } from '../../src/structural/search.js';
import { MAX_SEARCH_MATCHES } from '../../src/tools/ast_grep/ast_grep.js';
import { builtinTools } from '../../src/tools/index.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { codeCell, fixtureRepo, notebookJson } from './fixture.js';

const registry = new ToolRegistry(builtinTools());
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const ctxFor = (workspace: string) => ({
  workspace,
  signal: new AbortController().signal,
  actor: 'model' as const,
  chatId: 'c'
});

const GUARDS = [
  'def shut(conn, other):',
  '    if conn is not None:',
  '        conn.close()',
  '    if other is not None:',
  '        conn.close()',
  '    if   other is not None :',
  '        other.close(  )',
  '    s = "if conn is not None: conn.close()"',
  '    # if conn is not None: conn.close()',
  ''
].join('\n');

const LADDER = [
  'def dispose(x):',
  '    return x',
  '',
  'class Pool:',
  '    def __init__(self, size):',
  '        self.size = size',
  '        self.items = []',
  '    def drain(self):',
  '        dispose(self.items)',
  '        fetch("u", timeout=3)',
  '        y = dispose(',
  '            self.size)',
  ''
].join('\n');

async function grep(ws: string, args: Record<string, unknown>) {
  return registry.call('ast_grep', args, ctxFor(ws));
}

describe('ast_grep matching (AST-1, AST-2, AST-5)', () => {
  it('a repeated metavariable captures the same code; $_ does not force equality; never in strings or comments', async () => {
    const ws = await fixtureRepo({ 'guards.py': GUARDS });
    const same = await grep(ws, { pattern: 'if $X is not None: $X.close()', path: 'guards.py' });
    expect(same.ok).toBe(true);
    // Line 2 (conn/conn) and line 6 (other/other, odd spacing); not line 4 (other/conn), not the string or the comment.
    expect(same.output).toMatch(
      /^guards\.py:2:5: if conn is not None: … {2}\{X=conn\}\nguards\.py:6:5: if {3}other is not None : … {2}\{X=other\}\n\(2 matches in 1 file; pattern read as statement in python\)$/
    );
    const any = await grep(ws, { pattern: 'if $X is not None: $_.close()', path: 'guards.py' });
    expect(any.output).toMatch(/^\(3 matches in 1 file/m);
    expect(any.output).toContain('guards.py:4:5:');
  });

  it('TypeScript: the same guard rule, and a line break inside the call does not matter', async () => {
    const ws = await fixtureRepo({
      'src/a.ts':
        'export function f(a: Res | null, b: Res) {\n  if (a != null) a.dispose();\n  if (a != null) b.dispose();\n  const s = "if (a != null) a.dispose()";\n}\n',
      'src/b.ts': 'call(1,\n     2);\n// call(1, 2)\n'
    });
    const guard = await grep(ws, { pattern: 'if ($X != null) $X.dispose()', path: 'src' });
    expect(guard.output).toMatch(
      /^src\/a\.ts:2:3: if \(a != null\) a\.dispose\(\);  \{X=a\}\n\(1 match in 1 file; pattern read as statement in typescript\)$/
    );
    const call = await grep(ws, { pattern: 'call($A, $B)', path: 'src/b.ts' });
    expect(call.output).toMatch(/^src\/b\.ts:1:1: call\(1, …  \{A=1, B=2\}\n\(1 match/);
  });
});

describe('the scaffold ladder (AST-4)', () => {
  it('dispose($X) finds calls, not the definition', async () => {
    const ws = await fixtureRepo({ 'pool.py': LADDER });
    const r = await grep(ws, { pattern: 'dispose($X)', path: 'pool.py' });
    expect(r.output).toBe(
      'pool.py:9:9: dispose(self.items)  {X=self.items}\npool.py:11:13: dispose( …  {X=self.size}\n(2 matches in 1 file; pattern read as statement in python)'
    );
  });

  it('timeout=$T finds keyword arguments (as an expression)', async () => {
    const ws = await fixtureRepo({ 'pool.py': LADDER });
    const r = await grep(ws, { pattern: 'timeout=$T', path: 'pool.py' });
    expect(r.output).toBe('pool.py:10:20: timeout=3  {T=3}\n(1 match in 1 file; pattern read as expression in python)');
  });

  it('self.$A = $B finds attribute assignments in methods', async () => {
    const ws = await fixtureRepo({ 'pool.py': LADDER });
    const r = await grep(ws, { pattern: 'self.$A = $B', path: 'pool.py' });
    expect(r.output).toBe(
      'pool.py:6:9: self.size = size  {A=size, B=size}\npool.py:7:9: self.items = []  {A=items, B=[]}\n(2 matches in 1 file; pattern read as statement in python)'
    );
  });

  it('a class-member snippet is read as one', async () => {
    const ws = await fixtureRepo({ 'a.ts': 'class A {\n  private size = 3;\n  get() { return 1; }\n}\n' });
    const r = await grep(ws, { pattern: 'private $F = $V;', path: 'a.ts' });
    expect(r.output).toMatch(
      /^a\.ts:2:3: private size = 3  \{F=size, V=3\}\n\(1 match in 1 file; pattern read as class member in typescript\)$/
    );
  });

  it('a garbage pattern is reported unparseable with the parser complaint, never "0 matches"', async () => {
    const ws = await fixtureRepo({ 'pool.py': LADDER });
    const r = await grep(ws, { pattern: 'def (:', path: 'pool.py' });
    expect(r.ok).toBe(false);
    expect(r.output).toMatch(
      /^Unparseable pattern "def \(:" for python: (syntax error|missing[^:]*) at line 1, column \d+/
    );
    const folder = await grep(ws, { pattern: ')(][' });
    expect(folder.ok).toBe(false);
    expect(folder.output).toMatch(/^Unparseable pattern/);
  });
});

describe('notebooks, ignores and paging (AST-3, AST-6)', () => {
  it('searches every code cell with magics neutralised; reports notebook, cell number and id, and the line in the cell', async () => {
    const nb = notebookJson([
      codeCell('c1', '%matplotlib inline\nimport x\nx.dispose(b)\ndispose(a)'),
      { cell_type: 'markdown', id: 'm1', metadata: {}, source: ['dispose(md)'] },
      codeCell('c3', 'files = !ls -la\nfor f in files:\n    %time dispose(f)\n    dispose(f)'),
      codeCell('c4', '%%bash\ndispose(never)\n')
    ]);
    const ws = await fixtureRepo({ 'nb.ipynb': nb });
    const r = await grep(ws, { pattern: 'dispose($X)' });
    expect(r.output).toBe(
      [
        'nb.ipynb cell #1 (id c1) line 4:1: dispose(a)  {X=a}',
        'nb.ipynb cell #3 (id c3) line 3:11: dispose(f)  {X=f}',
        'nb.ipynb cell #3 (id c3) line 4:5: dispose(f)  {X=f}',
        '(3 matches in 1 file; pattern read as statement in python)'
      ].join('\n')
    );
  });

  it('respects .gitignore (nested too) and skips node_modules and .venv', async () => {
    const ws = await fixtureRepo({
      '.gitignore': 'build/\n*.gen.py\n',
      'a.py': 'go(1)\n',
      'build/b.py': 'go(2)\n',
      'x.gen.py': 'go(3)\n',
      'sub/.gitignore': 'secret.py\n',
      'sub/secret.py': 'go(4)\n',
      'sub/ok.py': 'go(5)\n',
      'node_modules/m/i.js': 'go(6)\n',
      '.venv/lib/v.py': 'go(7)\n'
    });
    const r = await grep(ws, { pattern: 'go($N)' });
    expect(r.output).toBe(
      'a.py:1:1: go(1)  {N=1}\nsub/ok.py:1:1: go(5)  {N=5}\n(2 matches in 2 files; pattern read as statement in python)'
    );
  });

  it('pages with max_results and says how to continue', async () => {
    const ws = await fixtureRepo({ 'many.py': Array.from({ length: 7 }, (_, i) => `go(${i})`).join('\n') });
    const r = await grep(ws, { pattern: 'go($N)', max_results: 3 });
    expect(r.output.split('\n').at(-1)).toBe(
      '(matches 1–3 of 7 in 1 file; pattern read as statement in python; call ast_grep with offset=4 to continue)'
    );
    const next = await grep(ws, { pattern: 'go($N)', max_results: 3, offset: 4 });
    expect(next.output.split('\n')[0]).toBe('many.py:4:1: go(3)  {N=3}');
  });

  it('an unknown language or a file of another language is a clear error', async () => {
    const ws = await fixtureRepo({ 'notes.md': '# hi\n', 'a.py': 'x\n' });
    expect((await grep(ws, { pattern: 'x', language: 'cobol' })).output).toMatch(
      /^Unknown language "cobol": use one of python/
    );
    expect((await grep(ws, { pattern: 'x', path: 'notes.md' })).output).toMatch(
      /^notes\.md is not a file structural search understands/
    );
  });
});

describe('a pattern that matches everywhere stops at MAX_SEARCH_MATCHES (memory and time stay bounded)', () => {
  it('structuralSearch: stops the walk at maxMatches and says so; exactly the limit is not truncated', async () => {
    const files = Object.fromEntries(
      Array.from({ length: 60 }, (_, i) => [`m${String(i).padStart(2, '0')}.py`, 'f(1)\n'.repeat(200)])
    );
    const ws = await fixtureRepo(files);
    const scope = { workspace: ws, path: '.', signal: new AbortController().signal };
    const all = await structuralSearch('f($X)', scope);
    expect([all.matches.length, all.truncated]).toEqual([12_000, false]);
    const exact = await structuralSearch('f($X)', { ...scope, maxMatches: 12_000 });
    expect([exact.matches.length, exact.truncated]).toEqual([12_000, false]);
    const stopped = await structuralSearch('f($X)', { ...scope, maxMatches: 1_000 });
    expect([stopped.matches.length, stopped.truncated]).toEqual([1_000, true]);
    // Over the venv's 13,000 files the walk stops soon after the limit.
    const lib = path.join(repo, '.venv', 'lib');
    const corpus = path.join(
      lib,
      readdirSync(lib).find((d) => d.startsWith('python'))!,
      'site-packages'
    );
    const early = await structuralSearch('$A.$B', {
      workspace: corpus,
      path: '.',
      language: 'python',
      signal: new AbortController().signal,
      maxMatches: 2_000
    });
    expect([early.matches.length, early.truncated]).toEqual([2_000, true]);
    expect(early.filesSearched).toBeLessThan(5_000);
  });

  it('ast_grep: the title says N+ and the output says where to narrow', async () => {
    const ws = await fixtureRepo({ 'many.py': 'f(1)\n'.repeat(MAX_SEARCH_MATCHES + 1) });
    const r = await registry.call('ast_grep', { pattern: 'f($X)', max_results: 1 }, ctxFor(ws));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.title).toBe(`f($X): ${MAX_SEARCH_MATCHES}+ matches`);
    expect(r.output).toContain(
      `The search stopped at ${MAX_SEARCH_MATCHES.toLocaleString('en-US')} matches: there are more`
    );
    expect(r.metadata).toMatchObject({ total: MAX_SEARCH_MATCHES, stoppedAt: MAX_SEARCH_MATCHES });
  }, 60_000);
});
