import type { ChatEvent } from '@cellmate/protocol';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/gate/define-tool.js';
import { ToolRegistry } from '../../src/tools/index.js';
import { createHarness, scriptSettings } from '../helpers/chat-harness.js';
import { tempDir } from '../helpers/temp.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Prints five lines over ~600 ms through ctx.progress. */
const printer = defineTool({
  name: 'printer',
  tier: 'read',
  description: 'Prints lines slowly.',
  parameters: z.object({}),
  examples: [],
  execute: async (_args, ctx) => {
    for (let i = 1; i <= 5; i++) {
      ctx.progress?.({ lastLine: `line ${i}` });
      await sleep(120);
    }
    await sleep(400); // the trailing update goes out while the call still runs
    return { title: 'printed', output: 'done' };
  }
});

describe('tool-progress events (issue #5)', () => {
  it('a running tool reports its last line, throttled, to the panes only (not the chat file)', async () => {
    const ws = await tempDir();
    const model = await scriptSettings(ws, {
      steps: [
        { toolCalls: [{ toolName: 'printer', input: {} }], chunkDelayMs: 0 },
        { text: 'ok', chunkDelayMs: 0 }
      ]
    });
    const h = await createHarness(ws, { registry: new ToolRegistry([printer]) });
    const chat = await h.sendAndWait(h.service.create().id, 'go', model);
    const card = chat.items.find((i) => i.kind === 'tool')!;
    const progress = h.events
      .map((e) => e.event)
      .filter((e): e is Extract<ChatEvent, { type: 'tool-progress' }> => e.type === 'tool-progress');
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.length).toBeLessThanOrEqual(5);
    expect(progress.every((p) => p.itemId === card.id && typeof p.elapsedMs === 'number')).toBe(true);
    expect(progress[0]!.lastLine).toBe('line 1');
    expect(progress.map((p) => p.lastLine)).toContain('line 5');
    await sleep(100);
    const file = await readFile(path.join(ws, '.cellmate', 'chats', `${chat.id}.jsonl`), 'utf8');
    expect(file).not.toContain('line 3');
    await h.dispose();
  });
});
