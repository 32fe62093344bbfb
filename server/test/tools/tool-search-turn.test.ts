import type { ToolCallItem } from '@cellmate/protocol';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/gate/define-tool.js';
import { readTool } from '../../src/tools/read/read.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { createToolSearchTool } from '../../src/tools/tool_search/tool_search.js';
import { createHarness, scriptSettings } from '../helpers/chat-harness.js';
import { tempDir } from '../helpers/temp.js';

const deferredTool = defineTool({
  name: 'lsp_rename',
  tier: 'read',
  deferred: true,
  description: 'Rename a symbol with the language server.',
  parameters: z.strictObject({ symbol: z.string() }),
  examples: [{ args: { symbol: 'x' }, comment: 'rename' }],
  execute: async (args) => ({ title: 'renamed', output: `renamed ${args.symbol}` })
});

describe('tool search in a real turn (HARN-11)', () => {
  it('the deferred tool is not declared; after tool_search the model calls it through call_tool (or by name) and it runs as itself', async () => {
    const ws = await tempDir();
    const log = path.join(ws, 'prompts.jsonl');
    const model = await scriptSettings(ws, {
      turns: [
        [
          { toolCalls: [{ toolName: 'tool_search', input: { query: 'rename' } }], chunkDelayMs: 0 },
          {
            toolCalls: [{ toolName: 'call_tool', input: { name: 'lsp_rename', arguments: { symbol: 'load' } } }],
            chunkDelayMs: 0
          },
          { toolCalls: [{ toolName: 'lsp_rename', input: { symbol: 'save' } }], chunkDelayMs: 0 },
          { text: 'Renamed.', chunkDelayMs: 0 }
        ]
      ]
    });
    const h = await createHarness(ws, {
      registry: new ToolRegistry([readTool, deferredTool], { toolSearch: createToolSearchTool }),
      env: { CELLMATE_SCRIPT_LOG: log, CELLMATE_CONFIG: path.join(ws, 'none.json') }
    });
    const chat = h.service.create();
    const after = await h.sendAndWait(chat.id, 'Rename load', model);
    const tools = after.items.filter((i): i is ToolCallItem => i.kind === 'tool');
    expect(tools.map((t) => [t.name, t.status])).toEqual([
      ['tool_search', 'ok'],
      ['lsp_rename', 'ok'],
      ['lsp_rename', 'ok']
    ]);
    expect(tools[1]!.args).toEqual({ symbol: 'load' });
    expect(tools[1]!.output).toBe('renamed load');
    expect(tools[2]!.output).toBe('renamed save');
    const { readFile } = await import('node:fs/promises');
    const prompts = (await readFile(log, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { tools: string[] });
    // The declared tool set (the cached prefix) is the same at every step.
    expect(prompts.map((p) => p.tools)).toEqual(Array(4).fill(['read', 'tool_search', 'call_tool']));
    await h.dispose();
  });
});
