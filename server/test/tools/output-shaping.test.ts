import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/tools/define-tool.js';
import { planShape, shapeOutput } from '../../src/tools/output-shaping.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { readTool } from '../../src/tools/read/read.js';
import { tempDir } from '../helpers/temp.js';

const numbered = (n: number): string => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

describe('shapeOutput (HARN-4)', () => {
  it('leaves output within 200 lines and 10,000 characters unchanged', async () => {
    const ws = await tempDir();
    const text = numbered(200);
    expect(await shapeOutput(text, { workspace: ws, toolName: 't' })).toEqual({ output: text, truncated: false, totalLines: 200, totalChars: text.length });
  });

  it('keeps head 50 + tail 50 lines past 200 lines and names the saved file', async () => {
    const ws = await tempDir();
    const text = numbered(201);
    const shaped = await shapeOutput(text, { workspace: ws, toolName: 'shell' });
    const lines = shaped.output.split('\n');
    expect(lines).toHaveLength(101);
    expect(lines[0]).toBe('line 1');
    expect(lines[49]).toBe('line 50');
    expect(lines[51]).toBe('line 152');
    expect(lines[100]).toBe('line 201');
    expect(shaped.savedPath).toMatch(/^\.cellmate\/outputs\/shell-\d{8}T\d{6}-[0-9a-f]{6}\.txt$/);
    expect(lines[50]).toBe(
      `… [101 lines omitted (lines 51–151 of 201, ${text.length} characters in all). Full output saved to ${shaped.savedPath} — call read with {"path": "${shaped.savedPath}", "offset": 51} to see the omitted part] …`
    );
    expect(await readFile(path.join(ws, shaped.savedPath!), 'utf8')).toBe(text);
  });

  it('shapes a few very long lines past 10,000 characters, cutting lines explicitly', () => {
    const text = ['a'.repeat(9000), 'b'.repeat(9000), 'c'.repeat(9000)].join('\n');
    const plan = planShape(text);
    expect(plan.truncated).toBe(true);
    expect(plan.omittedFrom).toBe(2);
    expect(plan.omittedTo).toBe(2);
    expect(plan.head[0]).toMatch(/… \[line cut: 9000 characters\]$/);
    expect(plan.linesCut).toBe(true);
  });

  it('a single huge line is cut and saved', async () => {
    const ws = await tempDir();
    const shaped = await shapeOutput('x'.repeat(50_000), { workspace: ws, toolName: 'eval' });
    expect(shaped.truncated).toBe(true);
    expect(shaped.output.length).toBeLessThan(10_000);
    expect(shaped.output).toContain('[line cut: 50000 characters]');
    expect(shaped.output).toContain(`Full output saved to ${shaped.savedPath}`);
  });

  it('the registry shapes every auto tool output and read pages the saved file (HARN-3/4)', async () => {
    const ws = await tempDir();
    const loud = defineTool({
      name: 'loud', tier: 'read', description: 'Prints.', parameters: z.object({}), examples: [],
      execute: async () => ({ title: 'loud', output: numbered(50_000) })
    });
    const registry = new ToolRegistry([loud, readTool]);
    const ctx = { workspace: ws, signal: new AbortController().signal, actor: 'model' as const, chatId: 'c' };
    const result = await registry.call('loud', {}, ctx);
    expect(result.ok).toBe(true);
    const saved = /Full output saved to (\S+)/.exec(result.output)![1]!;
    const read = await registry.call('read', { path: saved, offset: 25_000, limit: 2 }, ctx);
    expect(read.output).toMatch(/25000\tline 25000\n *25001\tline 25001\n\(lines 25000–25001 of 50000/);
  });
});
