/**
 * Settles with the promise, or rejects once the signal aborts (tools that ignore it) —
 * after `graceMs` for tools that stop themselves and report it.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal, graceMs = 0): Promise<T> {
  if (signal.aborted && graceMs <= 0) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    let grace: NodeJS.Timeout | undefined;
    const onAbort = (): void => {
      if (graceMs > 0) grace = setTimeout(() => reject(signal.reason), graceMs);
      else reject(signal.reason);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        clearTimeout(grace);
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(grace);
        signal.removeEventListener('abort', onAbort);
        reject(error);
      }
    );
  });
}
