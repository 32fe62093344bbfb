import type { ChatEvent, ChatSummary } from '@cellmate/protocol';
import net from 'node:net';
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection
} from 'vscode-jsonrpc/node.js';
import { onNotification } from '../../src/transport/typed-rpc.js';

/** A JSON-RPC client on a Unix socket that records notifications and every raw byte received. */
export interface TestClient {
  connection: MessageConnection;
  events: Array<{ chatId: string; event: ChatEvent }>;
  lists: ChatSummary[][];
  /** Everything the server sent, as text (for leak checks). */
  raw(): string;
  /** Calls `listener` for every `chat/event` as it arrives (a pane answering cards). */
  onEvent(listener: (params: { chatId: string; event: ChatEvent }) => void): void;
  /** Resolves when a `turn-ended` for the chat arrives (or already did, after `from`). */
  turnEnded(chatId: string, from?: number): Promise<ChatEvent>;
  close(): void;
}

export async function connectClient(socketPath: string): Promise<TestClient> {
  const socket = net.connect(socketPath);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let rawText = '';
  socket.on('data', (data: Buffer) => (rawText += data.toString('utf8')));
  const connection = createMessageConnection(new StreamMessageReader(socket), new StreamMessageWriter(socket));
  const events: TestClient['events'] = [];
  const lists: ChatSummary[][] = [];
  const waiters: Array<() => void> = [];
  const listeners: Array<(params: { chatId: string; event: ChatEvent }) => void> = [];
  onNotification(connection, 'chat/event', (params) => {
    events.push(params);
    for (const l of listeners) l(params);
    waiters.splice(0).forEach((w) => w());
  });
  onNotification(connection, 'chat/listChanged', (params) => lists.push(params.chats));
  connection.listen();
  return {
    connection,
    events,
    lists,
    raw: () => rawText,
    onEvent: (listener) => listeners.push(listener),
    async turnEnded(chatId, from = 0) {
      for (;;) {
        const found = events.slice(from).find((e) => e.chatId === chatId && e.event.type === 'turn-ended');
        if (found) return found.event;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
    close() {
      connection.dispose();
      socket.destroy();
    }
  };
}
