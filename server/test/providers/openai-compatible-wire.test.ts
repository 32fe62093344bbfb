import type { ModelSettings, ToolCallItem } from '@cellmate/protocol';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHarness } from '../helpers/chat-harness.js';
import { chunk, sse, startFakeOpenAI, type FakeOpenAIServer } from '../helpers/sse-server.js';
import { tempDir } from '../helpers/temp.js';

let server: FakeOpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const settings = (baseUrl: string): ModelSettings => ({ provider: 'openai-compatible', model: 'test-model', baseUrl });

describe('openai-compatible provider over real HTTP + SSE', () => {
  it('streams text, assembles a tool call split across chunks, runs read and continues', async () => {
    const ws = await tempDir();
    await writeFile(path.join(ws, 'notes.md'), 'alpha\nbeta\n');
    server = await startFakeOpenAI([
      sse([
        chunk({ role: 'assistant', content: 'Let me ' }),
        chunk({ content: 'look.' }),
        chunk({
          tool_calls: [{ index: 0, id: 'call_abc', type: 'function', function: { name: 'read', arguments: '' } }]
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"pa' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: 'th": "notes' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '.md"}' } }] }),
        chunk({}, 'tool_calls'),
        'data: [DONE]\n\n'
      ]),
      sse([
        chunk({ role: 'assistant', content: 'It has ' }),
        chunk({ content: 'two lines.' }),
        chunk({}, 'stop'),
        'data: [DONE]\n\n'
      ])
    ]);
    const h = await createHarness(ws, {
      env: { CELLMATE_OPENAI_COMPATIBLE_API_KEY: 'sk-local-test', CELLMATE_CONFIG: path.join(ws, 'none.json') }
    });
    const chat = h.service.create();
    const after = await h.sendAndWait(chat.id, 'What is in notes.md?', settings(server.baseUrl));

    expect(after.items.map((i) => i.kind)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(after.items[1]).toMatchObject({ text: 'Let me look.', streaming: false });
    expect(after.items[2] as ToolCallItem).toMatchObject({
      callId: 'call_abc',
      name: 'read',
      args: { path: 'notes.md' },
      status: 'ok'
    });
    expect(after.items[3]).toMatchObject({ text: 'It has two lines.' });
    expect(h.events.at(-1)!.event).toMatchObject({ type: 'turn-ended', reason: 'stop' });

    // What went over the wire.
    expect(server.requests).toHaveLength(2);
    const [first, second] = server.requests;
    expect(first!.url).toBe('/v1/chat/completions');
    expect(first!.headers.authorization).toBe('Bearer sk-local-test');
    expect(first!.body.stream).toBe(true);
    expect(JSON.stringify(first!.body.tools)).toContain('"name":"read"');
    const roles = second!.body.messages.map((m) => m.role);
    expect(roles).toEqual(['system', 'user', 'assistant', 'tool']);
    const toolMessage = second!.body.messages[3]!;
    expect(toolMessage.tool_call_id).toBe('call_abc');
    expect(String(toolMessage.content)).toContain('     1\talpha\n     2\tbeta');
    await h.dispose();
  });

  it('ends the turn with a clear error notice on a malformed chunk, even if the server keeps the connection open', async () => {
    const ws = await tempDir();
    server = await startFakeOpenAI([
      sse([chunk({ role: 'assistant', content: 'Hel' }), 'data: {not json\n\n'], { end: false })
    ]);
    const h = await createHarness(ws);
    const chat = h.service.create();
    const after = await h.sendAndWait(chat.id, 'hi', settings(server.baseUrl));
    const notice = after.items.at(-1)!;
    expect(notice).toMatchObject({ kind: 'notice', level: 'error' });
    expect((notice as { text: string }).text).toMatch(
      /openai-compatible server at http:\/\/127\.0\.0\.1:\d+\/v1 sent a malformed response/
    );
    expect(h.events.at(-1)!.event).toMatchObject({ type: 'turn-ended', reason: 'error' });
    expect(after.running).toBe(false);
    await h.dispose();
  });

  it('ends the turn with an error when the server answers garbage instead of SSE', async () => {
    const ws = await tempDir();
    server = await startFakeOpenAI([
      (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>not an API</html>')
    ]);
    const h = await createHarness(ws);
    const chat = h.service.create();
    const after = await h.sendAndWait(chat.id, 'hi', settings(server.baseUrl));
    expect(after.items.at(-1)).toMatchObject({
      kind: 'notice',
      level: 'error',
      text: expect.stringContaining('Check that the base URL points at an OpenAI-compatible API')
    });
    expect(h.events.at(-1)!.event).toMatchObject({ type: 'turn-ended', reason: 'error' });
    await h.dispose();
  });

  it('explains an HTTP error', async () => {
    const ws = await tempDir();
    server = await startFakeOpenAI([
      (_req, res) =>
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"message":"Invalid API key"}}')
    ]);
    const h = await createHarness(ws);
    const chat = h.service.create();
    const after = await h.sendAndWait(chat.id, 'hi', settings(server.baseUrl));
    expect(after.items.at(-1)).toMatchObject({
      kind: 'notice',
      text: expect.stringMatching(/rejected the API key \(HTTP 401\): Invalid API key/)
    });
    expect(h.events.at(-1)!.event).toMatchObject({ reason: 'error' });
    await h.dispose();
  });

  it('says what to check when nothing listens at the base URL, in one sentence', async () => {
    const ws = await tempDir();
    // A port that was just free: nothing listens there now.
    const closed = await startFakeOpenAI([]);
    const baseUrl = closed.baseUrl;
    await closed.close();
    const h = await createHarness(ws);
    const chat = h.service.create();
    const after = await h.sendAndWait(chat.id, 'hi', settings(baseUrl));
    const notice = after.items.at(-1);
    expect(notice).toMatchObject({ kind: 'notice', level: 'error' });
    expect((notice as { text: string }).text).toMatch(
      new RegExp(
        `^Could not reach the openai-compatible server at ${baseUrl}: .*Check the network and that a server listens at ${baseUrl}\\.$`
      )
    );
    await h.dispose();
  });

  it('stops a stalled stream with the inactivity timeout', async () => {
    const ws = await tempDir();
    server = await startFakeOpenAI([sse([chunk({ role: 'assistant', content: 'Thinking' })], { end: false })]);
    const h = await createHarness(ws, { streamIdleTimeoutMs: 300 });
    const chat = h.service.create();
    const after = await h.sendAndWait(chat.id, 'hi', settings(server.baseUrl));
    expect(after.items.at(-1)).toMatchObject({ kind: 'notice', text: expect.stringContaining('sent nothing for') });
    expect(h.events.at(-1)!.event).toMatchObject({ reason: 'error' });
    await h.dispose();
  });

  it('refuses a missing or invalid base URL with ProviderUnavailable', async () => {
    const ws = await tempDir();
    const h = await createHarness(ws);
    const chat = h.service.create();
    await expect(
      h.service.send({ chatId: chat.id, text: 'hi', settings: { provider: 'openai-compatible', model: 'm' } })
    ).rejects.toMatchObject({ code: -32012, message: expect.stringContaining('needs a base URL') });
    await expect(
      h.service.send({ chatId: chat.id, text: 'hi', settings: settings('not a url') })
    ).rejects.toMatchObject({ code: -32012, message: expect.stringContaining('is not a valid URL') });
    await expect(
      h.service.send({ chatId: chat.id, text: 'hi', settings: settings('ftp://x/v1') })
    ).rejects.toMatchObject({ code: -32012 });
    expect(h.service.get(chat.id).items).toEqual([]);
    await h.dispose();
  });
});
