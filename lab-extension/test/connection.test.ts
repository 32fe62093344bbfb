/**
 * The pane's connection against a real WebSocket server (Node's `ws`).
 */
import { afterEach, describe, expect, it } from 'vitest';

import { ErrorCodes, PROTOCOL_VERSION } from '@cellmate/protocol';
import type { HelloResult } from '@cellmate/protocol';

import {
  CellmateConnection,
  CellmateRequestError,
  IConnectionStatus,
  IncomingNotification,
  reconnectDelay
} from '../src/connection';
import { connect, FakeServer, HELLO, until } from './fake-server';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) {
    await cleanups.pop()!();
  }
});

async function setup(): Promise<{ server: FakeServer; connection: CellmateConnection }> {
  const server = await FakeServer.start();
  const connection = connect(server.port);
  cleanups.push(
    () => server.stop(),
    () => connection.dispose()
  );
  return { server, connection };
}

describe('reconnectDelay', () => {
  it('doubles from 0.5 s up to 5 s and stays there', () => {
    const delays = [1, 2, 3, 4, 5, 6, 50].map((n) => reconnectDelay(n, 500, 5000));
    expect(delays).toEqual([500, 1000, 2000, 4000, 5000, 5000, 5000]);
  });
});

describe('CellmateConnection', () => {
  it('connects with the token, sends hello first, then typed requests', async () => {
    const { server, connection } = await setup();
    expect(connection.url).toBe(`ws://127.0.0.1:${server.port}/base/cellmate/ws?token=sekret`);
    const hellos: HelloResult[] = [];
    connection.connected.connect((_, hello) => hellos.push(hello));
    await expect(connection.request('chat/list', {})).rejects.toBeInstanceOf(CellmateRequestError);
    connection.start();
    await until(() => connection.status.state === 'connected');
    expect(server.urls).toEqual(['/base/cellmate/ws?token=sekret']);
    expect(server.received[0]).toMatchObject({
      method: 'cellmate/hello',
      params: { protocolVersion: PROTOCOL_VERSION }
    });
    expect(hellos).toEqual([HELLO]);
    expect(await connection.request('chat/list', {})).toEqual([]);
    const error = await connection.request('chat/get', { chatId: 'nope' }).catch((e) => e);
    expect(error).toBeInstanceOf(CellmateRequestError);
    expect(error.code).toBe(ErrorCodes.ChatNotFound);
  });

  it('omits the token when the settings do not append it', () => {
    const connection = new CellmateConnection({
      serverSettings: {
        wsUrl: 'ws://h/',
        token: 't',
        appendToken: false
      } as unknown as CellmateConnection.IOptions['serverSettings']
    });
    expect(connection.url).toBe('ws://h/cellmate/ws');
  });

  it('survives malformed messages and passes only well-formed notifications', async () => {
    const { server, connection } = await setup();
    const problems: string[] = [];
    const notes: IncomingNotification[] = [];
    connection.problem.connect((_, p) => problems.push(p));
    connection.notified.connect((_, n) => notes.push(n));
    connection.start();
    await until(() => connection.status.state === 'connected');

    const warn = console.warn;
    console.warn = () => undefined;
    cleanups.push(() => {
      console.warn = warn;
    });
    server.socket.send('this is not json');
    server.socket.send(JSON.stringify([1, 2]));
    server.socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'chat/event', params: { chatId: 'c' } }));
    server.socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'chat/listChanged', params: { chats: 'x' } }));
    server.socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'future/thing', params: {} }));
    server.socket.send(
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'chat/event',
        params: { chatId: 'c', event: { type: 'text-delta', itemId: 'a', delta: 'hi' } }
      })
    );
    await until(() => notes.length === 1);
    expect(problems).toHaveLength(4);
    expect(problems[0]).toContain('not valid JSON');
    expect(notes[0]).toEqual({
      method: 'chat/event',
      params: { chatId: 'c', event: { type: 'text-delta', itemId: 'a', delta: 'hi' } }
    });
    expect(connection.status.state).toBe('connected');
    expect(await connection.request('chat/list', {})).toEqual([]);
  });

  it('turns an answer of the wrong shape into an error naming the method and the field, and stays connected (§0 transport)', async () => {
    const { server, connection } = await setup();
    const problems: string[] = [];
    connection.problem.connect((_, p) => problems.push(p));
    const warn = console.warn;
    console.warn = () => undefined;
    cleanups.push(() => {
      console.warn = warn;
    });
    connection.start();
    await until(() => connection.status.state === 'connected');
    server.addChat('a');
    server.answers.set('chat/get', () => ({ result: { id: 'a', title: 'A', mode: 'agent', items: 'not a list' } }));
    server.answers.set('chat/list', () => ({
      result: [
        { id: 'a', title: 'A' },
        { id: 7, title: 'B' }
      ]
    }));
    server.answers.set('chat/send', () => ({ result: null }));

    const bad = await connection.request('chat/get', { chatId: 'a' }).catch((e) => e);
    expect(bad).toBeInstanceOf(CellmateRequestError);
    expect(bad.code).toBe(CellmateRequestError.MALFORMED_RESULT);
    expect(bad.method).toBe('chat/get');
    expect(bad.message).toMatch(
      /^The Cellmate server answered chat\/get with something unexpected \(items: [^)]+\): \{"id":"a"/
    );
    const list = await connection.request('chat/list', {}).catch((e) => e);
    expect(list.message).toContain('answered chat/list with something unexpected (1.id: ');
    const send = await connection
      .request('chat/send', { chatId: 'a', text: 'hi', model: { provider: 'scripted', model: '' } })
      .catch((e) => e);
    expect(send.message).toContain('answered chat/send with something unexpected (the result: ');
    expect(problems).toEqual([bad.message, list.message, send.message]);

    // The connection is still good: a well-formed answer comes through untouched.
    server.answers.delete('chat/get');
    expect(await connection.request('chat/get', { chatId: 'a' })).toMatchObject({ id: 'a', items: [] });
    expect(connection.status.state).toBe('connected');
  });

  it('closes a socket whose hello answer has the wrong shape and retries until it fits (§0 transport)', async () => {
    const { server, connection } = await setup();
    const warn = console.warn;
    console.warn = () => undefined;
    cleanups.push(() => {
      console.warn = warn;
    });
    // A server of another version: its hello lacks the providers the pane reads.
    server.helloResult = { protocolVersion: PROTOCOL_VERSION, serverVersion: 'old' } as HelloResult;
    const reasons: string[] = [];
    connection.statusChanged.connect((_, s) => s.reason && reasons.push(s.reason));
    connection.start();
    await until(() => reasons.length >= 1);
    expect(reasons[0]).toBe('bad hello');
    expect(connection.hello).toBeNull();
    server.helloResult = HELLO;
    await until(() => connection.status.state === 'connected');
    expect(connection.hello).toEqual(HELLO);
  });

  it('reconnects after the server restarts (1012) and says hello again', async () => {
    const { server, connection } = await setup();
    const states: IConnectionStatus[] = [];
    let hellos = 0;
    connection.statusChanged.connect((_, s) => states.push(s));
    connection.connected.connect(() => hellos++);
    connection.start();
    await until(() => hellos === 1);
    server.socket.close(1012, '');
    await until(() => hellos === 2);
    const reconnecting = states.find((s) => s.state === 'reconnecting');
    expect(reconnecting?.reason).toBe('the Cellmate server is restarting');
    expect(server.received.filter((m) => m.method === 'cellmate/hello')).toHaveLength(2);
    expect(connection.status.state).toBe('connected');
  });

  it('says hello again with the pane secret the server gave it, so a reconnect is the same pane', async () => {
    const { server, connection } = await setup();
    server.helloResult = { ...HELLO, paneSecret: 'pane-secret-1' };
    let hellos = 0;
    connection.connected.connect(() => hellos++);
    connection.start();
    await until(() => hellos === 1);
    server.socket.close(1012, '');
    await until(() => hellos === 2);
    const sent = server.received.filter((m) => m.method === 'cellmate/hello').map((m) => m.params);
    expect(sent).toEqual([
      { protocolVersion: PROTOCOL_VERSION, interactive: true },
      { protocolVersion: PROTOCOL_VERSION, interactive: true, paneSecret: 'pane-secret-1' }
    ]);
  });

  it('keeps retrying while the server is down, with growing delays, then reconnects', async () => {
    const first = await FakeServer.start();
    const port = first.port;
    const connection = connect(port);
    cleanups.push(() => connection.dispose());
    const delays: number[] = [];
    connection.statusChanged.connect((_, s) => {
      if (s.state === 'reconnecting' && s.retryAt) {
        delays.push(s.retryAt - Date.now());
      }
    });
    connection.start();
    await until(() => connection.status.state === 'connected');
    const pending = connection.request('chat/list', {});
    await first.stop();
    await pending.catch(() => undefined);
    await until(() => delays.length >= 4);
    // 20, 40, 80, 80 ms (timer jitter aside): never shrinking while it fails.
    expect(delays[0]).toBeLessThanOrEqual(25);
    expect(delays[3]).toBeGreaterThan(60);
    expect(delays[3]).toBeLessThanOrEqual(80);
    const second = await FakeServer.start(port);
    cleanups.push(() => second.stop());
    await until(() => connection.status.state === 'connected');
    expect(second.received[0].method).toBe('cellmate/hello');
  });

  it('rejects pending requests when the socket drops', async () => {
    const { server, connection } = await setup();
    connection.start();
    await until(() => connection.status.state === 'connected');
    server.answering = false;
    const pending = connection.request('chat/list', {});
    server.socket.close(1011, 'boom');
    await expect(pending).rejects.toBeInstanceOf(CellmateRequestError);
  });

  it('retries when hello is refused for a protocol mismatch and says why', async () => {
    const { server, connection } = await setup();
    server.helloError = { code: ErrorCodes.ProtocolMismatch, message: 'Protocol 1 vs 2: reload the page' };
    const reasons: string[] = [];
    connection.statusChanged.connect((_, s) => s.reason && reasons.push(s.reason));
    connection.start();
    await until(() => reasons.length >= 1);
    expect(reasons[0]).toBe('Protocol 1 vs 2: reload the page');
    server.helloError = null;
    await until(() => connection.status.state === 'connected');
  });

  it('stops for good when disposed', async () => {
    const { server, connection } = await setup();
    connection.start();
    await until(() => connection.status.state === 'connected');
    connection.dispose();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(connection.status.state).toBe('disposed');
    expect(server.received.filter((m) => m.method === 'cellmate/hello')).toHaveLength(1);
  });
});
