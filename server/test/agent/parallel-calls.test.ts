/**
 * HARN-8: the read-tier calls of one model step run concurrently; a call that is not
 * parallel-safe (write, exec, or a tool that says so) runs alone, in its place; the results
 * reach the model and the transcript in call order whatever order they finish in.
 * Concurrency is observed, not timed: each slow read waits until its whole group has
 * started, which only happens when they run together (else it gives up and says "alone").
 */
import type { ToolCallItem } from '@cellmate/protocol';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parallelBatches } from '../../src/agent/run-turn.js';
import { defineTool } from '../../src/gate/define-tool.js';
import { ToolRegistry } from '../../src/tools/index.js';
import { createHarness, scriptSettings } from '../helpers/chat-harness.js';
import { tempDir } from '../helpers/temp.js';

function tools() {
  const log: string[] = [];
  const started = new Map<string, number>();
  const waiting = new Map<string, Array<() => void>>();
  const slowRead = defineTool({
    name: 'slow_read',
    tier: 'read',
    description: 'Waits for the rest of its group.',
    parameters: z.object({ id: z.string(), group: z.string(), size: z.number() }),
    examples: [],
    async execute(args) {
      log.push(`start ${args.id}`);
      const count = (started.get(args.group) ?? 0) + 1;
      started.set(args.group, count);
      let together = count >= args.size;
      if (together) for (const wake of waiting.get(args.group) ?? []) wake();
      else
        together = await new Promise<boolean>((resolve) => {
          const fallback = setTimeout(() => resolve(false), 5_000);
          waiting.set(args.group, [...(waiting.get(args.group) ?? []), () => (clearTimeout(fallback), resolve(true))]);
        });
      log.push(`end ${args.id}`);
      return { title: args.id, output: `${args.id}: ${together ? 'together' : 'alone'}` };
    }
  });
  const ordered = defineTool({
    name: 'ordered',
    tier: 'read',
    parallelSafe: false,
    description: 'Runs alone.',
    parameters: z.object({ id: z.string() }),
    examples: [],
    async execute(args) {
      log.push(`start ${args.id}`);
      await new Promise((r) => setTimeout(r, 20));
      log.push(`end ${args.id}`);
      return { title: args.id, output: `${args.id}: done` };
    }
  });
  return { registry: new ToolRegistry([slowRead, ordered]), log };
}

describe('HARN-8: parallel read-tier calls in one step', () => {
  it('three slow reads of one step run together; their results reach the model in call order', async () => {
    const ws = await tempDir();
    const { registry, log } = tools();
    const promptLog = path.join(ws, 'prompts.jsonl');
    const reads = ['a', 'b', 'c'].map((id) => ({ toolName: 'slow_read', input: { id, group: 'g', size: 3 } }));
    const model = await scriptSettings(ws, {
      steps: [
        { toolCalls: reads, chunkDelayMs: 0 },
        { text: 'done', chunkDelayMs: 0 }
      ]
    });
    const h = await createHarness(ws, {
      registry,
      env: { CELLMATE_SCRIPT_LOG: promptLog, CELLMATE_CONFIG: path.join(ws, 'none.json') }
    });
    const chat = h.service.create();
    const after = await h.sendAndWait(chat.id, 'go', model);
    const cards = after.items.filter((i): i is ToolCallItem => i.kind === 'tool');
    expect(cards.map((c) => c.output)).toEqual(['a: together', 'b: together', 'c: together']);
    expect(log.slice(0, 3)).toEqual(['start a', 'start b', 'start c']);
    const prompts = (await readFile(promptLog, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { prompt: Array<{ role: string; content: unknown }> });
    const results = prompts[1]!.prompt.filter((m) => m.role === 'tool').map((m) => JSON.stringify(m.content));
    expect(results.join('\n').match(/[abc]: together/g)).toEqual(['a: together', 'b: together', 'c: together']);
    await h.dispose();
  }, 30_000);

  it('a call that is not parallel-safe between reads runs alone, after the reads before it and before the read after it', async () => {
    const ws = await tempDir();
    const { registry, log } = tools();
    const model = await scriptSettings(ws, {
      steps: [
        {
          toolCalls: [
            { toolName: 'slow_read', input: { id: 'r1', group: 'first', size: 2 } },
            { toolName: 'slow_read', input: { id: 'r2', group: 'first', size: 2 } },
            { toolName: 'ordered', input: { id: 'w' } },
            { toolName: 'slow_read', input: { id: 'r3', group: 'second', size: 1 } }
          ],
          chunkDelayMs: 0
        },
        { text: 'done', chunkDelayMs: 0 }
      ]
    });
    const h = await createHarness(ws, { registry });
    const chat = h.service.create();
    const after = await h.sendAndWait(chat.id, 'go', model);
    const cards = after.items.filter((i): i is ToolCallItem => i.kind === 'tool');
    expect(cards.map((c) => c.output)).toEqual(['r1: together', 'r2: together', 'w: done', 'r3: together']);
    const at = (entry: string): number => log.indexOf(entry);
    expect(Math.max(at('end r1'), at('end r2'))).toBeLessThan(at('start w'));
    expect(at('end w')).toBeLessThan(at('start r3'));
    await h.dispose();
  }, 30_000);

  it('batches: runs of parallel-safe calls together, every other call alone', () => {
    const safe = (c: string): boolean => c.startsWith('r');
    expect(parallelBatches(['r1', 'r2', 'w', 'r3', 'x', 'y', 'r4', 'r5'], safe)).toEqual([
      [0, 1],
      [2],
      [3],
      [4],
      [5],
      [6, 7]
    ]);
    expect(parallelBatches([], safe)).toEqual([]);
  });
});
