/**
 * A 5,000-item chat in a real companion (`node server/dist/main.js --socket …`), opened
 * by the pane's controller over a WebSocket bridged to the companion's Unix socket (one
 * JSON-RPC message per WebSocket message, as `/cellmate/ws` does): the pane shows the
 * latest items first and pages back to the first one (issue #15).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import net, { AddressInfo } from 'node:net';
import path from 'node:path';

import { StreamMessageReader, StreamMessageWriter, type Message } from 'vscode-jsonrpc/node.js';
import { WebSocketServer } from 'ws';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';

import type { ToolCallItem } from '@cellmate/protocol';
import type { TranslationBundle } from '@jupyterlab/translation';

import { buildServer, startCompanion, type Companion } from '../../server/test/helpers/companion';
import { tempDir } from '../../server/test/helpers/temp';
import { CellmateController } from '../src/controller';
import { connect, until } from './fake-server';

const trans = {
  __: (text: string) => text,
  _n: (one: string, many: string, n: number) => (n === 1 ? one : many)
} as unknown as TranslationBundle;

beforeAll(() => buildServer(), 120_000);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) {
    await cleanups.pop()!();
  }
});

/** `/base/cellmate/ws` → the companion's socket, one connection per WebSocket. */
async function bridge(socketPath: string): Promise<number> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, path: '/base/cellmate/ws' });
  await new Promise<void>((resolve) => wss.once('listening', resolve));
  wss.on('connection', (ws) => {
    const unix = net.connect(socketPath);
    const writer = new StreamMessageWriter(unix);
    new StreamMessageReader(unix).listen((message: Message) => ws.send(JSON.stringify(message)));
    ws.on('message', (data) => void writer.write(JSON.parse(String(data)) as Message));
    ws.on('close', () => unix.destroy());
    unix.on('close', () => ws.close());
  });
  cleanups.push(() => new Promise<void>((resolve) => wss.close(() => resolve())));
  return (wss.address() as AddressInfo).port;
}

describe('a 5,000-item chat in the pane', () => {
  it('opens on its latest items and loads older pages, in order, up to the first item', async () => {
    const ws = await tempDir();
    const chats = path.join(ws, '.cellmate', 'chats');
    await mkdir(chats, { recursive: true });
    // A chat journal as the companion writes it (server/src/chats/chat-journal.md).
    const t = '2026-12-01T10:00:00.000Z';
    const lines = [
      {
        s: 1,
        u: t,
        t: 'chat',
        titleSource: 'user',
        chat: { id: 'long', title: 'Long', mode: 'agent', createdAt: t, running: false }
      }
    ];
    for (let i = 0; i < 5000; i++) {
      const item: ToolCallItem = {
        kind: 'tool',
        id: `i${i}`,
        time: t,
        turnId: `t${Math.floor(i / 50)}`,
        callId: `c${i}`,
        name: 'read',
        args: { path: 'a.txt' },
        actor: 'model',
        status: 'ok',
        output: `line ${i}`
      };
      lines.push({ s: i + 2, u: t, t: 'item', item } as never);
    }
    await writeFile(path.join(chats, 'long.jsonl'), lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    const socket = path.join(ws, 's.sock');
    const companion: Companion = await startCompanion(ws, socket);
    cleanups.push(() => companion.kill9());
    const connection = connect(await bridge(socket));
    const controller = new CellmateController({
      connection,
      memory: { load: async () => 'long', save: async () => undefined },
      notify: () => undefined,
      trans
    });
    cleanups.push(
      () => controller.dispose(),
      () => connection.dispose()
    );
    await controller.start();
    await until(() => controller.store.state?.chatId === 'long', 20_000);

    const first = controller.store.state!;
    expect(first.items.length).toBeLessThan(5000);
    expect(first.items.at(-1)!.id).toBe('i4999');
    expect(first.olderCount).toBe(5000 - first.items.length);
    const ids = first.items.map((i) => i.id);
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, k) => `i${5000 - ids.length + k}`));

    let pages = 0;
    while (controller.store.state!.olderCount > 0) {
      const before = controller.store.state!.items.length;
      await controller.loadOlder();
      expect(controller.store.state!.items.length).toBeGreaterThan(before);
      pages++;
    }
    expect(pages).toBeGreaterThan(5);
    expect(controller.store.state!.items.map((i) => i.id)).toEqual(Array.from({ length: 5000 }, (_, k) => `i${k}`));
  }, 60_000);
});
