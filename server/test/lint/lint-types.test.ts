import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';

// The type-honesty lint `scripts/test` runs: explicit `any` and `as unknown as` need a why-comment on the line above.

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const script = path.join(repo, 'scripts/lint-types.mjs');

async function lint(...files: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [script, ...files], { cwd: repo });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

async function source(name: string, text: string): Promise<string> {
  const file = path.join(await tempDir('cellmate-lint-'), name);
  await writeFile(file, text);
  return file;
}

describe('lint-types', () => {
  it('fails on an explicit any and on an unexplained double cast, naming each line', async () => {
    const file = await source(
      'bad.ts',
      [
        'export function f(value: any): number {',
        '  const n = value as unknown as number;',
        '  const m = <number>(<unknown>value);',
        '  const k = (value as unknown) as number;',
        '  return n + m + k;',
        '}',
        ''
      ].join('\n')
    );
    const result = await lint(file);
    expect(result.code).toBe(1);
    const lines = result.stderr.split('\n').filter((l) => l.includes('bad.ts:'));
    expect(lines.map((l) => l.replace(/^.*bad\.ts:/, ''))).toEqual([
      '1: explicit `any`: type it, or say why on the line above',
      '2: `as unknown as` without a comment on the line above saying why',
      '3: `as unknown as` without a comment on the line above saying why',
      '4: `as unknown as` without a comment on the line above saying why'
    ]);
    expect(result.stderr).toContain('lint-types: 4 problems in 1 files');
  });

  it('passes the same code when a comment on the line above says why, and ignores "any" in words and names', async () => {
    const file = await source(
      'explained.ts',
      [
        '// any: the callback receives whatever the host library passes (typed upstream as any).',
        'export function f(value: any): number {',
        '  /* The value is a count by contract of the caller; see f. */',
        '  const n = value as unknown as number;',
        '  const anyCount = n; // any number at all',
        "  const words = 'as unknown as any';",
        '  return anyCount + words.length;',
        '}',
        ''
      ].join('\n')
    );
    const result = await lint(file);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  it('a comment above the statement explains a cast the formatter wrapped onto a later line, but not one in a later statement', async () => {
    const file = await source(
      'wrapped.ts',
      [
        'export function f(value: unknown, log: (n: number, m: number) => void): void {',
        '  // The value is a count by contract of the caller.',
        '  log(',
        '    value as unknown as number,',
        '    1',
        '  );',
        '  log(',
        '    value as unknown as number,',
        '    2',
        '  );',
        '}',
        ''
      ].join('\n')
    );
    const result = await lint(file);
    expect(result.stderr.split('\n').filter((l) => l.includes('wrapped.ts:'))).toEqual([
      expect.stringMatching(/wrapped\.ts:8: `as unknown as` without a comment/)
    ]);
    expect(result.code).toBe(1);
  });

  it('passes on the repository as it is', async () => {
    const result = await lint();
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^lint-types: \d+ files, no unexplained any or double casts/);
  });
});
