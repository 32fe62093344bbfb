/**
 * Structural search off the main thread (`native-search.ts`, SPEC AST-3/AST-4/AST-6): plain
 * source files are parsed and matched in batches by the ast-grep CLI (`sg-cli.ts`) or by
 * napi's `findInFiles`, notebook cells and files that are not valid UTF-8 on the main
 * thread. Results must be what they were, through either door: the same matches as the
 * `sg` CLI run by hand on real code for patterns with no literal word (nothing prefilters
 * them, every file is parsed); Cellmate's own file rules where they differ from ast-grep's
 * walker; one ladder rung across the engines.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { SourceDocument } from '../../src/structural/documents.js';
import { compilePattern } from '../../src/structural/ladder.js';
import { captureNames, type RungState } from '../../src/structural/matches.js';
import { NativeSearch } from '../../src/structural/native-search.js';
import { structuralSearch, type SearchScope } from '../../src/structural/search.js';
import { codeCell, fixtureRepo, notebookJson } from './fixture.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const lib = path.join(repo, '.venv', 'lib');
const corpus = path.join(
  lib,
  readdirSync(lib).find((d) => d.startsWith('python'))!,
  'site-packages',
  'pip'
);
const sg = ['ast-grep', 'sg']
  .map((b) => path.join(repo, 'node_modules', '@ast-grep', 'cli', b))
  .find((b) => spawnSync(b, ['--version']).status === 0)!;

const search = (workspace: string, pattern: string, more: Partial<SearchScope> = {}) =>
  structuralSearch(pattern, { workspace, path: '.', signal: new AbortController().signal, ...more });

interface SgMatch {
  file: string;
  text: string;
  range: { start: { line: number } };
  metaVariables: { single: Record<string, { text: string }>; multi: Record<string, Array<{ text: string }>> };
}

const sgMatches = (pattern: string): string[] => {
  const names = captureNames(pattern)
    .filter((n) => !n.multi)
    .map((n) => n.name);
  const out = execFileSync(
    sg,
    ['run', '--pattern', pattern, '--lang', 'python', '--json=stream', '--no-ignore', 'parent', '.'],
    { cwd: corpus, maxBuffer: 1 << 28 }
  );
  return out
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as SgMatch)
    .map((m) =>
      [
        m.file.replace(/^\.\//, ''),
        m.range.start.line + 1,
        m.text,
        ...names.map((n) => m.metaVariables.single[n]?.text)
      ].join('\u0000')
    );
};

const ourMatches = async (pattern: string, engine: 'cli' | 'napi'): Promise<string[]> => {
  const names = captureNames(pattern)
    .filter((n) => !n.multi)
    .map((n) => n.name);
  const ours = await search(corpus, pattern, { language: 'python', engine });
  expect(ours.rungs.python?.used).toBe('statement');
  // The door asked for parsed the files (a CLI that failed would have left them to napi).
  expect(ours.parsed[engine === 'cli' ? 'napi' : 'cli']).toBe(0);
  expect(ours.parsed[engine]).toBeGreaterThan(0);
  return ours.matches.map((m) => [m.doc.file, m.line, m.text, ...names.map((n) => m.captures[n])].join('\u0000'));
};

describe.each(['cli', 'napi'] as const)(
  'patterns with no literal word: every match as sg reports it (AST-3, pip sources; %s)',
  (engine) => {
    it.each(['$A[$B] = $C', '$F($$$ARGS)', '$A.$B = $C', '[$$$E]'])('%s', async (pattern) => {
      expect(compilePattern(pattern, 'python').rungs.map((r) => r.words)).toEqual(
        compilePattern(pattern, 'python').rungs.map(() => [])
      );
      const theirs = sgMatches(pattern);
      expect(theirs.length).toBeGreaterThan(0);
      expect((await ourMatches(pattern, engine)).sort()).toEqual(theirs.sort());
    });
  }
);

describe.each(['cli', 'napi'] as const)(
  'Python keywords and operators as prefilter words lose no match (AST-3, pip sources; %s)',
  (engine) => {
    it.each([
      '$A += $B',
      'lambda $$$P: $B',
      '$A if $B else $C',
      'not $X',
      '$X not in $Y',
      '$X is not $Y',
      '$A ** $B',
      'try:\n    $$$B\nexcept $E:\n    $$$H'
    ])('%s', async (pattern) => {
      expect(compilePattern(pattern, 'python').rungs[0]!.words.length).toBeGreaterThan(0);
      const theirs = sgMatches(pattern);
      expect(theirs.length).toBeGreaterThan(0);
      expect((await ourMatches(pattern, engine)).sort()).toEqual(theirs.sort());
    });
  }
);

describe('prefilter words, spacing', () => {
  it('the spaced operators keep matching however they are spaced', async () => {
    const ws = await fixtureRepo({ 'a.py': 'x = a not  in b\ny = c is   not d\nz = e not in f\n' });
    expect((await search(ws, '$X not in $Y')).matches.map((m) => m.text)).toEqual(['a not  in b', 'e not in f']);
    expect((await search(ws, '$X is not $Y')).matches.map((m) => m.text)).toEqual(['c is   not d']);
  });

  it('a pattern that matches nothing reports none', async () => {
    const r = await search(corpus, '$A @= $B', { language: 'python' });
    expect(r.matches).toEqual([]);
    expect(r.filesSearched).toBeGreaterThan(400);
    // sg exits 1 when nothing matches.
    const out = spawnSync(
      sg,
      ['run', '--pattern', '$A @= $B', '--lang', 'python', '--json=stream', '--no-ignore', 'parent', '.'],
      { cwd: corpus }
    );
    expect(out.error).toBeUndefined();
    expect(out.stdout.toString('utf8').trim()).toBe('');
  });
});

describe.each(['cli', 'napi'] as const)("Cellmate's file rules, not ast-grep's walker (AST-3, AST-6; %s)", (engine) => {
  it('ignores, skipped folders, binaries, big files and the policy apply; hidden folders, stubs, notebooks and non-UTF-8 files are searched', async () => {
    const ws = await fixtureRepo({
      '.gitignore': 'gen/\n',
      'a.py': 'a += 1\n',
      'gen/g.py': 'g += 1\n',
      'node_modules/n.py': 'n += 1\n',
      '.venv/v.py': 'v += 1\n',
      '.cellmate/c.py': 'c += 1\n',
      '.hidden/h.py': 'h += 1\n',
      'stub.pyi': 's += 1\n',
      'withheld.py': 'w += 1\n',
      noext: 'x += 1\n',
      'nb.ipynb': notebookJson([codeCell('k1', '%time\nk += 1\n')])
    });
    // Latin-1 bytes are not UTF-8: ast-grep's reader would skip the file; the main thread decodes it.
    await writeFile(path.join(ws, 'latin1.py'), Buffer.from('name = "caf\xe9"\nl += 1\n', 'latin1'));
    await writeFile(path.join(ws, 'bin.py'), Buffer.concat([Buffer.from('b += 1\n'), Buffer.alloc(16)]));
    await writeFile(path.join(ws, 'big.py'), `${'# pad\n'.repeat(900_000)}big += 1\n`);
    const r = await search(ws, '$A += $B', { engine, allowed: (rel) => rel !== 'withheld.py' });
    expect(
      r.matches.map((m) => `${m.doc.file}${m.doc.cell ? `#${m.doc.cell.index}` : ''}:${m.line}:${m.text}`)
    ).toEqual([
      '.hidden/h.py:1:h += 1',
      'a.py:1:a += 1',
      'latin1.py:2:l += 1',
      'nb.ipynb#0:2:k += 1',
      'stub.pyi:1:s += 1'
    ]);
    expect(r.matches.find((m) => m.doc.file === 'latin1.py')!.doc.source).toBe('name = "caf\uFFFD"\nl += 1\n');
    expect(r.withheld).toBe(1);
    expect(r.filesSearched).toBe(5);
  });

  it('a pattern with hundreds of thousands of matches returns every one (no spread of them on the call stack)', async () => {
    const ws = await fixtureRepo({ 'many.py': 'f(1)\n'.repeat(300_000) });
    const r = await search(ws, 'f($X)', { engine });
    expect(r.matches.length).toBe(300_000);
    expect(r.matches[299_999]!.line).toBe(300_000);
  }, 60_000);

  it('a staged search keeps the text of every file with a match, as read (ast_edit snapshots)', async () => {
    const ws = await fixtureRepo({ 'a.py': '\n\n  # lead\nx = 1\nx += 1\n', 'b.py': 'y = 2\n' });
    const r = await search(ws, '$A += $B', { engine, keepTexts: true });
    expect([...r.texts]).toEqual([['a.py', '\n\n  # lead\nx = 1\nx += 1\n']]);
    expect(r.matches.map((m) => [m.start, m.end, m.line, m.column])).toEqual([[17, 23, 5, 1]]);
  });
});

describe.each(['cli', 'napi'] as const)('one ladder rung per language across the engines (AST-4; %s)', (engine) => {
  it('an assignment anywhere makes timeout=$T a statement: the keyword arguments are not reported', async () => {
    const ws = await fixtureRepo({ 'a.py': 'f(timeout=3)\n', 'b.py': 'timeout = 5\n' });
    const r = await search(ws, 'timeout=$T', { engine });
    expect(r.rungs.python?.used).toBe('statement');
    expect(r.matches.map((m) => `${m.doc.file}:${m.text}:${String(m.captures.T)}`)).toEqual(['b.py:timeout = 5:5']);
  });

  it('no assignment: the keyword arguments of every file, each with its capture', async () => {
    const ws = await fixtureRepo({ 'a.py': 'f(timeout=3)\n', 'c.py': 'g(1, timeout=t.x)\n' });
    const r = await search(ws, 'timeout=$T', { engine });
    expect(r.rungs.python?.used).toBe('expression');
    expect(r.matches.map((m) => `${m.doc.file}:${m.text}:${String(m.captures.T)}`)).toEqual([
      'a.py:timeout=3:3',
      'c.py:timeout=t.x:t.x'
    ]);
  });

  it.each([
    ['the notebook assigns', 'timeout = 5', 'f(timeout=3)\n', ['nb.ipynb:timeout = 5']],
    ['the file assigns', 'f(timeout=3)', 'timeout = 5\n', ['a.py:timeout = 5']]
  ])('a notebook (main thread) and a file (Rust threads) agree on the rung: %s', async (_, cell, file, expected) => {
    const ws = await fixtureRepo({ 'nb.ipynb': notebookJson([codeCell('k1', cell)]), 'a.py': file });
    const r = await search(ws, 'timeout=$T', { engine });
    expect(r.rungs.python?.used).toBe('statement');
    expect(r.matches.map((m) => `${m.doc.file}:${m.text}`)).toEqual(expected);
  });
});

describe.each(['cli', 'napi'] as const)('NativeSearch when ast-grep cannot be taken at its word (%s)', (engine) => {
  const setup = (pattern: string) => {
    const compiled = compilePattern(pattern, 'python');
    const state: RungState = { best: compiled.rungs.length, byRung: compiled.rungs.map(() => []) };
    const fallbacks: SourceDocument[] = [];
    const hits: string[] = [];
    const native = new NativeSearch({
      signal: new AbortController().signal,
      pattern,
      names: captureNames(pattern),
      engine,
      ladder: () => ({ compiled, state }),
      onHit: (rel) => hits.push(rel),
      fallback: async (doc) => {
        fallbacks.push(doc);
        return true;
      }
    });
    return { compiled, state, fallbacks, hits, native };
  };

  it("a file that changed between our read and ast-grep's is searched on the text we read", async () => {
    const ws = await fixtureRepo({ 'same.py': 'x += 1\n', 'moved.py': 'x += 1\n' });
    const { state, fallbacks, hits, native } = setup('$A += $B');
    await native.add({
      rel: 'same.py',
      absolute: path.join(ws, 'same.py'),
      bytes: Buffer.from('x += 1\n'),
      language: 'python',
      live: [0]
    });
    await native.add({
      rel: 'moved.py',
      absolute: path.join(ws, 'moved.py'),
      bytes: Buffer.from('# new\ny += 2\n'),
      language: 'python',
      live: [0]
    });
    await native.finish();
    expect(state.byRung[0]!.map((m) => `${m.doc.file}:${m.text}`)).toEqual(['same.py:x += 1']);
    expect(fallbacks.map((d) => [d.file, d.source])).toEqual([['moved.py', '# new\ny += 2\n']]);
    expect(hits.sort()).toEqual(['moved.py', 'same.py']);
  });

  it('a batch ast-grep refuses is searched on the main thread, file by file', async () => {
    const ws = await fixtureRepo({ 'a.py': 'x += 1\n', 'b.py': 'y += 1\n' });
    const { compiled, fallbacks, native } = setup('$A += $B');
    compiled.rungs[0]!.matcher = { rule: { pattern: { context: 'x += 1', selector: 'no_such_kind' } } };
    for (const f of ['a.py', 'b.py'])
      await native.add({
        rel: f,
        absolute: path.join(ws, f),
        bytes: Buffer.from('x += 1\n'),
        language: 'python',
        live: [0]
      });
    await native.finish();
    expect(fallbacks.map((d) => d.file)).toEqual(['a.py', 'b.py']);
    // The CLI's refusal, kept; napi then refused too, and the main thread searched.
    if (engine === 'cli') expect(String(native.cliFailure)).toMatch(/ast-grep exited with \d+: .*no_such_kind/s);
    expect(native.parsed).toEqual({ cli: 0, napi: 2 });
  });
});

describe('cancellation (AbortSignal)', () => {
  it('an abort during a search over hundreds of files rejects it with the abort reason', async () => {
    const controller = new AbortController();
    const pending = structuralSearch('$A += $B', {
      workspace: corpus,
      path: '.',
      language: 'python',
      signal: controller.signal
    });
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('an already aborted signal searches nothing', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      structuralSearch('$A += $B', { workspace: corpus, path: '.', signal: controller.signal })
    ).rejects.toMatchObject({ name: 'AbortError' });
  });
});
