import { ErrorCodes, type UserItem } from '@cellmate/protocol';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHarness, scriptSettings } from '../helpers/chat-harness.js';
import { tempDir } from '../helpers/temp.js';
import { GENERIC_TOOLS, ToolRegistry } from '../../src/tools/index.js';

describe('chat/retry and chat/edit (issue #5)', () => {
  it('retry drops the last turn (items and model messages) and runs it again', async () => {
    const ws = await tempDir();
    const log = path.join(ws, 'prompts.jsonl');
    const model = await scriptSettings(ws, {
      turns: [[{ text: 'first answer', chunkDelayMs: 0 }], [{ text: 'second answer', chunkDelayMs: 0 }]]
    });
    const h = await createHarness(ws, {
      env: { CELLMATE_SCRIPT_LOG: log, CELLMATE_CONFIG: path.join(ws, 'none.json') }
    });
    const chat = h.service.create();
    await h.sendAndWait(chat.id, 'one', model);
    const before = await h.sendAndWait(chat.id, 'two', model);
    expect(before.items.map((i) => i.kind)).toEqual(['user', 'assistant', 'user', 'assistant']);
    const dropped = before.items.slice(2).map((i) => i.id);

    await h.service.retry({ chatId: chat.id, settings: model });
    await h.service.waitForTurn(chat.id);
    const after = h.service.get(chat.id);
    expect(after.items.map((i) => i.kind)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect((after.items[2] as UserItem).text).toBe('two');
    expect(after.items[3]).toMatchObject({ text: 'second answer' });
    expect(after.items.slice(0, 2)).toEqual(before.items.slice(0, 2));
    expect(after.items.some((i) => dropped.includes(i.id))).toBe(false);
    expect(h.events.some((e) => e.event.type === 'items-removed' && e.event.itemIds.join() === dropped.join())).toBe(
      true
    );
    // The model saw the same history as the first time: one answer per user message.
    const prompts = (await readFile(log, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const last = prompts.at(-1).prompt as Array<{ role: string }>;
    expect(last.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    // The stored model history holds the same.
    expect(h.store.get(chat.id)!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    await h.dispose();
  });

  it('edit replaces the last user message (and an auto title from it) and runs again', async () => {
    const ws = await tempDir();
    const model = await scriptSettings(ws, { steps: [{ text: 'ok', chunkDelayMs: 0 }] });
    const h = await createHarness(ws);
    const chat = h.service.create();
    await h.sendAndWait(chat.id, 'plot the kilns', model);
    expect(h.service.get(chat.id).title).toBe('plot the kilns');
    await h.service.retry({ chatId: chat.id, settings: model, text: 'plot the glazes' });
    await h.service.waitForTurn(chat.id);
    const after = h.service.get(chat.id);
    expect(after.items.map((i) => i.kind)).toEqual(['user', 'assistant']);
    expect((after.items[0] as UserItem).text).toBe('plot the glazes');
    expect(after.title).toBe('plot the glazes');
    await h.dispose();
  });

  it('TIER-2/MODE-2: an Explain on a cell, retried, is an Explain again: read-only, about the same cell', async () => {
    const ws = await tempDir();
    // Every turn tries to write: on an Explain turn's surface there is no such tool.
    const model = await scriptSettings(ws, {
      steps: [
        { toolCalls: [{ toolName: 'write', input: { path: 'fixed.py', content: 'x = 1\n' } }] },
        { text: 'explained', chunkDelayMs: 0 }
      ]
    });
    const h = await createHarness(ws, { registry: new ToolRegistry(GENERIC_TOOLS) });
    const chat = h.service.create();
    await h.service.send({
      chatId: chat.id,
      text: 'Explain the error in cell 1',
      settings: model,
      context: { notebookPath: 'nb.ipynb', assist: { action: 'explain', cell: 0 } }
    });
    await h.service.waitForTurn(chat.id);
    const refused = (items: ReturnType<typeof h.service.get>['items']) =>
      items.filter(
        (i) =>
          i.kind === 'tool' && /^Refused: write is a write-tier tool and the "explain" surface/.test(i.output ?? '')
      );
    expect(refused(h.service.get(chat.id).items)).toHaveLength(1);
    expect((h.service.get(chat.id).items[0] as UserItem).cellAssist).toEqual({
      notebookPath: 'nb.ipynb',
      assist: { action: 'explain', cell: 0 }
    });
    await h.service.retry({ chatId: chat.id, settings: model });
    await h.service.waitForTurn(chat.id);
    const after = h.service.get(chat.id).items;
    expect(refused(after)).toHaveLength(1);
    expect((after[0] as UserItem).cellAssist?.assist.action).toBe('explain');
    await expect(readFile(path.join(ws, 'fixed.py'), 'utf8')).rejects.toThrow();
    await h.dispose();
  });

  it('is refused while a turn runs, and in a chat without a message', async () => {
    const ws = await tempDir();
    const model = await scriptSettings(ws, {
      steps: [{ text: 'slow words one two three four five', chunkDelayMs: 100 }]
    });
    const h = await createHarness(ws);
    const chat = h.service.create();
    await expect(h.service.retry({ chatId: chat.id, settings: model })).rejects.toMatchObject({
      code: ErrorCodes.NothingToRetry
    });
    await h.service.send({ chatId: chat.id, text: 'hi', settings: model });
    await expect(h.service.retry({ chatId: chat.id, settings: model })).rejects.toMatchObject({
      code: ErrorCodes.TurnRunning
    });
    await expect(h.service.retry({ chatId: chat.id, settings: model, text: 'edited' })).rejects.toMatchObject({
      code: ErrorCodes.TurnRunning
    });
    await h.service.abort(chat.id);
    // Bad model settings leave the transcript alone.
    const items = h.service.get(chat.id).items;
    await expect(
      h.service.retry({
        chatId: chat.id,
        settings: { provider: 'openai-compatible', model: 'x', baseUrl: 'not a url' }
      })
    ).rejects.toMatchObject({
      code: ErrorCodes.ProviderUnavailable,
      message: expect.stringContaining('not a url')
    });
    expect(h.service.get(chat.id).items).toEqual(items);
    await h.dispose();
  });
});
