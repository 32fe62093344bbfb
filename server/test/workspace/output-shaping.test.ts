import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/gate/define-tool.js';
import { cut, page, planShape, shapeOutput } from '../../src/workspace/output-shaping.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { readTool } from '../../src/tools/read/read.js';
import { Redactor } from '../../src/security/redaction.js';
import { tempDir } from '../helpers/temp.js';

const numbered = (n: number): string => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

describe('shapeOutput (HARN-4)', () => {
  it('leaves output within 200 lines and 10,000 characters unchanged', async () => {
    const ws = await tempDir();
    const text = numbered(200);
    expect(await shapeOutput(text, { workspace: ws, toolName: 't' })).toEqual({
      output: text,
      truncated: false,
      totalLines: 200,
      totalChars: text.length
    });
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
      name: 'loud',
      tier: 'read',
      description: 'Prints.',
      parameters: z.object({}),
      examples: [],
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

describe('one shaping module: page and cut (HARN-2/3)', () => {
  it('every tool that takes offset/limit declares paged output, and only those', async () => {
    const { builtinTools } = await import('../../src/tools/index.js');
    const { createNotebookTools } = await import('../../src/tools/notebook/notebook.js');
    const { createDebugTool } = await import('../../src/tools/debug/debug.js');
    const { DebugSessionManager } = await import('../../src/dap/session-manager.js');
    const notebook = createNotebookTools({ port: { find: async () => undefined } as never });
    const all = [...builtinTools(), ...notebook, createDebugTool({ sessions: new DebugSessionManager() })];
    const withOffset = all
      .filter((t) => 'offset' in ((t.parameters as unknown as { shape?: Record<string, unknown> }).shape ?? {}))
      .map((t) => t.name)
      .sort();
    expect(withOffset).toEqual(['ast_grep', 'debug', 'glob', 'grep', 'notebook_read', 'read']);
    for (const t of all) {
      const shape = (t.parameters as unknown as { shape?: Record<string, unknown> }).shape ?? {};
      // offset → pages itself through page(); paged → has a page size (`limit`; ast_grep's is
      // `max_results`, as SPEC AST-3 names it).
      if ('offset' in shape)
        expect({ tool: t.name, shaping: t.outputShaping }).toEqual({ tool: t.name, shaping: 'paged' });
      if (t.outputShaping === 'paged')
        expect({ tool: t.name, limit: 'limit' in shape || 'max_results' in shape }).toEqual({
          tool: t.name,
          limit: true
        });
    }
  });

  it('page numbers from 1, says which entries are shown and how to continue, and refuses an offset past the end', () => {
    const entries = ['a', 'b', 'c', 'd', 'e'];
    const noun = { one: 'line', many: 'lines' };
    expect(
      page({ entries: entries.slice(0, 2), offset: 1, limit: 2, total: 5, maxChars: 100, noun, tool: 'read' }).text
    ).toBe('a\nb\n(lines 1–2 of 5; call read with offset=3 to continue)');
    expect(
      page({ entries: entries.slice(3), offset: 4, limit: 2, total: 5, maxChars: 100, noun, tool: 'read' }).text
    ).toBe('d\ne\n(lines 4–5 of 5)');
    expect(page({ entries, offset: 1, limit: 9, total: 5, maxChars: 100, noun, tool: 'read' }).text).toBe(
      'a\nb\nc\nd\ne'
    );
    expect(
      page({ entries, offset: 1, limit: 9, total: 5, maxChars: 100, noun, tool: 'glob', countWhenWhole: true }).text
    ).toBe('a\nb\nc\nd\ne\n(5 lines)');
    const capped = page({ entries, offset: 1, limit: 5, total: 5, maxChars: 4, noun, tool: 'read' });
    expect(capped).toMatchObject({
      first: 1,
      last: 2,
      capped: true,
      note: '(lines 1–2 of 5; output capped at 4 characters; call read with offset=3 to continue)'
    });
    expect(() => page({ entries: [], offset: 6, limit: 1, total: 5, maxChars: 9, noun, tool: 'read' })).toThrow(
      /offset 6 is past the end \(5 lines\)\. Call read with an offset between 1 and 5/
    );
  });

  it('cut says how much it cut and how to get the rest, and never splits a surrogate pair', () => {
    expect(cut('short', 10, 'never shown')).toBe('short');
    expect(cut('abcdefghij', 4, 'call read with {"path": "x"}')).toBe(
      'abcd… [cut: 6 of 10 characters not shown; call read with {"path": "x"}]'
    );
    expect(cut('ab😀cd', 3, 'r')).toBe('ab… [cut: 4 of 6 characters not shown; r]');
  });
});

describe('secrets and saved outputs (issue #8 item 4)', () => {
  it('a long result holding a known secret is redacted before shaping: neither the reply nor the saved full output holds it', async () => {
    const ws = await tempDir();
    const secret = 'sk-cellmate-test-SAVED-OUTPUT-9876';
    const leaky = defineTool({
      name: 'leaky',
      tier: 'read',
      description: 'prints a secret on every line',
      parameters: z.object({}),
      examples: [],
      execute: async () => ({
        title: 'leaky',
        output: Array.from({ length: 300 }, (_, i) => `${i + 1} key=${secret}`).join('\n')
      })
    });
    const registry = new ToolRegistry([leaky], { redactor: new Redactor({ OPENAI_API_KEY: secret }) });
    const r = await registry.call(
      'leaky',
      {},
      { workspace: ws, signal: new AbortController().signal, actor: 'model', chatId: 'c1' }
    );
    expect(r.ok && r.metadata?.truncated).toBe(true);
    expect(r.output).not.toContain(secret);
    expect(r.output).toContain('key=[redacted]');
    const saved = await readFile(path.join(ws, String(r.ok && r.metadata?.savedPath)), 'utf8');
    expect(saved).toContain('300 key=[redacted]');
    expect(saved).not.toContain(secret);
  });
});
