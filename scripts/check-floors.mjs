#!/usr/bin/env node
// The companion's floor plan, checked: each folder of server/src sits on a floor, and a file
// may import only from its own folder or from a floor below. File cycles are dpdm's job;
// this catches the folder-level arrows that point up, which file-level checks miss because
// two folders can import each other without any file cycle. Folders on the same floor are
// siblings and do not import each other.
//
//   node scripts/check-floors.mjs [server/src]    # exit 1 and one line per upward import
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Lowest floor first. The root files (server.ts, main.ts, index.ts) are the roof. */
export const FLOORS = [
  ['base', 'config', 'framing', 'ports'],
  ['security', 'housekeeping'],
  ['supervisor'],
  ['workspace'],
  ['notebooks'],
  ['edits'],
  ['structural'],
  ['policy', 'audit', 'questions'],
  ['gate'],
  ['lsp', 'dap', 'kernels', 'skills', 'instructions', 'providers'],
  ['context', 'checkpoints', 'verify', 'commands'],
  ['modes'],
  ['tools'],
  ['agent'],
  ['chats', 'inline'],
  ['flows', 'workers'],
  ['mcp'],
  ['transport'],
  ['.']
];

const IMPORT =
  /(?:\bimport|\bexport)\s[^'"]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]|\bimport\s*\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)|\bimport\s+['"](\.{1,2}\/[^'"]+)['"]/g;

/** The upward imports under `root`, as `file: imports target (floor a → floor b)` lines. */
export function upwardImports(root, floors = FLOORS) {
  const floorOf = new Map();
  floors.forEach((names, i) => names.forEach((name) => floorOf.set(name, i)));
  const folderOf = (file) => {
    const parts = path.relative(root, file).split(path.sep);
    return parts.length > 1 ? parts[0] : '.';
  };
  const problems = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (/\.(ts|mts)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) check(file);
    }
  };
  const check = (file) => {
    const from = folderOf(file);
    if (!floorOf.has(from)) {
      problems.push(
        `${path.relative(root, file)}: folder "${from}" has no floor; add it to FLOORS in scripts/check-floors.mjs`
      );
      return;
    }
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const spec = match[1] ?? match[2] ?? match[3];
      const target = path.resolve(path.dirname(file), spec);
      if (!target.startsWith(root + path.sep)) continue;
      const to = folderOf(target);
      if (to === from) continue;
      const a = floorOf.get(from);
      const b = floorOf.get(to);
      if (b === undefined || b >= a) {
        const why =
          b === undefined
            ? `"${to}" has no floor`
            : b === a
              ? `"${from}" and "${to}" are siblings on one floor`
              : `"${to}" is above "${from}"`;
        problems.push(`${path.relative(root, file)}: imports ${spec} (${why})`);
      }
    }
  };
  walk(root);
  return problems;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const root = path.resolve(process.argv[2] ?? path.join(here, '..', 'server', 'src'));
  const problems = upwardImports(root);
  for (const line of problems) console.error(line);
  if (problems.length > 0) {
    console.error(
      `\n${problems.length} import(s) go up a floor. Move the shared piece down a floor, or hand it in from above (a parameter or a port).`
    );
    process.exit(1);
  }
  console.log(`floors: ${root} imports only downward`);
}
