/** Something that holds resources until `dispose()` is called. Idempotent. */
export interface Disposable {
  dispose(): void;
}

/** A typed event: subscribe with a listener, unsubscribe by disposing the result. */
export type Event<T> = (listener: (value: T) => void) => Disposable;

/** Owns the listeners of one event; `event` is what a class exposes publicly. */
export class Emitter<T> implements Disposable {
  private listeners = new Set<(value: T) => void>();

  readonly event: Event<T> = (listener) => {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  };

  /** Calls every listener; a throwing listener does not stop the others. */
  fire(value: T): void {
    for (const l of [...this.listeners]) {
      try {
        l(value);
      } catch (e) {
        // A broken listener must not break message dispatch; surface it asynchronously.
        queueMicrotask(() => {
          throw e;
        });
      }
    }
  }

  dispose(): void {
    this.listeners.clear();
  }
}

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
