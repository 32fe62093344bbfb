import type { ToolCallItem } from '@cellmate/protocol';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/gate/define-tool.js';
import { readTool, ToolRegistry } from '../../src/tools/index.js';
import { createHarness, scriptSettings } from '../helpers/chat-harness.js';
import { tempDir } from '../helpers/temp.js';

/** A tool that waits until its signal aborts, recording that it saw the abort. */
function createBlockingTool() {
  const state = { started: undefined as undefined | (() => void), sawAbort: false };
  const started = new Promise<void>((resolve) => (state.started = resolve));
  const tool = defineTool({
    name: 'wait_forever',
    tier: 'exec',
    description: 'Waits until stopped.',
    parameters: z.object({}),
    examples: [],
    execute: (_args, ctx) =>
      new Promise((_resolve, reject) => {
        state.started?.();
        ctx.signal.addEventListener('abort', () => {
          state.sawAbort = true;
          reject(new Error('aborted'));
        });
      })
  });
  return { tool, started, state };
}

describe('abort while a tool runs', () => {
  it('aborts the tool through its AbortSignal, marks the card aborted and ends the turn', async () => {
    const ws = await tempDir();
    const blocking = createBlockingTool();
    const model = await scriptSettings(ws, {
      steps: [
        {
          toolCalls: [
            { toolName: 'wait_forever', input: {} },
            { toolName: 'read', input: { path: 'x' } }
          ],
          chunkDelayMs: 0
        },
        { text: 'never' }
      ]
    });
    const h = await createHarness(ws, { registry: new ToolRegistry([readTool, blocking.tool]) });
    const chat = h.service.create();
    await h.service.send({ chatId: chat.id, text: 'go', settings: model });
    await blocking.started;
    expect(await h.service.abort(chat.id)).toBe(true);
    expect(blocking.state.sawAbort).toBe(true);
    const after = h.service.get(chat.id);
    const cards = after.items.filter((i): i is ToolCallItem => i.kind === 'tool');
    expect(cards.map((c) => c.status)).toEqual(['aborted', 'aborted']);
    expect(after.items.at(-1)).toMatchObject({ kind: 'notice', text: 'Stopped by user.' });
    expect(h.events.at(-1)!.event).toMatchObject({ type: 'turn-ended', reason: 'aborted' });
    // Every tool call in the history has a result, so the next turn is accepted by providers.
    const messages = h.store.get(chat.id)!.messages;
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect((messages[2]!.content as unknown[]).length).toBe(2);
    await h.dispose();
  });

  it('deleting a chat aborts its running turn first', async () => {
    const ws = await tempDir();
    const blocking = createBlockingTool();
    const model = await scriptSettings(ws, {
      steps: [{ toolCalls: [{ toolName: 'wait_forever', input: {} }], chunkDelayMs: 0 }]
    });
    const h = await createHarness(ws, { registry: new ToolRegistry([blocking.tool]) });
    const chat = h.service.create();
    await h.service.send({ chatId: chat.id, text: 'go', settings: model });
    await blocking.started;
    expect(await h.service.delete(chat.id)).toBe(true);
    expect(blocking.state.sawAbort).toBe(true);
    expect(h.service.list()).toEqual([]);
    await h.dispose();
  });
});
