import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StandInRequest, StandInStep, WireProvider } from '../helpers/provider-stand-in.js';
import { closeStandInCompanions, startStandInCompanion, type StandInCompanion } from '../helpers/stand-in-companion.js';
import { tempDir } from '../helpers/temp.js';

// CTX-2: the stable prefix is marked for the provider's prompt cache, and the cache serves it.

afterEach(closeStandInCompanions);

/** One read per turn, then a one-line answer. */
function reader(provider: WireProvider): (request: StandInRequest) => StandInStep {
  return (request) => {
    const messages = (provider === 'anthropic' ? request.body.messages : request.body.input) as Array<{
      role?: string;
      type?: string;
      content?: unknown;
    }>;
    const last = messages.at(-1)!;
    const isResult =
      provider === 'anthropic'
        ? JSON.stringify(last.content).includes('tool_result')
        : last.type === 'function_call_output';
    return isResult ? { text: 'Read it.' } : { toolCalls: [{ name: 'read', input: { path: 'data/table.txt' } }] };
  };
}

async function chatOf(provider: WireProvider, turns: number): Promise<StandInCompanion> {
  const ws = await tempDir();
  await mkdir(path.join(ws, 'data'));
  await writeFile(
    path.join(ws, 'data', 'table.txt'),
    Array.from({ length: 120 }, (_, i) => `row ${i}\tHaifa\t${i * 7}\t${i % 13}`).join('\n')
  );
  const { server, standIn } = await startStandInCompanion(ws, provider, reader(provider));
  const chat = server.service.create();
  for (let t = 0; t < turns; t++) {
    await server.service.send({ chatId: chat.id, text: `Read the table again (${t})`, settings: standIn.settings });
    await server.service.waitForTurn(chat.id);
  }
  return { server, standIn };
}

describe('prompt caching over the real wires (CTX-2)', () => {
  it("Anthropic: cache_control on the system prompt, the previous request's end and the newest message; the cache serves most input after turn 10", async () => {
    const { server, standIn: s } = await chatOf('anthropic', 14);
    for (const r of s.requests) {
      const system = r.body.system as Array<{ cache_control?: unknown }>;
      expect(system.at(-1)!.cache_control).toEqual({ type: 'ephemeral' });
      const messages = r.body.messages as Array<{ content: Array<{ cache_control?: unknown }> }>;
      expect(messages.at(-1)!.content.at(-1)!.cache_control).toEqual({ type: 'ephemeral' });
      const marks = messages.flatMap((m) => m.content).filter((p) => p.cache_control).length;
      expect(marks).toBeLessThanOrEqual(3); // with the system's, at most four breakpoints (Anthropic's limit)
    }
    // From the usage the stand-in billed for the prefix it had seen cached.
    const later = s.requests.slice(20);
    const input = later.reduce((n, r) => n + r.usage.promptTokens, 0);
    const cached = later.reduce((n, r) => n + r.usage.cachedTokens, 0);
    expect(cached / input).toBeGreaterThanOrEqual(0.7);
    // What the meter shows is the same billing.
    const chat = server.service.list()[0]!;
    const context = server.service.get(chat.id).context!;
    expect(context.total.cachedInput).toBe(s.requests.reduce((n, r) => n + r.usage.cachedTokens, 0));
    expect(context.total.input).toBe(s.requests.reduce((n, r) => n + r.usage.promptTokens, 0));
  }, 120_000);

  it('OpenAI: every request of a chat carries the same prompt_cache_key and a byte-identical prefix', async () => {
    const { standIn: s } = await chatOf('openai', 4);
    const keys = new Set(s.requests.map((r) => r.body.prompt_cache_key));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toEqual(expect.any(String));
    const first = JSON.stringify(s.requests[0]!.body.input);
    const prefix = first.slice(0, first.lastIndexOf('}'));
    for (const r of s.requests.slice(1))
      expect(JSON.stringify(r.body.input).startsWith(prefix.slice(0, prefix.length - 200))).toBe(true);
    expect(JSON.stringify(s.requests[0]!.body.tools)).toBe(JSON.stringify(s.requests.at(-1)!.body.tools));
  }, 60_000);
});
