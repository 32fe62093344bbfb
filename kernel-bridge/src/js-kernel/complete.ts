/** Completion and inspection against a live `vm` context. */
import { inspect } from 'node:util';
import vm from 'node:vm';
import type { MimeBundle } from '../messaging/messages.js';

const KEYWORDS = [
  'await',
  'break',
  'case',
  'catch',
  'class',
  'const',
  'continue',
  'debugger',
  'default',
  'delete',
  'do',
  'else',
  'export',
  'extends',
  'false',
  'finally',
  'for',
  'function',
  'if',
  'import',
  'in',
  'instanceof',
  'let',
  'new',
  'null',
  'return',
  'super',
  'switch',
  'this',
  'throw',
  'true',
  'try',
  'typeof',
  'undefined',
  'var',
  'void',
  'while',
  'with',
  'yield',
  'async',
  'of'
];

/** Code points before a UTF-16 offset (the protocol counts cursor_pos in code points). */
function toCodePoints(s: string, utf16: number): number {
  return Array.from(s.slice(0, utf16)).length;
}
function fromCodePoints(s: string, cp: number): number {
  return Array.from(s).slice(0, cp).join('').length;
}

/** Resolves `a.b.c` against the context by property access (getters may run). */
function resolvePath(context: vm.Context, path: string[]): { found: boolean; value: unknown } {
  // The context's own global (seen from inside) has the builtins; the sandbox object does not.
  let value: unknown = vm.runInContext('globalThis', context);
  for (const seg of path) {
    if (value === null || value === undefined) return { found: false, value: undefined };
    try {
      if (!(seg in Object(value))) return { found: false, value: undefined };
      value = (value as Record<string, unknown>)[seg];
    } catch {
      return { found: false, value: undefined };
    }
  }
  return { found: true, value };
}

function propertyNames(value: unknown): string[] {
  const names = new Set<string>();
  for (let o: unknown = Object(value); o !== null && o !== undefined; o = Object.getPrototypeOf(o)) {
    for (const n of Object.getOwnPropertyNames(o)) names.add(n);
  }
  return [...names];
}

export interface Completion {
  matches: string[];
  cursorStart: number;
  cursorEnd: number;
}

/** Global names (context globals + builtins + keywords), or properties after a dot. */
export function complete(context: vm.Context, code: string, cursorPos: number): Completion {
  const cursor = fromCodePoints(code, cursorPos);
  const before = code.slice(0, cursor);
  const m = /((?:[A-Za-z_$][\w$]*\s*\??\.\s*)*)([A-Za-z_$][\w$]*)?$/.exec(before)!;
  const objectPath = m[1]!
    .split(/\??\./)
    .map((s) => s.trim())
    .filter(Boolean);
  const prefix = m[2] ?? '';
  let candidates: string[];
  if (objectPath.length) {
    const { found, value } = resolvePath(context, objectPath);
    candidates = found ? propertyNames(value).filter((n) => /^[A-Za-z_$][\w$]*$/.test(n)) : [];
  } else {
    const globals = vm.runInContext('Object.getOwnPropertyNames(globalThis)', context) as string[];
    candidates = [...globals, ...KEYWORDS];
  }
  const matches = [...new Set(candidates.filter((n) => n.startsWith(prefix) && !n.startsWith('__cellmate')))].sort();
  const start = cursor - prefix.length;
  return { matches, cursorStart: toCodePoints(code, start), cursorEnd: cursorPos };
}

/** `inspect_request`: the dotted name under the cursor, its type and a short form. */
export function inspectAt(context: vm.Context, code: string, cursorPos: number): { found: boolean; data: MimeBundle } {
  const cursor = fromCodePoints(code, cursorPos);
  const left = /[\w$.]*$/.exec(code.slice(0, cursor))![0];
  const right = /^[\w$]*/.exec(code.slice(cursor))![0];
  const path = (left + right).split('.').filter(Boolean);
  if (!path.length) return { found: false, data: {} };
  const { found, value } = resolvePath(context, path);
  if (!found) return { found: false, data: {} };
  let text = `${path.join('.')}: ${typeof value}\n`;
  if (typeof value === 'function') {
    text += Function.prototype.toString.call(value).split('\n').slice(0, 20).join('\n');
  } else {
    text += inspect(value, { depth: 2 });
  }
  return { found: true, data: { 'text/plain': text } };
}
