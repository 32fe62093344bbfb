/**
 * Until the shared framing module (`server/src/framing/`, DBG-6) is merged: the same two
 * functions over vscode-jsonrpc's own stream reader and writer. Replaced by a re-export of
 * `../framing/index.js` at the merge; nothing else imports vscode-jsonrpc's streams.
 */
import { StreamMessageReader, StreamMessageWriter, type MessageReader, type MessageWriter } from 'vscode-jsonrpc/node.js';

/** A Content-Length reader over a child's stdout. */
export function createFramedReader(readable: NodeJS.ReadableStream, _options: { log?: (line: string) => void } = {}): MessageReader {
  return new StreamMessageReader(readable);
}

/** A Content-Length writer onto a child's stdin. */
export function createFramedWriter(writable: NodeJS.WritableStream): MessageWriter {
  return new StreamMessageWriter(writable);
}
