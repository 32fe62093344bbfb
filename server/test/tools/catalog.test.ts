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

  it('prints the token count of the full catalog and of the deferred index (o200k)', () => {
    const enc = getEncoding('o200k_base');
    const full = enc.encode(JSON.stringify(declarations(registry))).length;
    const index = enc.encode(JSON.stringify(deferredDeclarations(registry))).length;
    console.log(`catalog: full_tokens=${full} index_tokens=${index}`);
    expect(index).toBeLessThan(full);
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
    const declared = Object.keys(reg.toAiSdkTools());
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
