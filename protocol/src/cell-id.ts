/**
 * Fresh nbformat cell ids, made the same way by the server (a notebook on disk) and the pane
 * (an open notebook), so a cell's id does not say which side inserted it. Web Crypto's
 * `getRandomValues` exists in browsers and in Node, which keeps this module browser-safe.
 */

/** The part of Web Crypto used here (`lib` is ES2022: no DOM types). */
declare const crypto: { getRandomValues<T extends Uint8Array>(array: T): T };

/** A fresh cell id of 8 hex digits (the length JupyterLab gives) not in `taken`. */
export function newCellId(taken: ReadonlySet<string>): string {
  for (;;) {
    const id = Array.from(crypto.getRandomValues(new Uint8Array(4)), (b) => b.toString(16).padStart(2, '0')).join('');
    if (!taken.has(id)) return id;
  }
}
