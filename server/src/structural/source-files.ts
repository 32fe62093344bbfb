/**
 * The files structural search looks at (SPEC AST-3): regular files under a folder, in name
 * order, honouring every `.gitignore` from the workspace root down (nested ones apply to
 * their own folder), never entering `workspace/walk.ts`'s skipped folders (`node_modules`,
 * `.venv`, `.cellmate`, `.git`…), never following symlinks, skipping binaries and files
 * over 5 MB. Yields workspace-relative `/` paths.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Ignore } from 'ignore';
import { looksBinary } from '../workspace/binary.js';
import { SKIPPED_DIRS } from '../workspace/walk.js';

/** Files larger than this are not parsed. */
export const MAX_SOURCE_BYTES = 5 * 1024 * 1024;

interface Rules {
  /** Folder (workspace-relative, '' for the root) the rules are relative to. */
  dir: string;
  ig: Ignore;
}

/** Yields the workspace-relative paths of the searchable files under `relRoot`. */
export async function* sourceFiles(workspace: string, relRoot: string, signal: AbortSignal): AsyncGenerator<string> {
  const root = relRoot === '.' ? '' : relRoot;
  const rules: Rules[] = [];
  // The .gitignore files of every folder above the search root apply too.
  const parts = root === '' ? [] : root.split('/');
  for (let i = 0; i < parts.length; i++) await addRules(workspace, parts.slice(0, i).join('/'), rules);
  const info = await lstat(path.join(workspace, root));
  if (info.isFile()) {
    if (!ignored(rules, root, false)) yield root;
    return;
  }
  yield* walk(workspace, root, rules, signal);
}

async function* walk(workspace: string, dir: string, inherited: Rules[], signal: AbortSignal): AsyncGenerator<string> {
  signal.throwIfAborted();
  const rules = [...inherited];
  const entries = await readdir(path.join(workspace, dir), { withFileTypes: true }).catch(() => []);
  // Read a folder's .gitignore only where the listing shows one (most folders have none).
  if (entries.some((e) => e.name === '.gitignore')) await addRules(workspace, dir, rules);
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const rel = dir === '' ? e.name : `${dir}/${e.name}`;
    if (e.isDirectory()) {
      if (SKIPPED_DIRS.has(e.name) || ignored(rules, rel, true)) continue;
      yield* walk(workspace, rel, rules, signal);
    } else if (e.isFile() && !ignored(rules, rel, false)) yield rel;
  }
}

async function addRules(workspace: string, dir: string, rules: Rules[]): Promise<void> {
  const text = await readFile(path.join(workspace, dir, '.gitignore'), 'utf8').catch(() => undefined);
  if (text !== undefined) rules.push({ dir, ig: (await loadIgnore())().add(text) });
}

function ignored(rules: readonly Rules[], rel: string, isDir: boolean): boolean {
  for (const { dir, ig } of rules) {
    const sub = dir === '' ? rel : rel.startsWith(`${dir}/`) ? rel.slice(dir.length + 1) : undefined;
    if (sub && ig.ignores(isDir ? `${sub}/` : sub)) return true;
  }
  return false;
}

/**
 * Reads a file as text, or undefined when it is missing, too large or binary. Synchronous:
 * for a search that reads thousands of files, each read is a few microseconds of syscalls
 * from the page cache, cheaper than the four thread-pool round trips of an async read;
 * callers yield to the event loop between files or batches.
 */
export function readSourceTextSync(absolute: string): string | undefined {
  return readSourceBytesSync(absolute)?.toString('utf8');
}

/**
 * The bytes {@link readSourceTextSync} decodes (same checks: missing, over
 * {@link MAX_SOURCE_BYTES} or binary → undefined). Structural search looks at the bytes
 * before deciding who parses the file (`native-search.ts`).
 */
export function readSourceBytesSync(absolute: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(absolute, 'r');
  } catch {
    return undefined;
  }
  try {
    const { size } = fstatSync(fd);
    if (size > MAX_SOURCE_BYTES) return undefined;
    const buffer = Buffer.allocUnsafe(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, buffer, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    const bytes = buffer.subarray(0, read);
    if (looksBinary(bytes.subarray(0, 4096))) return undefined;
    return bytes;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

type IgnoreFactory = () => Ignore;
let ignoreModule: Promise<IgnoreFactory> | undefined;
/** The `ignore` package, imported on the first walk (the companion starts without it). */
function loadIgnore(): Promise<IgnoreFactory> {
  // `ignore` ships CommonJS typings whose default export TypeScript sees as a namespace under Node16 resolution.
  ignoreModule ??= import('ignore').then((m) => m.default as unknown as IgnoreFactory);
  return ignoreModule;
}
