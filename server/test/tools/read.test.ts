import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { MAX_LINE_CHARS } from '../../src/tools/read/read-format.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { readTool } from '../../src/tools/read/read.js';
import { tempDir } from '../helpers/temp.js';

let ws: string;
const registry = new ToolRegistry([readTool]);
const ctx = () => ({ workspace: ws, signal: new AbortController().signal, actor: 'model' as const, chatId: 'c1' });
const read = (args: unknown) => registry.call('read', args, ctx());
const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

beforeEach(async () => {
  ws = await tempDir();
  await writeFile(path.join(ws, 'short.md'), 'alpha\nbeta\ngamma\n');
  await writeFile(path.join(ws, 'long.txt'), lines(5000));
  await writeFile(path.join(ws, 'empty.txt'), '');
  await writeFile(path.join(ws, 'no-newline.txt'), 'one\ntwo');
  await writeFile(
    path.join(ws, 'image.png'),
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13])
  );
  await writeFile(path.join(ws, 'wide.txt'), `short\n${'x'.repeat(5400)}\nend\n`);
  await mkdir(path.join(ws, 'folder'));
});

describe('read', () => {
  it('returns a whole short file numbered cat -n style, without a truncation note', async () => {
    const result = await read({ path: 'short.md' });
    expect(result).toMatchObject({ ok: true, title: 'short.md (lines 1–3 of 3)' });
    expect(result.output).toBe('     1\talpha\n     2\tbeta\n     3\tgamma');
  });

  it('honours offset and limit and says how to continue', async () => {
    const result = await read({ path: 'long.txt', offset: 201, limit: 200 });
    expect(result.ok).toBe(true);
    const out = result.output.split('\n');
    expect(out[0]).toBe('   201\tline 201');
    expect(out[199]).toBe('   400\tline 400');
    expect(out[200]).toBe('(lines 201–400 of 5000; call read with offset=401 to continue)');
    expect(out).toHaveLength(201);
  });

  it('truncates at the default limit of 2000 lines explicitly', async () => {
    const result = await read({ path: 'long.txt' });
    expect(result.output.split('\n').at(-1)).toBe('(lines 1–2000 of 5000; call read with offset=2001 to continue)');
  });

  it('notes the window when reading the tail', async () => {
    const result = await read({ path: 'long.txt', offset: 4999 });
    expect(result.output).toBe('  4999\tline 4999\n  5000\tline 5000\n(lines 4999–5000 of 5000)');
  });

  it('reads a last line without a newline', async () => {
    expect((await read({ path: 'no-newline.txt' })).output).toBe('     1\tone\n     2\ttwo');
  });

  it('says when a file is empty', async () => {
    expect(await read({ path: 'empty.txt' })).toMatchObject({ ok: true, output: '(empty.txt is empty: 0 lines)' });
  });

  it('cuts long lines with a marker', async () => {
    const result = await read({ path: 'wide.txt' });
    const second = result.output.split('\n')[1]!;
    expect(second.startsWith(`     2\t${'x'.repeat(MAX_LINE_CHARS)}…`)).toBe(true);
    expect(second).toContain(
      '… [cut: 3400 of 5400 characters not shown; read shows 2,000 characters of a line; see the rest of line 2 with grep, shell or eval]'
    );
  });

  it('caps very wide output and says where to continue', async () => {
    await writeFile(path.join(ws, 'huge.txt'), Array.from({ length: 100 }, () => 'y'.repeat(1990)).join('\n'));
    const result = await read({ path: 'huge.txt' });
    const last = result.output.split('\n').at(-1)!;
    expect(last).toMatch(
      /^\(lines 1–\d+ of 100; output capped at 50,000 characters; call read with offset=\d+ to continue\)$/
    );
  });

  it('refuses an offset past the end with the valid range', async () => {
    const result = await read({ path: 'short.md', offset: 10 });
    expect(result).toMatchObject({ ok: false, status: 'error' });
    expect(result.output).toContain('offset 10 is past the end of "short.md" (3 lines)');
  });

  it('refuses binary files', async () => {
    const result = await read({ path: 'image.png' });
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/looks like a binary file/);
  });

  it('refuses directories with a hint', async () => {
    const result = await read({ path: 'folder' });
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/is a directory; read only reads files.*folder\/README\.md/);
  });

  it('reports a missing file', async () => {
    const result = await read({ path: 'nope.md' });
    expect(result.output).toMatch(/^File not found: "nope.md"/);
  });

  it('refuses paths outside the workspace as a model-actionable error', async () => {
    const result = await read({ path: '../../etc/passwd' });
    expect(result).toMatchObject({ ok: false, status: 'error' });
    expect(result.output).toBe(
      `Refused: "../../etc/passwd" is outside the workspace ${ws}. Paths must stay inside the workspace.`
    );
  });
});
