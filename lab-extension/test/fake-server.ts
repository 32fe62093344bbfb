/**
 * A scripted Cellmate endpoint on a real WebSocket server (Node's `ws`), speaking
 * JSON-RPC by hand so tests see exactly what goes over the wire. Chats live in memory.
 */
import { AddressInfo } from 'node:net';

import WebSocket, { WebSocketServer } from 'ws';

import type { Chat, ChatEvent, HelloResult } from '@cellmate/protocol';
import { ErrorCodes, PROTOCOL_VERSION } from '@cellmate/protocol';

import { CellmateConnection } from '../src/connection';

export interface Rpc {
  jsonrpc: '2.0';
  id?: number | string;
  method?: string;
  params?: Record<string, unknown>;
}

export const HELLO: HelloResult = {
  protocolVersion: PROTOCOL_VERSION,
  serverVersion: 'test',
  workspace: '/tmp/ws',
  providers: [{ kind: 'scripted', keyConfigured: true, keySource: '' }]
};

const T0 = '2026-11-29T10:00:00.000Z';

export class FakeServer {
  readonly received: Rpc[] = [];
  readonly urls: string[] = [];
  readonly sockets: WebSocket[] = [];
  readonly chats = new Map<string, Chat>();
  helloError: { code: number; message: string } | null = null;
  /** What hello answers (default {@link HELLO}). */
  helloResult: HelloResult = HELLO;
  /** When false, requests other than hello get no answer. */
  answering = true;
  /** Answers by method (`{ result }` or `{ error }`), before the built-in ones. */
  readonly answers = new Map<string, (params: Record<string, unknown>) => object>();

  private constructor(readonly wss: WebSocketServer) {
    wss.on('connection', (socket, request) => {
      this.urls.push(request.url ?? '');
      this.sockets.push(socket);
      socket.on('message', (data) => this._onMessage(socket, JSON.parse(String(data)) as Rpc));
    });
  }

  static async start(port = 0): Promise<FakeServer> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port, path: '/base/cellmate/ws' });
    await new Promise<void>((resolve) => wss.once('listening', resolve));
    return new FakeServer(wss);
  }

  get port(): number {
    return (this.wss.address() as AddressInfo).port;
  }

  /** The last connected socket. */
  get socket(): WebSocket {
    return this.sockets[this.sockets.length - 1];
  }

  /** Requests with this method, in order. */
  calls(method: string): Rpc[] {
    return this.received.filter((m) => m.method === method);
  }

  addChat(id: string, items: Chat['items'] = [], updatedAt = T0): Chat {
    const chat: Chat = {
      id,
      title: `Chat ${id}`,
      mode: 'agent',
      createdAt: T0,
      updatedAt,
      items,
      running: false
    };
    this.chats.set(id, chat);
    return chat;
  }

  /** Sends a `chat/event` to the last socket. */
  event(chatId: string, event: ChatEvent): void {
    this.socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'chat/event', params: { chatId, event } }));
  }

  async stop(): Promise<void> {
    for (const s of this.wss.clients) {
      s.terminate();
    }
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private _onMessage(socket: WebSocket, message: Rpc): void {
    this.received.push(message);
    if (message.id === undefined) {
      return;
    }
    const reply = (body: object): void => socket.send(JSON.stringify({ jsonrpc: '2.0', id: message.id, ...body }));
    const params = message.params ?? {};
    if (message.method === 'cellmate/hello') {
      reply(this.helloError ? { error: this.helloError } : { result: this.helloResult });
      return;
    }
    if (!this.answering) {
      return;
    }
    const answer = this.answers.get(message.method ?? '');
    if (answer) {
      reply(answer(params));
      return;
    }
    switch (message.method) {
      case 'chat/list':
        reply({ result: [...this.chats.values()].map(({ items: _i, running: _r, ...s }) => s) });
        return;
      case 'chat/get': {
        const chat = this.chats.get(String(params.chatId));
        reply(chat ? { result: chat } : { error: { code: ErrorCodes.ChatNotFound, message: 'no such chat' } });
        return;
      }
      case 'chat/create':
        reply({ result: this.addChat(`new${this.chats.size + 1}`) });
        return;
      case 'chat/send':
        reply({ result: { turnId: 't-sent' } });
        return;
      case 'chat/retry':
      case 'chat/edit':
        reply({ result: { turnId: 't-again' } });
        return;
      case 'chat/rename': {
        const chat = this.chats.get(String(params.chatId));
        if (chat) {
          chat.title = String(params.title);
          const { items: _i, running: _r, ...summary } = chat;
          reply({ result: summary });
        }
        return;
      }
      case 'chat/delete':
        reply({ result: { deleted: this.chats.delete(String(params.chatId)) } });
        return;
      case 'worker/list':
        reply({ result: [] });
        return;
      case 'models/list':
        reply({ result: { models: [] } });
        return;
      default:
        reply({ result: null });
    }
  }
}

/** A connection to `port` with short reconnect delays. */
export function connect(port: number, token = 'sekret'): CellmateConnection {
  const serverSettings = {
    wsUrl: `ws://127.0.0.1:${port}/base/`,
    token,
    appendToken: true,
    WebSocket
  };
  return new CellmateConnection({
    // Only the fields the connection reads; the rest of ISettings is irrelevant here.
    serverSettings: serverSettings as unknown as CellmateConnection.IOptions['serverSettings'],
    initialDelayMs: 20,
    maxDelayMs: 80
  });
}

/** Resolves when `predicate` holds, checking every 5 ms. */
export async function until(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!predicate()) {
    if (Date.now() - start > timeoutMs) {
      throw new Error('timed out waiting');
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
