/** Small helpers around zeromq 6 sockets shared by the client and the JS kernel. */
import type { Writable, Readable } from 'zeromq';

/**
 * zeromq 6 rejects a second `send()` while one is pending (EBUSY); this serializes
 * sends per socket. Returns a function that enqueues a multipart message.
 */
export function serialSender(socket: Writable): (frames: Buffer[]) => Promise<void> {
  let chain: Promise<void> = Promise.resolve();
  return (frames) => {
    const next = chain.then(() => socket.send(frames));
    // Keep the chain alive after a failed send; the caller still sees the rejection.
    chain = next.catch(() => undefined);
    return next;
  };
}

/**
 * Reads a socket until it closes, calling `onFrames` for each multipart message.
 * Ends quietly when the socket is closed (the normal way to stop the loop).
 */
export async function readLoop(
  socket: Readable & { closed: boolean },
  onFrames: (frames: Buffer[]) => void | Promise<void>
): Promise<void> {
  try {
    for await (const frames of socket) {
      await onFrames(frames);
    }
  } catch (e) {
    if (socket.closed) return;
    const code = (e as { code?: string }).code;
    if (code === 'ETERM' || code === 'EAGAIN') return;
    throw e;
  }
}
