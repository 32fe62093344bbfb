import { PROTOCOL_VERSION } from '@cellmate/protocol';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/config/logger.js';
import { startServer, type ServerHandle } from '../../src/server.js';
import { sendRequest } from '../../src/transport/typed-rpc.js';
import { connectClient, type TestClient } from '../helpers/rpc-client.js';
import { startFakeOpenAI, type FakeOpenAIServer, type Responder } from '../helpers/sse-server.js';
import { tempDir } from '../helpers/temp.js';

const KEYS = {
  openai: 'sk-openai-SECRET-0123456789',
  anthropic: 'sk-ant-SECRET-9876543210',
  compatible: 'sk-compat-SECRET-5555555555',
  fileOpenai: 'sk-file-openai-SECRET-111',
  fileAnthropic: 'sk-file-anthropic-SECRET-222',
  fileCompatible: 'sk-file-compat-SECRET-333'
};

let handle: ServerHandle | undefined;
let client: TestClient | undefined;
let fake: FakeOpenAIServer | undefined;
afterEach(async () => {
  client?.close();
  await handle?.dispose();
  await fake?.close();
  handle = client = fake = undefined;
});

describe('API keys never leave the server', () => {
  it.each([
    ['environment', true],
    ['config file', false]
  ])('keys from the %s appear in no response or notification', async (_label, fromEnv) => {
    const ws = await tempDir();
    const configPath = path.join(ws, 'config.json');
    await writeFile(
      configPath,
      JSON.stringify({
        apiKeys: { openai: KEYS.fileOpenai, anthropic: KEYS.fileAnthropic, 'openai-compatible': KEYS.fileCompatible }
      })
    );
    const env: NodeJS.ProcessEnv = fromEnv
      ? {
          CELLMATE_CONFIG: configPath,
          OPENAI_API_KEY: KEYS.openai,
          ANTHROPIC_API_KEY: KEYS.anthropic,
          CELLMATE_OPENAI_COMPATIBLE_API_KEY: KEYS.compatible
        }
      : { CELLMATE_CONFIG: configPath };
    // A hostile-ish server that echoes the Authorization header back in its error body.
    const echo: Responder = (req, res) => {
      res
        .writeHead(401, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: `bad key ${req.headers.authorization}` } }));
    };
    fake = await startFakeOpenAI([echo, echo]);
    handle = await startServer({
      workspace: ws,
      socketPath: path.join(ws, 's.sock'),
      env,
      logger: silentLogger,
      maxRetries: 0
    });
    client = await connectClient(handle.socketPath!);
    const c = client.connection;

    const hello = await sendRequest(c, 'cellmate/hello', { protocolVersion: PROTOCOL_VERSION });
    expect(hello.providers.find((p) => p.kind === 'openai')).toMatchObject({
      keyConfigured: true,
      keySource: fromEnv ? 'OPENAI_API_KEY' : `${configPath} (apiKeys.openai)`
    });
    await sendRequest(c, 'config/providers', {});
    const chat = await sendRequest(c, 'chat/create', { title: 'leak check' });
    await sendRequest(c, 'chat/send', {
      chatId: chat.id,
      text: 'hi',
      model: { provider: 'openai-compatible', model: 'm', baseUrl: fake.baseUrl }
    });
    const ended = await client.turnEnded(chat.id);
    expect(ended).toMatchObject({ reason: 'error' });
    await sendRequest(c, 'chat/get', { chatId: chat.id });
    await sendRequest(c, 'chat/list', {});
    // The picker's list (the server's /v1/models is read with the key) and an inline completion
    // whose model server echoes the key in its error (issue #27).
    const compatible = { provider: 'openai-compatible' as const, model: 'm', baseUrl: fake.baseUrl };
    await sendRequest(c, 'models/list', { model: { provider: 'openai', model: 'gpt-4.1', fast: compatible } });
    await expect(
      sendRequest(c, 'inline/complete', {
        requestId: 'i1',
        model: compatible,
        prefix: 'x = ',
        suffix: '',
        cellsAbove: [],
        cellsBelow: []
      })
    ).rejects.toThrow(/401|bad key/);
    expect(fake.requests).toHaveLength(2);

    // The server did send the key to the provider (positive control)…
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${fromEnv ? KEYS.compatible : KEYS.fileCompatible}`);
    // …the error notice was shown, redacted…
    const raw = client.raw();
    expect(raw).toContain('[redacted]');
    // …and no key value appears anywhere the client received.
    for (const key of Object.values(KEYS)) expect(raw).not.toContain(key);
    expect(raw).not.toContain('SECRET');
  });
});
