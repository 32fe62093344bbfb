/**
 * The two halves of LSP-2: a file's root (the nearest folder, from the file up to the
 * workspace, holding one of the entry's root markers) and the entry's executable. Either
 * missing → the server does not start, and `status` says which half. What counts as a
 * marker and as an executable is `workspace/executables.ts`, the rule the debug adapters
 * follow too.
 *
 * Where an executable may come from depends on workspace trust (`security/workspace-trust.ts`):
 * a trusted workspace's own `node_modules/.bin` and `.venv/bin` come first (root, then
 * workspace), then the absolute `PATH` entries, then the servers Cellmate ships. In an
 * untrusted workspace the project folders are not searched at all — a cloned repository's
 * planted `node_modules/.bin/basedpyright-langserver` or `tsc` would otherwise run on the
 * first read-tier `lsp` call — so only `PATH` and Cellmate's own servers count.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import {
  findRootMarker,
  firstExecutable,
  isExecutableFile,
  pathDirs,
  projectFolders
} from '../workspace/executables.js';
import type { ServerEntry } from './server-table.js';

/** Nearest folder from `absoluteFile`'s folder up to `workspace` with one of `markers` (`workspace/executables.ts`). */
export async function findRoot(
  absoluteFile: string,
  markers: readonly string[],
  workspace: string
): Promise<{ root: string; marker: string } | undefined> {
  const dir = (await stat(absoluteFile).then(
    (s) => s.isDirectory(),
    () => false
  ))
    ? absoluteFile
    : path.dirname(absoluteFile);
  return findRootMarker(dir, markers, workspace);
}

/** Options of {@link locateServer}. */
export interface ExecutableSearch {
  root: string;
  workspace: string;
  /** `PATH` to search (the companion's, unless a test hides something). */
  pathEnv: string | undefined;
  /** Folders of the servers Cellmate itself ships (its `node_modules/.bin`), searched last. */
  bundledBins: readonly string[];
  /** Whether the workspace is trusted: only then are its own `node_modules/.bin` and `.venv/bin` searched. */
  trusted: boolean;
}

/** The folders searched, in order (see the module comment). */
export function searchDirs(search: ExecutableSearch): string[] {
  const project = projectFolders(
    search.trusted,
    [...new Set([search.root, search.workspace])].flatMap((d) => [
      path.join(d, 'node_modules', '.bin'),
      path.join(d, '.venv', 'bin')
    ])
  );
  return [...new Set([...project, ...pathDirs(search.pathEnv), ...search.bundledBins])];
}

/** The absolute executable for `entry.command`, or undefined when none resolves. */
export async function locateServer(
  entry: Pick<ServerEntry, 'command'>,
  search: ExecutableSearch
): Promise<string | undefined> {
  return locateCommand(entry.command, search);
}

/** {@link locateServer} for any command name (checkers use it too). */
export async function locateCommand(command: string, search: ExecutableSearch): Promise<string | undefined> {
  if (command.includes('/')) {
    const absolute = path.isAbsolute(command) ? command : path.resolve(search.root, command);
    return isExecutableFile(absolute) ? absolute : undefined;
  }
  return firstExecutable(command, searchDirs(search));
}
