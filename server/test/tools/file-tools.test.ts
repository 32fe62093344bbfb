import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeEditFs, type EditFs } from '../../src/edits/index.js';
import { createApplyPatchTool } from '../../src/tools/apply_patch/apply_patch.js';
import { builtinTools } from '../../src/tools/index.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { tempDir } from '../helpers/temp.js';

const registry = new ToolRegistry(builtinTools());
const ctxFor = (workspace: string) => ({
  workspace,
  signal: new AbortController().signal,
  actor: 'model' as const,
  chatId: 'c'
});

async function workspace(files: Record<string, string> = {}): Promise<string> {
  const ws = await tempDir();
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(ws, name)), { recursive: true });
    await writeFile(path.join(ws, name), text);
  }
  return ws;
}

describe('edit (HARN-2: no normalisation)', () => {
  const curly = 'She said “hello” and ‘bye’.\nHe said "hello".\n';

  it('curly quotes in old_string match curly quotes only', async () => {
    const ws = await workspace({ 'q.md': curly });
    const result = await registry.call('edit', { path: 'q.md', old_string: '“hello”', new_string: '“hi”' }, ctxFor(ws));
    expect(result).toMatchObject({
      ok: true,
      output: 'Edited q.md: replaced 1 occurrence at line 1 (1 lines → 1 lines).'
    });
    expect(await readFile(path.join(ws, 'q.md'), 'utf8')).toBe('She said “hi” and ‘bye’.\nHe said "hello".\n');
  });

  it('straight quotes do not match curly ones; the error says a near match differs in quotes', async () => {
    const ws = await workspace({ 'q.md': 'She said “hello”.\n' });
    const result = await registry.call(
      'edit',
      { path: 'q.md', old_string: 'said "hello"', new_string: 'x' },
      ctxFor(ws)
    );
    expect(result).toMatchObject({
      ok: false,
      output:
        'old_string was not found in q.md. A near match differs only in quote characters (curly vs straight) or whitespace near line 1. edit does not normalise: read that line and copy old_string exactly as the file has it.'
    });
    expect(await readFile(path.join(ws, 'q.md'), 'utf8')).toBe('She said “hello”.\n');
  });

  it('a missing match is a clear error', async () => {
    const ws = await workspace({ 'a.py': 'x = 1\n' });
    const result = await registry.call('edit', { path: 'a.py', old_string: 'y = 2', new_string: 'y = 3' }, ctxFor(ws));
    expect(result.output).toBe(
      'old_string was not found in a.py. Read the file and copy old_string exactly (no line-number prefixes), including indentation.'
    );
  });

  it('an ambiguous match names the lines', async () => {
    const ws = await workspace({ 'a.py': 'x = 1\ny = 2\nx = 1\n' });
    const result = await registry.call('edit', { path: 'a.py', old_string: 'x = 1', new_string: 'x = 9' }, ctxFor(ws));
    expect(result.output).toBe(
      'old_string occurs 2 times in a.py (lines 1, 3). Include more surrounding text so it occurs exactly once, or set replace_all to true.'
    );
    const all = await registry.call(
      'edit',
      { path: 'a.py', old_string: 'x = 1', new_string: 'x = 9', replace_all: true },
      ctxFor(ws)
    );
    expect(all.output).toBe('Edited a.py: replaced 2 occurrences (lines 1, 3) (1 lines → 1 lines).');
    expect(await readFile(path.join(ws, 'a.py'), 'utf8')).toBe('x = 9\ny = 2\nx = 9\n');
  });

  it('whitespace is exact (a tab does not match spaces)', async () => {
    const ws = await workspace({ 'a.py': 'if x:\n\treturn 1\n' });
    const result = await registry.call(
      'edit',
      { path: 'a.py', old_string: '    return 1', new_string: '    return 2' },
      ctxFor(ws)
    );
    expect(result.output).toMatch(/near match differs only in whitespace/);
  });
});

describe('apply_patch (all-or-nothing)', () => {
  const files = { 'a.py': 'one\ntwo\nthree\n', 'b.py': 'alpha\nbeta\n' };

  it('applies a multi-file patch', async () => {
    const ws = await workspace(files);
    const patch =
      '--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n--- a/b.py\n+++ b/b.py\n@@ -2,1 +2,2 @@\n beta\n+gamma\n--- /dev/null\n+++ b/c.py\n@@ -0,0 +1,1 @@\n+new\n';
    const result = await registry.call('apply_patch', { patch }, ctxFor(ws));
    expect(result).toMatchObject({ ok: true, output: 'M a.py (+1 −1)\nM b.py (+1 −0)\nA c.py (+1)' });
    expect(await readFile(path.join(ws, 'a.py'), 'utf8')).toBe('one\nTWO\nthree\n');
    expect(await readFile(path.join(ws, 'b.py'), 'utf8')).toBe('alpha\nbeta\ngamma\n');
    expect(await readFile(path.join(ws, 'c.py'), 'utf8')).toBe('new\n');
  });

  it('one bad hunk changes nothing, in any file', async () => {
    const ws = await workspace(files);
    const patch =
      '--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n--- a/b.py\n+++ b/b.py\n@@ -1,2 +1,2 @@\n alpha\n-BETA-NOT-THERE\n+beta2\n';
    const result = await registry.call('apply_patch', { patch }, ctxFor(ws));
    expect(result).toMatchObject({ ok: false });
    expect(result.output).toBe(
      'hunk 1 of b.py (@@ -1) does not apply: its context/removed lines are not in the file. Read the file and rebuild the hunk from its current text. Nothing was changed (all-or-nothing).'
    );
    expect(await readFile(path.join(ws, 'a.py'), 'utf8')).toBe(files['a.py']);
    expect(await readFile(path.join(ws, 'b.py'), 'utf8')).toBe(files['b.py']);
  });

  it('a write failing on the second file (fault injection) rolls the first back: nothing changed (edits/ applies it)', async () => {
    const ws = await workspace(files);
    const failing: EditFs = {
      ...nodeEditFs,
      write: async (abs, text) => {
        if (abs.endsWith('b.py')) throw new Error('EDQUOT: disk quota exceeded');
        return nodeEditFs.write(abs, text);
      }
    };
    const faulty = new ToolRegistry([createApplyPatchTool({ fs: failing })]);
    const patch =
      '--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n--- a/b.py\n+++ b/b.py\n@@ -2,1 +2,2 @@\n beta\n+gamma\n--- /dev/null\n+++ b/c.py\n@@ -0,0 +1,1 @@\n+new\n';
    const result = await faulty.call('apply_patch', { patch }, ctxFor(ws));
    expect(result).toMatchObject({
      ok: false,
      output:
        'Writing b.py failed (EDQUOT: disk quota exceeded). The 1 file already written (a.py) was restored: nothing was changed.'
    });
    expect(await readFile(path.join(ws, 'a.py'), 'utf8')).toBe(files['a.py']);
    expect(await readFile(path.join(ws, 'b.py'), 'utf8')).toBe(files['b.py']);
    expect((await readdir(ws)).sort()).toEqual(['a.py', 'b.py']);
  });

  it('a malformed patch is a clear error', async () => {
    const ws = await workspace(files);
    const result = await registry.call('apply_patch', { patch: 'just text' }, ctxFor(ws));
    expect(result.output).toMatch(/^The patch could not be parsed: no file headers found/);
  });
});

describe('grep and glob (HARN-3)', () => {
  it('grep returns path:line: snippet candidates with total and paging', async () => {
    const ws = await workspace({
      'src/a.py': 'def load():\n  pass\ndef save():\n',
      'src/b.py': 'def other():\n',
      'README.md': 'def in docs\n',
      'node_modules/x.js': 'def skipped\n'
    });
    const first = await registry.call('grep', { pattern: '^def ', limit: 2 }, ctxFor(ws));
    expect(first.output).toBe(
      'README.md:1: def in docs\nsrc/a.py:1: def load():\n(matches 1–2 of 4 in 3 files; call grep with offset=3 to continue)'
    );
    const next = await registry.call('grep', { pattern: '^def ', offset: 3 }, ctxFor(ws));
    expect(next.output).toBe('src/a.py:3: def save():\nsrc/b.py:1: def other():\n(matches 3–4 of 4 in 3 files)');
    const glob = await registry.call('grep', { pattern: 'def', glob: '*.md' }, ctxFor(ws));
    expect(glob.output).toBe('README.md:1: def in docs\n(1 match in 1 file)');
    // A long line's snippet is cut explicitly (HARN-2), the candidate naming the line to read.
    await writeFile(path.join(ws, 'long.txt'), `needle ${'z'.repeat(500)}\n`);
    const long = await registry.call('grep', { pattern: 'needle', glob: '*.txt' }, ctxFor(ws));
    expect(long.output).toBe(
      `long.txt:1: needle ${'z'.repeat(193)}… [cut: 307 of 507 characters not shown; read at this line for the rest]\n(1 match in 1 file)`
    );
    expect((await registry.call('grep', { pattern: 'def', offset: 9 }, ctxFor(ws))).output).toBe(
      'offset 9 is past the end (4 matches). Call grep with an offset between 1 and 4.'
    );
    const bad = await registry.call('grep', { pattern: '(' }, ctxFor(ws));
    expect(bad.output).toMatch(/^Invalid regular expression "\(":/);
  });

  it('glob lists file names only, and its description says it cannot search contents', async () => {
    const ws = await workspace({ 'a.ipynb': '{}', 'sub/b.ipynb': '{}', 'sub/c.py': '' });
    expect((await registry.call('glob', { pattern: '*.ipynb' }, ctxFor(ws))).output).toBe(
      'a.ipynb\nsub/b.ipynb\n(2 files)'
    );
    expect((await registry.call('glob', { pattern: 'sub/**/*.{py,ipynb}' }, ctxFor(ws))).output).toBe(
      'sub/b.ipynb\nsub/c.py\n(2 files)'
    );
    expect(registry.get('glob')!.description).toMatch(/cannot search file contents/);
  });
});

describe('shell (exec tier, output shaping)', () => {
  it('returns output and the exit code', async () => {
    const ws = await workspace();
    const result = await registry.call('shell', { command: 'echo out; echo err >&2; exit 3' }, ctxFor(ws));
    expect(result).toMatchObject({ ok: true, output: 'out\nerr\n[exit code 3]' });
  });

  it('a 50,000-line output reaches the model as head + tail with the saved file, and read pages it (HARN-4)', async () => {
    const ws = await workspace();
    const result = await registry.call('shell', { command: 'seq 1 50000' }, ctxFor(ws));
    const lines = result.output.split('\n');
    expect(lines).toHaveLength(101);
    expect(lines.slice(0, 3)).toEqual(['1', '2', '3']);
    expect(lines.at(-1)).toBe('[exit code 0]');
    expect(lines.at(-2)).toBe('50000');
    const omission = lines[50]!;
    const saved = /Full output saved to (\.cellmate\/outputs\/[A-Za-z0-9_-]+--shell-[^ ]+\.txt)/.exec(omission)![1]!;
    expect(omission).toBe(
      `… [49901 lines omitted (lines 51–49951 of 50001, 288907 characters in all). Full output saved to ${saved} — call read with {"path": "${saved}", "offset": 51} to see the omitted part] …`
    );
    const read = await registry.call('read', { path: saved, offset: 25000, limit: 3 }, ctxFor(ws));
    expect(read.output).toMatch(
      /^ *25000\t25000\n *25001\t25001\n *25002\t25002\n\(lines 25000–25002 of 50001; call read with offset=25003 to continue\)$/
    );
  });

  it('a timeout kills the whole process group', async () => {
    const ws = await workspace();
    const result = await registry.call(
      'shell',
      { command: '(sleep 30; touch late) & sleep 30', timeout_ms: 1000 },
      ctxFor(ws)
    );
    expect(result.output).toMatch(/\[killed after the 1000 ms timeout/);
    expect(await readdir(ws)).not.toContain('late');
  });

  it('cwd must be inside the workspace', async () => {
    const ws = await workspace();
    expect((await registry.call('shell', { command: 'pwd', cwd: '..' }, ctxFor(ws))).output).toMatch(
      /^Refused: "\.\." is outside the workspace/
    );
  });
});

describe('hostile paths through every file tool (HARN-5): 0 escapes', () => {
  it('refuses each and leaves everything outside the workspace untouched', async () => {
    const root = await tempDir();
    const ws = path.join(root, 'ws');
    await mkdir(path.join(ws, 'sub'), { recursive: true });
    await writeFile(path.join(root, 'secret.txt'), 'secret\n');
    await symlink('/etc', path.join(ws, 'etc-link'));
    await symlink(path.join(root, 'secret.txt'), path.join(ws, 'secret-link'));
    await symlink('loop-b', path.join(ws, 'loop-a'));
    await symlink('loop-a', path.join(ws, 'loop-b'));
    await symlink(root, path.join(ws, 'up'));
    await symlink(path.join(root, 'nope'), path.join(ws, 'dangling'));
    const hostile = [
      '../secret.txt',
      '../../etc/passwd',
      'sub/../../secret.txt',
      '/etc/passwd',
      path.join(root, 'secret.txt'),
      root,
      '/',
      'etc-link/passwd',
      'etc-link/cellmate-new',
      'secret-link',
      'loop-a',
      'loop-a/x',
      'up/secret.txt',
      'up/new.txt',
      'dangling',
      'sub/\0/x',
      `${ws}/../secret.txt`,
      '..',
      'sub/../..',
      '/tmp/cellmate-escape-test'
    ];
    expect(hostile.length).toBeGreaterThanOrEqual(20);
    const ctx = ctxFor(ws);
    let escapes = 0;
    for (const p of hostile) {
      const calls = [
        registry.call('write', { path: p, content: 'PWNED\n' }, ctx),
        registry.call('edit', { path: p, old_string: 'CELLMATE-NEVER-PRESENT', new_string: 'PWNED' }, ctx),
        registry.call('apply_patch', { patch: `--- /dev/null\n+++ b/${p}\n@@ -0,0 +1,1 @@\n+PWNED\n` }, ctx),
        registry.call('read', { path: p }, ctx),
        registry.call('grep', { pattern: 'root', path: p }, ctx),
        registry.call('glob', { pattern: '*', path: p }, ctx)
      ];
      for (const result of await Promise.all(calls)) {
        if (result.ok) escapes++;
        else
          expect(result.output).toMatch(/Refused|not found|Invalid arguments|directory|Not found|could not be parsed/);
      }
    }
    expect(escapes).toBe(0);
    expect(await readFile(path.join(root, 'secret.txt'), 'utf8')).toBe('secret\n');
    expect((await readdir(root)).sort()).toEqual(['secret.txt', 'ws']);
    await expect(readFile('/etc/cellmate-new')).rejects.toThrow();
    await expect(readFile('/tmp/cellmate-escape-test')).rejects.toThrow();
  });
});
