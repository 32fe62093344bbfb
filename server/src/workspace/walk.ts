import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

/** Folders never searched (noise, or Cellmate's own state). Reported in descriptions. */
export const SKIPPED_DIRS: ReadonlySet<string> = new Set([
  '.git',
  'node_modules',
  '.cellmate',
  '.venv',
  '__pycache__',
  '.ipynb_checkpoints'
]);

/**
 * Yields regular files under `root` (absolute), depth-first in name order, as paths
 * relative to `base` with `/` separators. Symlinks are not followed (they could leave the
 * workspace), skipped folders are not entered.
 */
export async function* walkFiles(root: string, base: string, signal: AbortSignal): AsyncGenerator<string> {
  const info = await lstat(root);
  if (info.isFile()) {
    yield toRel(base, root);
    return;
  }
  const stack: string[] = [root];
  while (stack.length > 0) {
    signal.throwIfAborted();
    const dir = stack.pop()!;
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    entries.sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
    const files: string[] = [];
    for (const e of entries) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (!SKIPPED_DIRS.has(e.name)) stack.push(full);
      } else if (e.isFile()) files.push(full);
    }
    for (const f of files.reverse()) yield toRel(base, f);
  }
}

function toRel(base: string, target: string): string {
  return path.relative(base, target).split(path.sep).join('/');
}

/**
 * A glob as a RegExp over `/`-separated relative paths: `**` any number of folders, `*`
 * anything but `/`, `?` one character but `/`, `{a,b}` alternatives, `[abc]` classes.
 * A pattern without `/` matches the file name in any folder.
 */
export function globToRegExp(pattern: string): RegExp {
  const anyFolder = !pattern.includes('/');
  let re = '';
  let i = 0;
  let braces = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === '*') {
      if (pattern[i + 1] === '*') {
        const slash = pattern[i + 2] === '/';
        re += slash ? '(?:[^/]*/)*' : '.*';
        i += slash ? 3 : 2;
        continue;
      }
      re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '{') {
      re += '(?:';
      braces++;
    } else if (c === '}' && braces > 0) {
      re += ')';
      braces--;
    } else if (c === ',' && braces > 0) re += '|';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 1);
      if (end < 0) re += '\\[';
      else {
        re += `[${pattern
          .slice(i + 1, end)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else re += c.replace(/[.+^$()|\\]/g, '\\$&');
    i++;
  }
  return new RegExp(anyFolder ? `(?:^|/)${re}$` : `^${re}$`);
}
