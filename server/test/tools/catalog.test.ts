import { getEncoding } from 'js-tiktoken';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Presence } from '../../src/questions/presence.js';
import { QuestionBroker } from '../../src/questions/question-broker.js';
import { declarations, deferredDeclarations } from '../../src/tools/catalog.js';
import { defineTool } from '../../src/tools/define-tool.js';
import { builtinTools } from '../../src/tools/index.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { tempDir } from '../helpers/temp.js';

const broker = new QuestionBroker({ sink: { publish: () => undefined }, presence: new Presence() });
const registry = new ToolRegistry(builtinTools({ questions: broker }));

describe('what the model sees (HARN-1): every tool schema snapshotted', () => {
  for (const tool of builtinTools({ questions: broker })) {
    it(`${tool.name}`, async () => {
      const declared = { name: tool.name, tier: tool.tier, parameters: registry.inputJsonSchema(tool.name), description: registry.modelDescription(tool.name) };
      await expect(`${JSON.stringify(declared, null, 2)}\n`).toMatchFileSnapshot(`__schemas__/${tool.name}.json`);
      expect(tool.examples.length).toBeGreaterThanOrEqual(1);
      expect(tool.examples.length).toBeLessThanOrEqual(5);
      for (const example of tool.examples) expect(tool.parameters.safeParse(example.args).success).toBe(true);
      expect(tool.description).toMatch(/When to use/);
      expect(tool.description).toMatch(/cannot/);
      expect(tool.description).toMatch(/Returns/);
      expect(tool.description).toMatch(/Cost/);
    });
  }

  it('the full catalog declares every built-in tool; the deferred form is ask_user in full plus tool_search with one index line per other tool (HARN-11)', () => {
    const full = declarations(registry);
    const names = builtinTools({ questions: broker }).map((t) => t.name).sort();
    expect(full.map((d) => d.name)).toEqual(names);
    for (const d of full) expect(d).toEqual({ name: d.name, description: registry.modelDescription(d.name), parameters: registry.inputJsonSchema(d.name) });
    const deferred = deferredDeclarations(registry);
    expect(deferred.map((d) => d.name)).toEqual(['ask_user', 'tool_search']);
    expect(deferred[0]).toEqual(full.find((d) => d.name === 'ask_user'));
    const index = deferred[1]!.description.split('Tools available by search:\n')[1]!.split('\n\n')[0]!.trim().split('\n');
    expect(index.map((line) => /^- (\w+): /.exec(line)?.[1])).toEqual(names.filter((n) => n !== 'ask_user'));
    for (const line of index) {
      const [, name, summary] = /^- (\w+): (.*)$/.exec(line)!;
      expect(registry.get(name!)!.description.startsWith(summary!.replace(/…$/, ''))).toBe(true);
      expect(line.length).toBeLessThanOrEqual(140);
    }
    // No other tool's schema travels in the deferred form.
    expect(JSON.stringify(deferred)).not.toContain('old_string');
  });

  it('token figures (o200k): the deferred form fits its 2,500-token budget and costs under a third of the full catalog', () => {
    const enc = getEncoding('o200k_base');
    const full = enc.encode(JSON.stringify(declarations(registry))).length;
    const index = enc.encode(JSON.stringify(deferredDeclarations(registry))).length;
    console.log(`catalog: full_tokens=${full} index_tokens=${index}`);
    expect(index).toBeLessThanOrEqual(2_500);
    expect(index * 3).toBeLessThan(full);
    // Each declaration costs what its schema snapshot says it does: the catalog is their sum.
    const each = declarations(registry).reduce((n, d) => n + enc.encode(JSON.stringify(d)).length, 0);
    expect(Math.abs(full - each)).toBeLessThanOrEqual(declarations(registry).length + 2);
  });
});

describe('tool search (HARN-11)', () => {
  const hidden = defineTool({
    name: 'lsp_rename', tier: 'write', deferred: true, description: 'Rename a symbol across the workspace with the language server.\nMore text.',
    parameters: z.strictObject({ symbol: z.string() }), examples: [{ args: { symbol: 'x' }, comment: 'rename' }],
    execute: async (args) => ({ title: 'renamed', output: `renamed ${args.symbol}` })
  });

  it('deferred tools are left out of the declared set; tool_search carries the compact index and returns full schemas', async () => {
    const reg = new ToolRegistry([...builtinTools(), hidden]);
    const declared = declarations(reg).map((d) => d.name);
    expect(declared).toContain('tool_search');
    expect(declared).not.toContain('lsp_rename');
    expect(reg.get('tool_search')!.description).toContain('- lsp_rename: Rename a symbol across the workspace with the language server.');
    const ws = await tempDir();
    const ctx = { workspace: ws, signal: new AbortController().signal, actor: 'model' as const, chatId: 'c' };
    const found = await reg.call('tool_search', { query: 'rename symbol' }, ctx);
    expect(found.output).toContain('"name": "lsp_rename"');
    expect(found.output).toContain('"symbol"');
    // then callable by name, through the same wrapper
    expect((await reg.call('lsp_rename', { symbol: 'a' }, ctx)).output).toBe('renamed a');
    // on a read-only surface it is neither found nor callable
    const readOnly = { ...ctx, profile: { name: 'plan', maxTier: 'read' as const } };
    expect((await reg.call('tool_search', { query: 'lsp_rename' }, readOnly)).output).toMatch(/^No tool matches/);
    expect((await reg.call('lsp_rename', { symbol: 'a' }, readOnly)).output).toMatch(/^Refused/);
  });
});
