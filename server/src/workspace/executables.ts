/**
 * The one rule for "root marker AND executable" (SPEC LSP-2, DBG-4), shared by the language
 * servers (`lsp/locate.ts`), the debug adapters (`dap/adapters.ts`) and, for its executable
 * half, Cellmate's own Python (`cellmate-python.ts`) and `$CELLMATE_TOOL_BINS` (`tool-bins.ts`):
 * - a root marker counts only in a folder from the file's (or program's) folder up to the
 *   workspace root — never above the workspace, never in a sibling folder whose name merely
 *   starts with the workspace's, and not at all for a file outside the workspace;
 * - an executable counts only as a regular file the companion may execute (a folder, or a
 *   file without the exec bit, named like the program is skipped, as a shell would);
 * - `PATH` counts only for its absolute entries: a relative one (`.`, `node_modules/.bin`)
 *   names whatever folder the companion happens to run in, often the workspace itself;
 * - a workspace's own folders (`node_modules/.bin`, `.venv/bin` …) are searched only when
 *   the workspace is trusted: a cloned repository's planted program is its code, and it
 *   would otherwise run on the first read-tier call.
 */
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { isInside } from './workspace-path.js';

/** The folders from `from` up to the workspace root, nearest first; none when `from` is outside it. */
export function foldersUpToWorkspace(from: string, workspace: string): string[] {
  const top = path.resolve(workspace);
  const out: string[] = [];
  for (let d = path.resolve(from); isInside(top, d); d = path.dirname(d)) {
    out.push(d);
    if (d === top) break;
  }
  return out;
}

/** The nearest folder from `from` up to the workspace root holding one of `markers` (first listed wins within a folder). */
export function findRootMarker(
  from: string,
  markers: readonly string[],
  workspace: string
): { root: string; marker: string } | undefined {
  for (const root of foldersUpToWorkspace(from, workspace)) {
    for (const marker of markers) if (existsSync(path.join(root, marker))) return { root, marker };
  }
  return undefined;
}

/** Whether `file` is a regular file the companion may execute. */
export function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The absolute entries of a `PATH` value, in order. A relative entry and an empty one (which
 * a shell reads as `.`) are dropped: both resolve against the companion's working folder.
 */
export function pathDirs(pathEnv: string | undefined): string[] {
  return (pathEnv ?? '').split(path.delimiter).filter((d) => path.isAbsolute(d));
}

/** The first `dirs/name` that is an executable file. */
export function firstExecutable(name: string, dirs: readonly string[]): string | undefined {
  return dirs.map((d) => path.join(d, name)).find(isExecutableFile);
}

/** The first executable file `name` in an absolute entry of the `PATH` value `pathEnv`. */
export function executableOnPath(name: string, pathEnv: string | undefined): string | undefined {
  return firstExecutable(name, pathDirs(pathEnv));
}

/** `folders` when the workspace is trusted, else none: only a trusted workspace's own programs may run. */
export function projectFolders(trusted: boolean, folders: readonly string[]): string[] {
  return trusted ? [...folders] : [];
}
