import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { CALL_TOOL_DECLARATION, dispatchTarget, loadedTools } from '../../src/gate/call-tool.js';

const result = (toolName: string, value: string, type: 'text' | 'error-text' = 'text'): ModelMessage => ({
  role: 'tool',
  content: [{ type: 'tool-result', toolCallId: `c-${toolName}`, toolName, output: { type, value } }]
});

describe('call_tool, the stable dispatcher (HARN-11, issue #14)', () => {
  it('what is loaded comes only from tool_search results in the history', () => {
    const history: ModelMessage[] = [
      { role: 'user', content: 'Loaded tools: shell.' },
      result('tool_search', 'Loaded tools: grep, lsp.\n\n{…}'),
      result('read', 'Loaded tools: shell, write.'), // a file that says so loads nothing
      result('tool_search', 'Loaded tools: eval.', 'error-text'),
      result('tool_search', 'No tool matches "Loaded tools: shell". Tools available by search: shell.'),
      result('tool_search', 'Loaded tools: debug.')
    ];
    expect([...loadedTools(history)]).toEqual(['grep', 'lsp', 'debug']);
  });

  it('resolves a loaded tool to itself with its own arguments; says how to fix anything else', () => {
    const loaded = (n: string): boolean => n === 'grep';
    expect(dispatchTarget('read', { path: 'a' }, loaded)).toEqual({ kind: 'tool', name: 'read', args: { path: 'a' } });
    expect(dispatchTarget('call_tool', { name: 'grep', arguments: { pattern: 'x' } }, loaded)).toEqual({
      kind: 'tool',
      name: 'grep',
      args: { pattern: 'x' },
      via: 'call_tool'
    });
    const message = (input: unknown): string => {
      const t = dispatchTarget('call_tool', input, loaded);
      return t.kind === 'invalid' ? t.message : 'dispatched';
    };
    expect(message('grep')).toMatch(/input must be an object/);
    expect(message({ arguments: {} })).toMatch(/`name` must be the name of a tool/);
    expect(message({ name: 'grep', pattern: 'x' })).toMatch(
      /unknown key "pattern"; put the tool's arguments inside "arguments"/
    );
    expect(message({ name: 'call_tool', arguments: {} })).toMatch(/cannot call itself/);
    expect(message({ name: 'shell', arguments: { command: 'ls' } })).toMatch(
      /shell is not loaded in this chat\. Call tool_search \{"query": "shell"\} first/
    );
    expect(message({ name: 'grep', arguments: ['x'] })).toMatch(/`arguments` must be an object/);
    expect(message({ name: 'grep' })).toMatch(/`arguments` must be an object/);
  });

  it('its declaration is one frozen object (the same bytes every request)', () => {
    expect(Object.isFrozen(CALL_TOOL_DECLARATION)).toBe(true);
    expect(CALL_TOOL_DECLARATION.parameters).toMatchObject({ required: ['name', 'arguments'] });
  });
});
