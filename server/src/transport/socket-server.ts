import { lstat, unlink, chmod } from 'node:fs/promises';
import net from 'node:net';
import { createMessageConnection, type MessageConnection } from 'vscode-jsonrpc/node.js';
import { createFramedWriter } from '../framing/index.js';
import type { Logger } from '../config/logger.js';
import { CheckedMessageReader } from './checked-reader.js';
import { attachConnection } from './rpc-handlers.js';
import type { CompanionServices } from './services.js';

/** A listening Unix-socket JSON-RPC server. */
export interface SocketServer {
  socketPath: string;
  /** Number of open client connections. */
  readonly connectionCount: number;
  /** Stops listening, closes every connection and removes the socket file. */
  dispose(): Promise<void>;
}

/**
 * Listens on a Unix socket (created user-only: umask 0177, then chmod 0600) — never a TCP
 * port. Each accepted connection is one JSON-RPC connection with Content-Length framing.
 * A stale socket file (nobody listening) is replaced; a live one is an error.
 */
export async function listenOnSocket(
  socketPath: string,
  services: CompanionServices,
  logger: Logger
): Promise<SocketServer> {
  await removeStaleSocket(socketPath);
  const connections = new Set<{ connection: MessageConnection; socket: net.Socket }>();
  const server = net.createServer((socket) => {
    const connection = serveStream(socket, socket, services, logger);
    const entry = { connection, socket };
    connections.add(entry);
    socket.on('close', () => connections.delete(entry));
    socket.on('error', (error) => logger.warn(`client socket error: ${error.message}`));
  });
  const previousUmask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } finally {
    process.umask(previousUmask);
  }
  await chmod(socketPath, 0o600);
  server.on('error', (error) => logger.error('socket server error', error));
  return {
    socketPath,
    get connectionCount() {
      return connections.size;
    },
    async dispose() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const { connection, socket } of connections) {
        connection.dispose();
        socket.destroy();
      }
      await closed;
      await unlink(socketPath).catch(() => undefined);
    }
  };
}

/**
 * Serves one JSON-RPC connection over a pair of streams (a socket, or stdin/stdout in
 * `--stdio` mode). The connection is disposed when the input ends. Frames that are not
 * JSON, or not a JSON-RPC object, are answered with `-32700` / `-32600` and the connection
 * goes on ({@link CheckedMessageReader}).
 */
export function serveStream(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  services: CompanionServices,
  logger: Logger
): MessageConnection {
  const writer = createFramedWriter(output);
  const reader = new CheckedMessageReader(input, writer, (frame) =>
    logger.warn(`answered a malformed JSON-RPC frame with ${frame.code}: ${frame.message}`)
  );
  const connection = createMessageConnection(reader, writer);
  const attached = attachConnection(connection, services, logger);
  connection.onClose(() => attached.dispose());
  connection.onError(([error]) => logger.warn(`JSON-RPC connection error: ${error.message}`));
  connection.listen();
  return connection;
}

async function removeStaleSocket(socketPath: string): Promise<void> {
  const info = await lstat(socketPath).catch(() => undefined);
  if (!info) return;
  if (!info.isSocket()) throw new Error(`${socketPath} exists and is not a socket; refusing to replace it.`);
  const live = await new Promise<boolean>((resolve) => {
    const probe = net.connect(socketPath);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (live) throw new Error(`Another server is already listening on ${socketPath}.`);
  await unlink(socketPath);
}
