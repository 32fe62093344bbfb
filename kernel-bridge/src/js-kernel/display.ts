/** Turning JS values into Jupyter MIME bundles. Pure. */
import { inspect } from 'node:util';
import type { JSONValue, MimeBundle } from '../messaging/messages.js';

type Hooks = {
  _repr_mimebundle_?: () => MimeBundle;
  _repr_html_?: () => string;
};

/** A plain object whose keys all look like MIME types: `{ 'text/html': '<b>x</b>' }`. */
export function isMimeBundle(value: unknown): value is MimeBundle {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((k) => /^[a-z]+\/[-+.\w]+$/i.test(k));
}

/** `util.inspect` as the kernel prints it (no colours, bounded depth). */
export function plainText(value: unknown): string {
  return typeof value === 'string'
    ? inspect(value)
    : inspect(value, { depth: 4, maxArrayLength: 100, breakLength: 100 });
}

/**
 * The bundle of a result value: `_repr_mimebundle_()` if the value offers it, else
 * `text/plain` (+ `text/html` from `_repr_html_()`).
 */
export function resultBundle(value: unknown): MimeBundle {
  const hooks = (typeof value === 'object' || typeof value === 'function') && value !== null ? (value as Hooks) : {};
  if (typeof hooks._repr_mimebundle_ === 'function') {
    const b = hooks._repr_mimebundle_();
    if (isMimeBundle(b)) return b;
  }
  const bundle: MimeBundle = { 'text/plain': plainText(value) };
  if (typeof hooks._repr_html_ === 'function') bundle['text/html'] = String(hooks._repr_html_());
  return bundle;
}

/** `display(x)`: a MIME bundle is sent as is; anything else as its result bundle. */
export function displayBundle(value: unknown): MimeBundle {
  if (isMimeBundle(value)) {
    // Keep JSON-able values as they are (application/json may be an object).
    return JSON.parse(JSON.stringify(value)) as Record<string, JSONValue>;
  }
  return resultBundle(value);
}
