/**
 * The ast-grep CLI as the door for plain files (`sg-cli.ts`, SPEC AST-3/AST-2, issue #11's
 * speed target): it must report exactly what napi reports — offsets in UTF-16, columns,
 * captures with only the named nodes of a `$$$` run, rewrite spans — in every language, and
 * it must run on Cellmate's terms only (its own config, never a workspace's; files named one
 * by one; killed on abort).
 */
import { chmodSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findSgCli, sgCli } from '../../src/structural/sg-cli.js';
import { structuralSearch, type SearchScope, type StructuralMatch } from '../../src/structural/search.js';
import { tempDir } from '../helpers/temp.js';
import { fixtureRepo } from './fixture.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const lib = path.join(repo, '.venv', 'lib');
const corpus = path.join(
  lib,
  readdirSync(lib).find((d) => d.startsWith('python'))!,
  'site-packages'
);

const search = (workspace: string, pattern: string, more: Partial<SearchScope> = {}) =>
  structuralSearch(pattern, { workspace, path: '.', signal: new AbortController().signal, ...more });

const shape = (m: StructuralMatch) => ({
  file: m.doc.file,
  start: m.start,
  end: m.end,
  line: m.line,
  column: m.column,
  text: m.text,
  captures: m.captures,
  spans: m.spans,
  spanRanges: m.spanRanges
});

const FILES: Record<string, string> = {
  'uni.py': 'x = "é😀"; foo(1)\n名前 = foo("日本", b)\r\nfoo(a,  # note\n    *rest, k=2,\n)\n\tfoo()\n',
  'defs.py':
    'def g(a, *, b):\n    return a\n\ndef h(p, /, q=1, **kw):\n    pass\nfrom x import (p, q)\nfrom y import r, s\n',
  'UPPER.PY': 'foo(up)\n',
  'app.js': 'console.log("é", 1);\nconst o = { a: 1, b: [2, 3], };\nfunction f(a, b = "😀") { return a; }\n',
  'mod.ts': 'function add(a: number, b: number): number {\n  return a + b;\n}\nconsole.log(add(1, 2));\n',
  'view.tsx': 'export const V = () => <div title="é">{foo(1)}</div>;\n'
};

describe('the CLI door reports what napi reports (AST-2, AST-3)', () => {
  it('runs here: the pinned @ast-grep/cli platform binary', () => {
    const cli = sgCli();
    expect(cli).toBeDefined();
    const pinned = (createRequire(import.meta.url)('@ast-grep/cli/package.json') as { version: string }).version;
    expect(cli!.version).toBe(`ast-grep ${pinned}`);
    expect(readFileSync(cli!.config, 'utf8')).toContain('tree_sitter_python');
  });

  it("a wheel's CLI is found in $CELLMATE_TOOL_BINS (PyPI ast-grep-cli), but only napi's own minor release", async () => {
    const good = await tempDir();
    symlinkSync(sgCli()!.binary, path.join(good, 'ast-grep'));
    const old = await tempDir();
    writeFileSync(path.join(old, 'ast-grep'), '#!/bin/sh\necho "ast-grep 0.40.0"\n');
    chmodSync(path.join(old, 'ast-grep'), 0o755);
    expect(findSgCli({ CELLMATE_TOOL_BINS: old }, { npm: false })).toBeUndefined();
    const found = findSgCli({ CELLMATE_TOOL_BINS: [old, good].join(path.delimiter) }, { npm: false });
    expect(found?.binary).toBe(path.join(good, 'ast-grep'));
    expect(findSgCli({ CELLMATE_TOOL_BINS: good, CELLMATE_STRUCTURAL_ENGINE: 'napi' })).toBeUndefined();
    expect(findSgCli({}, { npm: false })).toBeUndefined();
  });

  it.each([
    ['foo($$$A)', undefined],
    ['foo($X)', undefined],
    ['$A = $B', 'python'],
    ['def $F($$$P):\n    $$$B', undefined],
    ['from $M import $$$N', undefined],
    ['console.log($$$A)', undefined],
    ['{ $$$P }', 'javascript'],
    ['function $F($$$P) { $$$B }', undefined],
    ['$A + $B', 'typescript'],
    ['foo($X)', 'tsx'],
    ['<div title="é">{$$$C}</div>', 'tsx']
  ] as const)('%s (%s)', async (pattern, language) => {
    const ws = await fixtureRepo(FILES);
    const scope = language ? { language } : {};
    const cli = await search(ws, pattern, { ...scope, engine: 'cli' });
    const napi = await search(ws, pattern, { ...scope, engine: 'napi' });
    expect(cli.matches.length).toBeGreaterThan(0);
    expect(cli.parsed.cli).toBeGreaterThan(0);
    expect(napi.parsed.cli).toBe(0);
    expect(cli.matches.map(shape)).toEqual(napi.matches.map(shape));
    expect(cli.rungs).toEqual(napi.rungs);
  });

  it('offsets and columns count UTF-16 units; a $$$ run captures its named nodes only, comments and `*` included', async () => {
    const ws = await fixtureRepo(FILES);
    const r = await search(ws, 'foo($$$A)', { language: 'python', engine: 'cli' });
    const byText = new Map(r.matches.map((m) => [`${m.doc.file}:${m.text}`, m]));
    const one = byText.get('uni.py:foo(1)')!;
    expect([one.line, one.column, one.start]).toEqual([1, 12, 11]);
    expect(one.doc.source.slice(one.start, one.end)).toBe('foo(1)');
    const jp = byText.get('uni.py:foo("日本", b)')!;
    expect([jp.line, jp.column, jp.captures.A]).toEqual([2, 6, ['"日本"', 'b']]);
    const multi = byText.get('uni.py:foo(a,  # note\n    *rest, k=2,\n)')!;
    expect(multi.captures.A).toEqual(['a', '# note', '*rest', 'k=2']);
    expect(multi.spans.A).toBe('a,  # note\n    *rest, k=2,');
    const empty = byText.get('uni.py:foo()')!;
    expect([empty.column, empty.captures.A, empty.spans.A]).toEqual([2, [], '']);
    // UPPER.PY: the CLI matches extensions as written, so napi takes that file.
    expect(byText.has('UPPER.PY:foo(up)')).toBe(true);
    expect(r.parsed).toMatchObject({ cli: 1, napi: 1 });
    const defs = await search(ws, 'def $F($$$P):\n    $$$B', { engine: 'cli' });
    expect(defs.matches.map((m) => m.captures.P)).toEqual([
      ['a', '*', 'b'],
      ['p', '/', 'q=1', '**kw']
    ]);
    const froms = await search(ws, 'from $M import $$$N', { engine: 'cli' });
    expect(froms.matches.map((m) => m.captures.N)).toEqual([
      ['p', 'q'],
      ['r', 's']
    ]);
  });

  it("Cellmate's own metavariables never collide with the pattern's", async () => {
    const ws = await fixtureRepo({ 'a.py': 'foo(x, y)\nfoo(z)\n' });
    const pattern = '$CMNODE($$$CMNAMED0X)';
    const cli = await search(ws, pattern, { engine: 'cli' });
    const napi = await search(ws, pattern, { engine: 'napi' });
    expect(cli.matches.map((m) => m.captures)).toEqual([
      { CMNODE: 'foo', CMNAMED0X: ['x', 'y'] },
      { CMNODE: 'foo', CMNAMED0X: ['z'] }
    ]);
    expect(cli.matches.map(shape)).toEqual(napi.matches.map(shape));
  });
});

describe("the CLI runs on Cellmate's terms (AST-3, security)", () => {
  it("a workspace's sgconfig.yml, .ignore and hidden files change nothing: its native library is never loaded", async () => {
    const ws = await fixtureRepo({
      // Were this config read with custom languages allowed, the CLI would dlopen ./evil.so (and fail here).
      'sgconfig.yml':
        'ruleDirs: [rules]\ncustomLanguages:\n  python:\n    libraryPath: ./evil.so\n    extensions: [py]\n',
      'rules/r.yml': 'id: x\nlanguage: python\nrule: { pattern: $A }\n',
      '.ignore': '*.py\n',
      '.hidden.py': 'h += 1\n',
      'a.py': 'a += 1\n',
      'sub/.gitignore': '!*.py\n',
      'sub/b.py': 'b += 1\n'
    });
    const r = await search(ws, '$A += $B', { engine: 'cli' });
    expect(r.matches.map((m) => `${m.doc.file}:${m.text}`)).toEqual([
      '.hidden.py:h += 1',
      'a.py:a += 1',
      'sub/b.py:b += 1'
    ]);
    expect(r.parsed).toEqual({ cli: 3, napi: 0, main: 0 });
  });

  it('the CLI runs with an empty environment (no API key reaches it); an abort kills it and no ast-grep process is left', async () => {
    process.env.CELLMATE_TEST_API_KEY = 'sk-not-for-children';
    const controller = new AbortController();
    const pending = structuralSearch('$A[$B] = $C', {
      workspace: corpus,
      path: '.',
      language: 'python',
      signal: controller.signal,
      engine: 'cli'
    });
    const children = (): string[] =>
      readdirSync('/proc')
        .filter((d) => /^\d+$/.test(d))
        .flatMap((pid) => {
          let stat: string;
          try {
            stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          } catch {
            return [];
          }
          // pid (comm) state ppid …
          const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
          const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
          return ppid === process.pid && comm.startsWith('ast-grep') ? [`${pid} ${comm}`] : [];
        });
    // Read a running CLI's environment (a batch may end between two looks), then abort.
    let environ: string | undefined;
    for (let i = 0; i < 400 && environ === undefined; i++) {
      for (const child of children()) {
        try {
          environ = readFileSync(`/proc/${child.split(' ')[0]}/environ`, 'utf8');
          break;
        } catch {
          // it ended: look again
        }
      }
      if (environ === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    delete process.env.CELLMATE_TEST_API_KEY;
    expect(environ).toBe('');
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    for (let i = 0; i < 40 && children().length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(children()).toEqual([]);
  });
});
