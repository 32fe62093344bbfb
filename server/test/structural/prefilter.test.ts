/**
 * The literal-word prefilter of structural search (SPEC AST-3, `ladder.ts` `words`): a
 * document is parsed only when its text holds every named leaf of the pattern that is not a
 * metavariable. The prefilter must never lose a match, so the counts are checked against the
 * `sg` CLI (@ast-grep/cli, the same engine without any prefilter) on real code: pip's sources
 * in the project's venv, 491 files. (Patterns with no word at all: `native-search.test.ts`.)
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compilePattern } from '../../src/structural/ladder.js';
import { structuralSearch } from '../../src/structural/search.js';

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

describe('literal words of a pattern (AST-3)', () => {
  it('are its named leaves that are not metavariables, comments or strings holding one', () => {
    const words = (p: string, l: 'python' | 'typescript' = 'python') =>
      [...compilePattern(p, l).rungs[0]!.words].sort();
    expect(words('if $X is not None: $X.close()')).toEqual(['None', 'close', 'if', 'is', 'not']);
    expect(words('isinstance($X, $T)')).toEqual(['isinstance']);
    expect(words('$F($$$A)')).toEqual([]);
    expect(words('print(f"{$X}")')).toEqual(['"', 'f"', 'print']);
    expect(words('logger.warning($MSG, 3)')).toEqual(['3', 'logger', 'warning']);
    expect(words('const $A = require("fs")', 'typescript')).toEqual(['fs', 'require']);
    // Python keywords and operators of 2+ characters; not one-character tokens, not the spaced aliases.
    expect(words('$A += $B')).toEqual(['+=']);
    expect(words('$A if $B else $C')).toEqual(['else', 'if']);
    expect(words('$A[$B] = $C')).toEqual([]);
    // TypeScript's unnamed tokens are matched by kind alone (ast-grep): never words.
    expect(words('$A += $B', 'typescript')).toEqual([]);
  });
});

describe('the prefilter loses no match (AST-3, against sg on real code)', () => {
  it.each([
    'isinstance($X, $T)',
    '$A.append($B)',
    'raise $E from $C',
    'return None',
    'with open($P) as $F: $$$B',
    'logger.debug($$$A)',
    '"utf-8"'
  ])('%s', async (pattern) => {
    const ours = await structuralSearch(pattern, {
      workspace: corpus,
      path: '.',
      language: 'python',
      signal: new AbortController().signal
    });
    const out = execFileSync(
      sg,
      ['run', '--pattern', pattern, '--lang', 'python', '--json=stream', '--no-ignore', 'parent', '.'],
      { cwd: corpus, maxBuffer: 1 << 28 }
    );
    const theirs = out.toString('utf8').split('\n').filter(Boolean).length;
    expect(theirs).toBeGreaterThan(0);
    expect(ours.matches.length).toBe(theirs);
  });
});
