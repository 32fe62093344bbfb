import type { ChatEvent, ToolCallItem } from '@cellmate/protocol';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXHAUSTED_TEXT } from '../../src/providers/scripted-script.js';
import { createHarness, scriptSettings } from '../helpers/chat-harness.js';
import { tempDir } from '../helpers/temp.js';

const types = (events: Array<{ event: ChatEvent }>) => events.map((e) => e.event.type);

describe('agent loop with the scripted provider', () => {
  it('runs a tool call, feeds the result back and ends with the final text', async () => {
    const ws = await tempDir();
    await writeFile(path.join(ws, 'notes.md'), 'first\nsecond\nthird\n');
    const log = path.join(ws, 'prompts.jsonl');
    const model = await scriptSettings(ws, {
      turns: [
        [
          { text: 'Let me read it.', toolCalls: [{ toolName: 'read', input: { path: 'notes.md' } }], chunkDelayMs: 0 },
          { text: 'It has three lines.', chunkDelayMs: 0 }
        ]
      ]
    });
    const h = await createHarness(ws, {
      env: { CELLMATE_SCRIPT_LOG: log, CELLMATE_CONFIG: path.join(ws, 'none.json') }
    });
    const chat = h.service.create();
    const { turnId } = await h.service.send({ chatId: chat.id, text: 'How long is notes.md?', settings: model });
    await h.service.waitForTurn(chat.id);
    const after = h.service.get(chat.id);

    expect(after.items.map((i) => i.kind)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    const card = after.items[2] as ToolCallItem;
    expect(card).toMatchObject({
      name: 'read',
      status: 'ok',
      actor: 'model',
      args: { path: 'notes.md' },
      title: 'notes.md (lines 1–3 of 3)',
      callId: 'call_t0_s0_0'
    });
    expect(card.output).toBe('     1\tfirst\n     2\tsecond\n     3\tthird');
    expect(card.durationMs).toBeGreaterThanOrEqual(0);
    expect(after.items[3]).toMatchObject({ kind: 'assistant', text: 'It has three lines.', streaming: false });
    expect(after.running).toBe(false);
    expect(after.items.every((i) => i.turnId === turnId)).toBe(true);

    // Events arrive in order and fold into exactly the stored chat.
    const evs = types(h.events);
    expect(evs[0]).toBe('turn-started');
    expect(evs.at(-1)).toBe('turn-ended');
    expect(h.events.at(-1)!.event).toEqual({ type: 'turn-ended', turnId, reason: 'stop' });
    const deltas = h.events
      .filter((e) => e.event.type === 'text-delta')
      .map((e) => (e.event as { delta: string }).delta);
    expect(deltas.join('')).toBe('Let me read it.It has three lines.');

    // The model received the tool result in its second call.
    const prompts = (await readFile(log, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(prompts.map((p) => [p.turn, p.step])).toEqual([
      [0, 0],
      [0, 1]
    ]);
    expect(prompts[0].tools).toEqual(['read']);
    expect(prompts[0].prompt[0].role).toBe('system');
    expect(prompts[0].prompt[0].content).toContain(ws);
    const toolMessage = prompts[1].prompt.find((m: { role: string }) => m.role === 'tool');
    expect(JSON.stringify(toolMessage)).toContain('first\\n     2\\tsecond');
    await h.dispose();
  });

  it('gives the model a validation error it can act on, and continues', async () => {
    const ws = await tempDir();
    const model = await scriptSettings(ws, {
      steps: [
        { toolCalls: [{ toolName: 'read', input: { path: 'x.md', offset: -3 } }], chunkDelayMs: 0 },
        { toolCalls: [{ toolName: 'nope', input: {} }], chunkDelayMs: 0 },
        { text: 'ok', chunkDelayMs: 0 }
      ]
    });
    const h = await createHarness(ws);
    const chat = h.service.create();
    const after = await h.sendAndWait(chat.id, 'go', model);
    const cards = after.items.filter((i): i is ToolCallItem => i.kind === 'tool');
    expect(cards[0]).toMatchObject({
      status: 'error',
      output: expect.stringContaining('"offset" must be a positive integer')
    });
    expect(cards[1]).toMatchObject({
      status: 'error',
      output: 'Unknown tool "nope". Available tools: read. Call one of these instead.'
    });
    expect(h.events.at(-1)!.event).toMatchObject({ type: 'turn-ended', reason: 'stop' });
    await h.dispose();
  });

  it('aborts mid-stream: partial text kept, notice added, reason aborted', async () => {
    const ws = await tempDir();
    const words = Array.from({ length: 200 }, (_, i) => `w${i}`).join(' ');
    const model = await scriptSettings(ws, { steps: [{ text: words, chunkDelayMs: 20 }] });
    const h = await createHarness(ws);
    const chat = h.service.create();
    await h.service.send({ chatId: chat.id, text: 'talk', settings: model });
    await h.waitForEvent((e) => e.type === 'text-delta');
    expect(await h.service.abort(chat.id)).toBe(true);
    const after = h.service.get(chat.id);
    expect(after.running).toBe(false);
    const assistant = after.items.find((i) => i.kind === 'assistant');
    expect(assistant).toMatchObject({ streaming: false });
    expect((assistant as { text: string }).text.length).toBeLessThan(words.length);
    expect(after.items.at(-1)).toMatchObject({ kind: 'notice', text: 'Stopped by user.' });
    expect(h.events.at(-1)!.event).toMatchObject({ type: 'turn-ended', reason: 'aborted' });
    expect(await h.service.abort(chat.id)).toBe(false);
    // The history stays valid: the next turn runs.
    const next = await scriptSettings(ws, { steps: [{ text: 'again', chunkDelayMs: 0 }] }, 'next.json');
    expect((await h.sendAndWait(chat.id, 'continue', next)).items.at(-1)).toMatchObject({
      kind: 'assistant',
      text: 'again'
    });
    await h.dispose();
  });

  it('turns a script error step into an error notice and reason error', async () => {
    const ws = await tempDir();
    const model = await scriptSettings(ws, {
      steps: [{ text: 'Partial', error: 'simulated provider outage', chunkDelayMs: 0 }]
    });
    const h = await createHarness(ws);
    const chat = h.service.create();
    const after = await h.sendAndWait(chat.id, 'hi', model);
    const notice = after.items.at(-1);
    expect(notice).toMatchObject({ kind: 'notice', level: 'error' });
    expect((notice as { text: string }).text).toContain('simulated provider outage');
    expect(after.items.find((i) => i.kind === 'assistant')).toMatchObject({ text: 'Partial', streaming: false });
    const ended = h.events.at(-1)!.event;
    expect(ended).toMatchObject({
      type: 'turn-ended',
      reason: 'error',
      error: expect.stringContaining('simulated provider outage')
    });
    await h.dispose();
  });

  it('refuses a second send while a turn runs', async () => {
    const ws = await tempDir();
    const model = await scriptSettings(ws, { steps: [{ text: 'a b c d e f g h', chunkDelayMs: 50 }] });
    const h = await createHarness(ws);
    const chat = h.service.create();
    await h.service.send({ chatId: chat.id, text: 'one', settings: model });
    await expect(h.service.send({ chatId: chat.id, text: 'two', settings: model })).rejects.toMatchObject({
      code: -32011
    });
    await h.service.abort(chat.id);
    await h.dispose();
  });

  it('stops at the step cap with reason max-steps', async () => {
    const ws = await tempDir();
    await writeFile(path.join(ws, 'a.md'), 'a\n');
    const loop = { toolCalls: [{ toolName: 'read', input: { path: 'a.md' } }], chunkDelayMs: 0 };
    const model = await scriptSettings(ws, { steps: [loop, loop, loop, loop, loop] });
    const h = await createHarness(ws, { maxSteps: 3 });
    const chat = h.service.create();
    const after = await h.sendAndWait(chat.id, 'loop', model);
    expect(after.items.filter((i) => i.kind === 'tool')).toHaveLength(3);
    expect(after.items.at(-1)).toMatchObject({
      kind: 'notice',
      text: expect.stringContaining('Stopped after 3 model steps')
    });
    expect(h.events.at(-1)!.event).toMatchObject({ reason: 'max-steps' });
    await h.dispose();
  });

  it('answers past the end of the script with a clear text, deterministically per turn', async () => {
    const ws = await tempDir();
    const model = await scriptSettings(ws, { turns: [[{ text: 'first turn', chunkDelayMs: 0 }]] });
    const h = await createHarness(ws);
    const chat = h.service.create();
    expect((await h.sendAndWait(chat.id, '1', model)).items.at(-1)).toMatchObject({ text: 'first turn' });
    expect((await h.sendAndWait(chat.id, '2', model)).items.at(-1)).toMatchObject({ text: EXHAUSTED_TEXT });
    await h.dispose();
  });

  it('runs the built-in demo offline: a table and a plot through eval, then how to configure a model; no notebook open → no cell edit', async () => {
    const ws = await tempDir();
    const h = await createHarness(ws);
    const chat = h.service.create();
    const after = await h.sendAndWait(chat.id, 'hello', { provider: 'scripted', model: '' });
    const tools = after.items.filter((i): i is ToolCallItem => i.kind === 'tool');
    // The script's shape; this harness has no kernel (test/e2e/demo.test.ts runs both evals in a real one).
    expect(tools.map((t) => t.name)).toEqual(['eval', 'eval']);
    expect(after.items.some((i) => i.kind === 'notice' && i.level === 'error')).toBe(false);
    const last = after.items.at(-1) as { kind: string; text: string };
    expect(last.kind).toBe('assistant');
    expect(last.text).toContain('OPENAI_API_KEY');
    expect(last.text).toContain('open a notebook and run the demo again');
    await h.dispose();
  }, 60_000);

  it('reports a script outside the workspace as an error notice', async () => {
    const ws = await tempDir();
    const h = await createHarness(ws);
    const chat = h.service.create();
    const after = await h.sendAndWait(chat.id, 'x', { provider: 'scripted', model: '', scriptPath: '../evil.json' });
    expect(after.items.at(-1)).toMatchObject({
      kind: 'notice',
      level: 'error',
      text: expect.stringContaining('is outside the workspace')
    });
    await h.dispose();
  });
});
