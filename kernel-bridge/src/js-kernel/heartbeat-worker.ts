/**
 * Heartbeat echo (REP) on a worker thread, so the kernel answers pings while a cell
 * keeps the main thread busy — as ipykernel's heartbeat thread does.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Reply } from 'zeromq';

const { url } = workerData as { url: string };
const rep = new Reply({ linger: 0 });
await rep.bind(url);
parentPort?.postMessage('bound');
parentPort?.on('message', (m) => {
  if (m === 'close') {
    rep.close();
    parentPort?.close(); // lets the worker's event loop end
  }
});
try {
  for await (const frames of rep) await rep.send(frames);
} catch {
  // closed
}
