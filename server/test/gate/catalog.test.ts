import { getEncoding } from 'js-tiktoken';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Presence } from '../../src/questions/presence.js';
import { QuestionBroker } from '../../src/questions/question-broker.js';
import {
  declarations,
  FIXED_TOOLS,
  fixedToolNames,
  fullDeclarations,
  INDEX_HEADING,
  surfaceCatalog
} from '../../src/gate/catalog.js';
import { CALL_TOOL_DECLARATION, parseLoaded } from '../../src/gate/call-tool.js';
import { createToolSearchTool } from '../../src/tools/tool_search/tool_search.js';
import { defineTool } from '../../src/gate/define-tool.js';
import { builtinTools } from '../../src/tools/index.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { tempDir } from '../helpers/temp.js';
import { SkillLibrary } from '../../src/skills/skill-library.js';
import { createSkillTool } from '../../src/tools/skill/skill.js';

const broker = new QuestionBroker({ sink: { publish: () => undefined }, presence: new Presence() });
const registry = new ToolRegistry(builtinTools({ questions: broker }));
registry.register(createToolSearchTool(registry));

describe('what the model sees (HARN-1): every tool schema snapshotted', () => {
  for (const tool of builtinTools({ questions: broker })) {
    it(`${tool.name}`, async () => {
      const declared = {
        name: tool.name,
        tier: tool.tier,
        parameters: registry.inputJsonSchema(tool.name),
        description: registry.modelDescription(tool.name)
      };
      await expect(`${JSON.stringify(declared, null, 2)}\n`).toMatchFileSnapshot(
        `../tools/__schemas__/${tool.name}.json`
      );
      expect(tool.examples.length).toBeGreaterThanOrEqual(1);
      expect(tool.examples.length).toBeLessThanOrEqual(5);
      for (const example of tool.examples) expect(tool.parameters.safeParse(example.args).success).toBe(true);
      expect(tool.description).toMatch(/When to use/);
      expect(tool.description).toMatch(/cannot/);
      expect(tool.description).toMatch(/Returns/);
      expect(tool.description).toMatch(/Cost/);
    });
  }

  it('skill (registered beside the built-ins where a skill library is attached)', async () => {
    const tool = createSkillTool(new SkillLibrary({ workspace: process.cwd(), env: {} }));
    const own = new ToolRegistry([tool]);
    const declared = {
      name: tool.name,
      tier: tool.tier,
      parameters: own.inputJsonSchema(tool.name),
      description: own.modelDescription(tool.name)
    };
    await expect(`${JSON.stringify(declared, null, 2)}\n`).toMatchFileSnapshot('../tools/__schemas__/skill.json');
    for (const example of tool.examples) expect(tool.parameters.safeParse(example.args).success).toBe(true);
    for (const part of [/When to use/, /cannot/, /Returns/, /Cost/]) expect(tool.description).toMatch(part);
  });

  it('tool_search', async () => {
    const declared = {
      name: 'tool_search',
      tier: 'read',
      parameters: registry.inputJsonSchema('tool_search'),
      description: registry.modelDescription('tool_search')
    };
    await expect(`${JSON.stringify(declared, null, 2)}\n`).toMatchFileSnapshot('../tools/__schemas__/tool_search.json');
    await expect(`${JSON.stringify(CALL_TOOL_DECLARATION, null, 2)}\n`).toMatchFileSnapshot(
      '../tools/__schemas__/call_tool.json'
    );
  });

  it('the catalog declares the fixed tools in full, then tool_search with one index line per other tool, then call_tool (HARN-11, issue #14)', () => {
    const names = builtinTools({ questions: broker })
      .map((t) => t.name)
      .sort();
    const full = fullDeclarations(registry);
    expect(full.map((d) => d.name)).toEqual(names);
    for (const d of full)
      expect(d).toEqual({
        name: d.name,
        description: registry.modelDescription(d.name),
        parameters: registry.inputJsonSchema(d.name)
      });
    const declared = declarations(registry);
    const fixed = names.filter((n) => FIXED_TOOLS.default!.includes(n));
    expect(fixed).toEqual(['ask_user', 'read']);
    expect(declared.map((d) => d.name)).toEqual([...fixed, 'tool_search', 'call_tool']);
    for (const name of fixed) expect(declared.find((d) => d.name === name)).toEqual(full.find((d) => d.name === name));
    const search = declared.find((d) => d.name === 'tool_search')!;
    const index = search.description.split(`${INDEX_HEADING}\n`)[1]!.trim().split('\n');
    expect(index.map((line) => /^- (\w+): /.exec(line)?.[1])).toEqual(names.filter((n) => !fixed.includes(n)));
    for (const line of index) {
      const [, name, summary] = /^- (\w+): (.*)$/.exec(line)!;
      expect(registry.get(name!)!.description.replace(/\s+/g, ' ').startsWith(summary!.replace(/…$/, ''))).toBe(true);
      expect(line.length).toBeLessThanOrEqual(110);
    }
    // No deferred tool's schema travels in the declared set.
    expect(JSON.stringify(declared)).not.toContain('"rewrite"'); // ast_edit's
    expect(JSON.stringify(declared)).not.toContain('"patch"'); // apply_patch's
    // The same objects' content every time: the prefix is stable.
    expect(JSON.stringify(declarations(registry))).toBe(JSON.stringify(declared));
  });

  it('which tools are fixed is data per surface: a read-only surface indexes no write tool, a surface with its own row gets that row', () => {
    const readOnly = surfaceCatalog(registry, { name: 'plan', maxTier: 'read' });
    // Plan's row (its artifact tools are not in this registry): read is one tool_search away there.
    expect(readOnly.declared.map((d) => d.name)).toEqual(['ask_user', 'tool_search', 'call_tool']);
    expect(readOnly.deferred.map((t) => t.name)).toContain('read');
    expect(readOnly.deferred.map((t) => t.name)).not.toContain('write');
    expect(readOnly.deferred.map((t) => t.name)).not.toContain('edit');
    expect(surfaceCatalog(registry).deferred.map((t) => t.name)).toContain('edit');
    expect(readOnly.deferred.map((t) => t.name)).toContain('grep');
    expect([
      ...fixedToolNames({ name: 'review', maxTier: 'read' }, { default: ['read'], review: ['grep', 'read'] })
    ]).toEqual(['grep', 'read']);
    expect([...fixedToolNames({ name: 'other', maxTier: 'read' }, { default: ['read'], review: ['grep'] })]).toEqual([
      'read'
    ]);
    // A registry without tool_search declares everything (nothing could load the rest).
    const bare = new ToolRegistry(builtinTools());
    expect(declarations(bare).map((d) => d.name)).toEqual(fullDeclarations(bare).map((d) => d.name));
  });

  it('token figures (o200k): the declared set fits its 2,500-token budget and costs under a third of the full catalog', () => {
    const enc = getEncoding('o200k_base');
    const full = enc.encode(JSON.stringify(fullDeclarations(registry))).length;
    const fixed = enc.encode(JSON.stringify(declarations(registry))).length;
    console.log(`catalog: full_tokens=${full} declared_tokens=${fixed}`);
    expect(fixed).toBeLessThanOrEqual(2_500);
    expect(fixed * 3).toBeLessThan(full);
    // Each declaration costs what its schema snapshot says it does: the catalog is their sum.
    const each = fullDeclarations(registry).reduce((n, d) => n + enc.encode(JSON.stringify(d)).length, 0);
    expect(Math.abs(full - each)).toBeLessThanOrEqual(fullDeclarations(registry).length + 2);
  });
});

describe('tool search (HARN-11)', () => {
  const hidden = defineTool({
    name: 'lsp_rename',
    tier: 'write',
    deferred: true,
    description: 'Rename a symbol across the workspace with the language server.\nMore text.',
    parameters: z.strictObject({ symbol: z.string() }),
    examples: [{ args: { symbol: 'x' }, comment: 'rename' }],
    execute: async (args) => ({ title: 'renamed', output: `renamed ${args.symbol}` })
  });

  it('deferred tools are left out of the declared set; tool_search carries the compact index and returns full schemas', async () => {
    const reg = new ToolRegistry([...builtinTools(), hidden], { toolSearch: createToolSearchTool });
    const declared = declarations(reg);
    expect(declared.map((d) => d.name)).toEqual(['read', 'tool_search', 'call_tool']);
    // Deferred by the fixed-set table: one index line each. Asking to be deferred (external
    // tools): found by search, never listed, so the prefix holds when a server starts.
    expect(declared[1]!.description).toMatch(/\n- grep: /);
    expect(declared[1]!.description).not.toContain('- lsp_rename:');
    const ws = await tempDir();
    const ctx = { workspace: ws, signal: new AbortController().signal, actor: 'model' as const, chatId: 'c' };
    const found = await reg.call('tool_search', { query: 'rename symbol' }, ctx);
    expect(found.output.split('\n')[0]).toBe('Loaded tools: lsp_rename.'); // weak matches (other tools mentioning symbols) left out
    expect(found.output).toContain('"name": "lsp_rename"');
    expect(found.output).toContain('"symbol"');
    expect(parseLoaded(found.output)).toEqual(['lsp_rename']);
    // exact names load exactly those tools, whatever the limit
    const two = await reg.call('tool_search', { query: 'grep, lsp_rename glob', limit: 1 }, ctx);
    expect(parseLoaded(two.output)).toEqual(['grep', 'lsp_rename', 'glob']);
    expect((await reg.call('tool_search', { query: 'nothing-like-this' }, ctx)).output).toMatch(
      /^No tool matches "nothing-like-this"\. Tools available by search: .*lsp_rename/
    );
    // then callable by name, through the same wrapper
    expect((await reg.call('lsp_rename', { symbol: 'a' }, ctx)).output).toBe('renamed a');
    // on a read-only surface it is neither found nor callable
    const readOnly = { ...ctx, profile: { name: 'plan', maxTier: 'read' as const } };
    expect((await reg.call('tool_search', { query: 'lsp_rename' }, readOnly)).output).toMatch(/^No tool matches/);
    expect((await reg.call('lsp_rename', { symbol: 'a' }, readOnly)).output).toMatch(/^Refused/);
  });

  it('a tool registered later with deferred: true brings tool_search along (external tools)', () => {
    const reg = new ToolRegistry([], { toolSearch: createToolSearchTool });
    expect(reg.get('tool_search')).toBeUndefined();
    reg.register(hidden);
    expect(reg.get('tool_search')).toBeDefined();
    expect(declarations(reg).map((d) => d.name)).toEqual(['tool_search', 'call_tool']);
    // The dispatcher's name cannot be taken by a tool (it would never run).
    expect(() => reg.register({ ...hidden, name: 'call_tool' })).toThrow(/"call_tool" is reserved/);
  });
});
