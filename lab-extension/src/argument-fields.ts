/**
 * A tool call's arguments as a person reads them (no DOM), on approval and tool cards:
 * labelled fields, a shell command or a rewrite pattern verbatim — not a JSON string with
 * its quotes and `\n` escaped.
 */

/** One argument: its name in words, its value as text, and whether it needs a block of its own. */
export interface IArgumentField {
  label: string;
  value: string;
  /** Code-like or long values (several lines, nested data) go in a preformatted block. */
  block: boolean;
}

/** Past this many characters a one-line value reads better in a block of its own. */
const INLINE_MAX = 60;

/** The fields of `args` in their order; an argument that is not an object is one field, "arguments". */
export function argumentFields(args: unknown): IArgumentField[] {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return args === undefined ? [] : [field('arguments', args)];
  }
  return Object.entries(args as Record<string, unknown>)
    .filter(([, value]) => value !== undefined && value !== null && value !== '')
    .map(([key, value]) => field(key, value));
}

function field(key: string, value: unknown): IArgumentField {
  const label = key.replace(/_/g, ' ');
  if (typeof value === 'string') {
    return { label, value, block: value.includes('\n') || value.length > INLINE_MAX };
  }
  if (typeof value === 'number' || typeof value === 'boolean') {
    return { label, value: String(value), block: false };
  }
  if (Array.isArray(value) && value.every((v) => typeof v === 'string' || typeof v === 'number')) {
    const text = value.join(', ');
    return { label, value: text, block: text.length > INLINE_MAX };
  }
  let text: string;
  try {
    text = JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    text = String(value);
  }
  return { label, value: text, block: true };
}
