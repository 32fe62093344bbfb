/**
 * The Content-Length writer: one `write` per message, at once.
 *
 * vscode-jsonrpc's `StreamMessageWriter` writes the header, waits for that write's
 * callback, then writes the body, and holds the next message behind a semaphore until the
 * body's callback: two event-loop round trips per message, queued behind whatever else the
 * loop is doing. On the companion's socket that was most of the time from a text delta
 * leaving the agent to its arrival in the pane (`npm run bench -- turn`,
 * token_to_client). Here a message is framed into one buffer and handed to the stream
 * synchronously, so messages leave in call order without waiting for each other; the
 * returned promise still settles when the stream has taken the bytes.
 */
import { AbstractMessageWriter, type Message, type MessageWriter } from 'vscode-jsonrpc/node.js';

/** A writer onto `writable` (a socket, a child's stdin): UTF-8 JSON bodies. */
export function createFramedWriter(writable: NodeJS.WritableStream): MessageWriter {
  return new FramedMessageWriter(writable);
}

class FramedMessageWriter extends AbstractMessageWriter {
  private errorCount = 0;

  constructor(private readonly writable: NodeJS.WritableStream) {
    super();
    writable.on('error', (error: Error) => this.fireError(error));
    writable.on('close', () => this.fireClose());
  }

  write(msg: Message): Promise<void> {
    let frame: Buffer;
    try {
      const body = Buffer.from(JSON.stringify(msg), 'utf8');
      frame = Buffer.concat([Buffer.from(`Content-Length: ${body.byteLength}\r\n\r\n`, 'ascii'), body]);
    } catch (error) {
      this.fireError(error, msg, ++this.errorCount);
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => {
      this.writable.write(frame, (error?: Error | null) => {
        if (!error) return resolve();
        this.fireError(error, msg, ++this.errorCount);
        reject(error);
      });
    });
  }

  end(): void {
    this.writable.end();
  }
}
