import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { PathRefusedError } from '../../src/base/tool-errors.js';
import { isInside, resolveWorkspacePath } from '../../src/workspace/workspace-path.js';
import { tempDir } from '../helpers/temp.js';

let root: string;
let ws: string;

beforeEach(async () => {
  root = await tempDir();
  ws = path.join(root, 'ws');
  await mkdir(path.join(ws, 'sub', 'deep'), { recursive: true });
  await writeFile(path.join(ws, 'notes.md'), 'hello\n');
  await writeFile(path.join(ws, 'sub', 'deep', 'x.txt'), 'x\n');
  await writeFile(path.join(ws, '..dotdot-name'), 'fine\n');
  await writeFile(path.join(root, 'secret.txt'), 'top secret\n');
  await mkdir(path.join(root, 'ws-sibling'));
  await symlink('/etc', path.join(ws, 'etc-link'));
  await symlink('/etc/passwd', path.join(ws, 'passwd-link'));
  await symlink(path.join(root, 'secret.txt'), path.join(ws, 'secret-link'));
  await symlink('../secret.txt', path.join(ws, 'relative-secret-link'));
  await symlink('loop-b', path.join(ws, 'loop-a'));
  await symlink('loop-a', path.join(ws, 'loop-b'));
  await symlink(path.join(root, 'does-not-exist'), path.join(ws, 'dangling-out'));
  await symlink('nowhere-inside', path.join(ws, 'dangling-in'));
  await symlink(root, path.join(ws, 'parent-dir-link'));
  await symlink('sub/deep', path.join(ws, 'inside-link'));
});

describe('resolveWorkspacePath refuses hostile paths', () => {
  const hostile: Array<[label: string, input: () => string]> = [
    ['parent escape', () => '../secret.txt'],
    ['double parent', () => '../../etc/passwd'],
    ['.. in the middle climbing out', () => 'sub/../../secret.txt'],
    ['.. deep in the middle', () => 'sub/deep/../../../secret.txt'],
    ['absolute outside', () => '/etc/passwd'],
    ['absolute sibling with shared prefix', () => path.join(root, 'ws-sibling')],
    ['absolute parent of workspace', () => root],
    ['filesystem root', () => '/'],
    ['symlink to /etc (dir)', () => 'etc-link'],
    ['through symlink to /etc', () => 'etc-link/passwd'],
    ['symlink to /etc/passwd', () => 'passwd-link'],
    ['absolute symlink out', () => 'secret-link'],
    ['relative symlink out', () => 'relative-secret-link'],
    ['symlink loop', () => 'loop-a'],
    ['through symlink loop', () => 'loop-a/file.txt'],
    ['dangling symlink pointing out', () => 'dangling-out'],
    ['dangling symlink inside', () => 'dangling-in'],
    ['symlink to parent dir', () => 'parent-dir-link/secret.txt'],
    ['new file under symlinked parent', () => 'parent-dir-link/new-file.txt'],
    ['NUL byte', () => 'notes.md\0../../etc/passwd'],
    ['NUL byte alone', () => '\0'],
    ['empty path', () => ''],
    [
      'absolute with .. escaping',
      () => path.join(ws, '..', 'secret.txt').replace(`${root}/secret.txt`, `${ws}/../secret.txt`)
    ]
  ];

  it.each(hostile)('%s', async (_label, input) => {
    const value = input();
    const promise = resolveWorkspacePath(ws, value);
    await expect(promise).rejects.toBeInstanceOf(PathRefusedError);
    await expect(promise).rejects.toThrow(ws);
  });

  it('names the path and the workspace in the message', async () => {
    await expect(resolveWorkspacePath(ws, '../secret.txt')).rejects.toThrow(
      `Refused: "../secret.txt" is outside the workspace ${ws}. Paths must stay inside the workspace.`
    );
  });

  it('refuses non-string input', async () => {
    await expect(resolveWorkspacePath(ws, 42)).rejects.toBeInstanceOf(PathRefusedError);
  });
});

describe('resolveWorkspacePath accepts paths inside', () => {
  const fine: Array<[label: string, input: () => string, relative: string, exists: boolean]> = [
    ['plain relative', () => 'notes.md', 'notes.md', true],
    ['dot slash', () => './notes.md', 'notes.md', true],
    ['.. that stays inside', () => 'sub/../notes.md', 'notes.md', true],
    ['absolute inside', () => path.join(ws, 'notes.md'), 'notes.md', true],
    ['name starting with ..', () => '..dotdot-name', '..dotdot-name', true],
    ['symlink inside the workspace', () => 'inside-link/x.txt', 'sub/deep/x.txt', true],
    ['workspace root', () => '.', '.', true],
    ['percent-encoded dots stay literal', () => '%2e%2e/secret.txt', '%2e%2e/secret.txt', false],
    ['tilde stays literal', () => '~/secret.txt', '~/secret.txt', false],
    ['missing file inside', () => 'sub/new.txt', 'sub/new.txt', false]
  ];

  it.each(fine)('%s', async (_label, input, relative, exists) => {
    const resolved = await resolveWorkspacePath(ws, input());
    expect(resolved.relative).toBe(relative);
    expect(resolved.exists).toBe(exists);
    expect(isInside(ws, resolved.absolute)).toBe(true);
  });

  it('accepts the workspace given through a symlink, by either path', async () => {
    const alias = path.join(root, 'ws-alias');
    await symlink(ws, alias);
    expect((await resolveWorkspacePath(alias, 'notes.md')).absolute).toBe(path.join(ws, 'notes.md'));
    expect((await resolveWorkspacePath(alias, path.join(alias, 'notes.md'))).relative).toBe('notes.md');
    expect((await resolveWorkspacePath(alias, path.join(ws, 'notes.md'))).relative).toBe('notes.md');
    await expect(resolveWorkspacePath(alias, '../secret.txt')).rejects.toBeInstanceOf(PathRefusedError);
  });
});

describe('isInside', () => {
  it.each([
    ['/a/b', '/a/b', true],
    ['/a/b', '/a/b/c', true],
    ['/a/b', '/a/bc', false],
    ['/a/b', '/a', false],
    ['/a/b', '/a/b/..c', true]
  ])('%s contains %s: %s', (rootPath, candidate, expected) => {
    expect(isInside(rootPath, candidate)).toBe(expected);
  });
});
