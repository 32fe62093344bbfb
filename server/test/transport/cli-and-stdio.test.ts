import { PROTOCOL_VERSION } from '@cellmate/protocol';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node.js';
import { parseCli } from '../../src/config/cli.js';
import { silentLogger } from '../../src/config/logger.js';
import { startServer } from '../../src/server.js';
import { sendRequest } from '../../src/transport/typed-rpc.js';
import { tempDir } from '../helpers/temp.js';

describe('parseCli', () => {
  it.each([
    [
      ['--socket', '/run/s.sock', '--workspace', '/ws'],
      { kind: 'run', socketPath: '/run/s.sock', workspace: '/ws', stdio: false }
    ],
    [['--stdio'], { kind: 'run', socketPath: undefined, workspace: '/cwd', stdio: true }],
    [['--help'], { kind: 'help' }],
    [[], { kind: 'error', message: 'one of --socket <path> or --stdio is required' }],
    [['--socket', 'a', '--stdio'], { kind: 'error', message: 'use either --socket or --stdio, not both' }],
    [['--port', '80'], { kind: 'error' }]
  ])('%j', (argv, expected) => {
    expect(parseCli(argv, '/cwd')).toMatchObject(expected);
  });
});

describe('--stdio mode', () => {
  it('serves JSON-RPC over a pair of streams', async () => {
    const ws = await tempDir();
    const toServer = new PassThrough();
    const fromServer = new PassThrough();
    const handle = await startServer({
      workspace: ws,
      stdio: { input: toServer, output: fromServer },
      logger: silentLogger,
      env: {}
    });
    const client = createMessageConnection(new StreamMessageReader(fromServer), new StreamMessageWriter(toServer));
    client.listen();
    const hello = await sendRequest(client, 'cellmate/hello', { protocolVersion: PROTOCOL_VERSION });
    expect(hello.workspace).toBe(ws);
    const created = await sendRequest(client, 'chat/create', { title: 'stdio' });
    expect(await sendRequest(client, 'chat/list', {})).toEqual([
      expect.objectContaining({ id: created.id, title: 'stdio' })
    ]);
    expect(await sendRequest(client, 'chat/rename', { chatId: created.id, title: 'renamed' })).toMatchObject({
      title: 'renamed'
    });
    expect(await sendRequest(client, 'chat/abort', { chatId: created.id })).toEqual({ aborted: false });
    expect(await sendRequest(client, 'chat/delete', { chatId: created.id })).toEqual({ deleted: true });
    client.dispose();
    await handle.dispose();
  });
});
