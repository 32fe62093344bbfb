import type { ToolCallItem } from '@cellmate/protocol';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { declaredTools, systemPrompt, type StandInStep, type WireProvider } from '../helpers/provider-stand-in.js';
import { closeStandInCompanions, startStandInCompanion } from '../helpers/stand-in-companion.js';
import { tempDir } from '../helpers/temp.js';

afterEach(closeStandInCompanions);

describe.each<WireProvider>(['openai', 'anthropic', 'openai-compatible'])(
  'deferred tools over the real %s wire (HARN-11, issue #14)',
  (provider) => {
    it('the model searches, loads grep, calls it through call_tool, gets its result; every request declares the same tools and system prompt', async () => {
      const ws = await tempDir();
      await mkdir(path.join(ws, 'src'));
      await writeFile(path.join(ws, 'src', 'hay.py'), 'a = 1\nneedle = 2\n');
      const { server, standIn } = await startStandInCompanion(ws, provider, [
        {
          text: 'Searching.',
          toolCalls: [{ name: 'tool_search', input: { query: 'search file contents with a regex' } }]
        },
        { toolCalls: [{ name: 'call_tool', input: { name: 'grep', arguments: { pattern: 'needle' } } }] },
        { text: 'It is in src/hay.py.' }
      ]);
      const chat = server.service.create();
      await server.service.send({ chatId: chat.id, text: 'Where is needle?', settings: standIn.settings });
      await server.service.waitForTurn(chat.id);
      const items = server.service.get(chat.id).items;

      const cards = items.filter((i): i is ToolCallItem => i.kind === 'tool');
      expect(cards.map((c) => [c.name, c.status])).toEqual([
        ['tool_search', 'ok'],
        ['grep', 'ok']
      ]);
      // The card shows the real tool and its own arguments, not the dispatcher.
      expect(cards[1]!.args).toEqual({ pattern: 'needle' });
      expect(cards[1]!.output).toContain('src/hay.py');
      // The turn ends with the answer, then its usage line (CTX-1: the stand-in bills every request).
      expect(items.filter((i) => i.kind !== 'usage').at(-1)).toMatchObject({
        kind: 'assistant',
        text: 'It is in src/hay.py.'
      });
      expect(items.at(-1)).toMatchObject({ kind: 'usage', requests: 3 });

      const [first, second, third] = standIn.requests;
      expect(standIn.requests).toHaveLength(3);
      const names = declaredTools(provider, first!.body).map((t) => t.name);
      expect(names).toContain('tool_search');
      expect(names).toContain('call_tool');
      expect(names).not.toContain('grep');
      // The cached prefix: tools (and system prompt) byte-identical on every request of the turn.
      for (const later of [second!, third!]) {
        expect(JSON.stringify(later.body.tools)).toBe(JSON.stringify(first!.body.tools));
        expect(systemPrompt(provider, later.body)).toBe(systemPrompt(provider, first!.body));
      }
      // grep's schema arrived at the end of the context, as tool_search's result…
      const afterSearch = JSON.stringify(second!.body);
      expect(afterSearch).toContain('Loaded tools: grep');
      expect(afterSearch).toContain('"pattern\\"');
      expect(JSON.stringify(first!.body)).not.toContain('Loaded tools: grep');
      // …and grep's result went back as call_tool's.
      expect(JSON.stringify(third!.body)).toContain('src/hay.py');

      // The audit names the real tool, with its own arguments.
      const audit = await server.audit.entries(chat.id);
      expect(audit.map((e) => [e.tool, e.actor, e.status])).toEqual([
        ['tool_search', 'model', 'ok'],
        ['grep', 'model', 'ok']
      ]);
      expect(audit[1]!.args).toEqual({ pattern: 'needle' });
    });
  }
);

describe('call_tool on the wire: what is refused (issue #14)', () => {
  it('a tool not loaded yet, a malformed call and invalid arguments come back as errors the model can act on; nothing runs', async () => {
    const ws = await tempDir();
    await writeFile(path.join(ws, 'hay.txt'), 'needle\n');
    const steps: StandInStep[] = [
      { toolCalls: [{ name: 'call_tool', input: { name: 'grep', arguments: { pattern: 'needle' } } }] },
      { toolCalls: [{ name: 'call_tool', input: { tool: 'grep' } }] },
      { toolCalls: [{ name: 'tool_search', input: { query: 'grep' } }] },
      { toolCalls: [{ name: 'call_tool', input: { name: 'grep', arguments: { pattern: 7 } } }] },
      { text: 'Giving up.' }
    ];
    const { server, standIn } = await startStandInCompanion(ws, 'openai-compatible', steps);
    const chat = server.service.create();
    await server.service.send({ chatId: chat.id, text: 'find needle', settings: standIn.settings });
    await server.service.waitForTurn(chat.id);
    const cards = server.service.get(chat.id).items.filter((i): i is ToolCallItem => i.kind === 'tool');
    expect(cards.map((c) => [c.name, c.status])).toEqual([
      ['call_tool', 'error'],
      ['call_tool', 'error'],
      ['tool_search', 'ok'],
      ['grep', 'error']
    ]);
    expect(cards[0]!.output).toMatch(/grep is not loaded in this chat\. Call tool_search \{"query": "grep"\} first/);
    expect(cards[1]!.output).toMatch(/`name` must be the name of a tool/);
    // Validated against grep's own schema by the registry.
    expect(cards[3]!.output).toMatch(/pattern/);
    const audit = await server.audit.entries(chat.id);
    expect(audit.map((e) => [e.tool, e.status])).toEqual([
      ['tool_search', 'ok'],
      ['grep', 'error']
    ]);
    expect(audit[1]!.decision).toBe('invalid-arguments');

    // The load lasts beyond its turn (derived from the chat's history): the next turn calls grep at once.
    steps.push(
      { toolCalls: [{ name: 'call_tool', input: { name: 'grep', arguments: { pattern: 'needle' } } }] },
      { text: 'Found.' }
    );
    await server.service.send({ chatId: chat.id, text: 'again', settings: standIn.settings });
    await server.service.waitForTurn(chat.id);
    const last = server.service
      .get(chat.id)
      .items.filter((i): i is ToolCallItem => i.kind === 'tool')
      .at(-1)!;
    expect([last.name, last.status]).toEqual(['grep', 'ok']);
    expect(last.output).toContain('hay.txt');
  });
});
