/**
 * Events are vscode-jsonrpc's, the `Emitter` the companion server and the pane already use,
 * so Cellmate has one: a listener that throws is logged and the others still run.
 */
export { Emitter, type Disposable, type Event } from 'vscode-jsonrpc/node.js';

/**
 * Resolves when `promise` settles, rejects with `onTimeout()` after `ms`, or with
 * `onAbort()` when `signal` aborts. Cleans its timer and listener either way.
 */
export function withDeadline<T>(
  promise: Promise<T>,
  opts: { ms?: number; signal?: AbortSignal; onTimeout: () => Error; onAbort: () => Error }
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const cleanup = () => {
      if (timer) clearTimeout(timer);
      opts.signal?.removeEventListener('abort', abort);
    };
    const abort = () => {
      cleanup();
      reject(opts.onAbort());
    };
    if (opts.signal?.aborted) return abort();
    opts.signal?.addEventListener('abort', abort, { once: true });
    if (opts.ms !== undefined && Number.isFinite(opts.ms)) {
      timer = setTimeout(() => {
        cleanup();
        reject(opts.onTimeout());
      }, opts.ms);
    }
    promise.then(
      (v) => {
        cleanup();
        resolve(v);
      },
      (e) => {
        cleanup();
        reject(e);
      }
    );
  });
}
