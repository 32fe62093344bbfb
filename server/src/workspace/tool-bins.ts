/**
 * Where the language servers Cellmate ships live, searched after the project's own bins and
 * PATH (lsp/locate.ts):
 *
 * - the `.bin` folder next to the installed `basedpyright`, `typescript-language-server` and
 *   `typescript` packages — npm dependencies of `@cellmate/server` in a checkout, the shims
 *   `scripts/bundle.mjs` writes in a wheel's bundle;
 * - the folders in `$CELLMATE_TOOL_BINS` (path-delimited): jupyterlab_cellmate sets it to its
 *   Python environment's scripts folder, where a wheel's `basedpyright` (PyPI) put
 *   `basedpyright-langserver` — found even when that folder is not on PATH.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathDirs } from './executables.js';

const require = createRequire(import.meta.url);

/**
 * The folders in `$CELLMATE_TOOL_BINS` (the wheel's Python scripts folder), in order: its
 * absolute entries only, by the same rule as `PATH` (a relative one would resolve against
 * the folder the companion runs in, often a cloned repository).
 */
export function toolBinDirs(env: NodeJS.ProcessEnv = process.env): string[] {
  return pathDirs(env.CELLMATE_TOOL_BINS);
}

/** The folders of the shipped servers (those that are installed), in search order. */
export function bundledServerBins(env: NodeJS.ProcessEnv = process.env): string[] {
  const dirs = new Set<string>();
  for (const pkg of ['basedpyright', 'typescript-language-server', 'typescript']) {
    try {
      dirs.add(path.join(path.dirname(require.resolve(`${pkg}/package.json`)), '..', '.bin'));
    } catch {
      // not installed (a wheel's bundle has no npm basedpyright): the other folders still count
    }
  }
  for (const dir of toolBinDirs(env)) dirs.add(dir);
  return [...dirs];
}

/**
 * The `tsserver.js` of the TypeScript Cellmate ships. typescript-language-server is pinned
 * to it in an untrusted workspace: left alone it loads `<root>/node_modules/typescript/lib/tsserver.js`
 * and searches every folder above the root up to `/` for one — a repository's (or another
 * local user's `/tmp/node_modules`) JavaScript, run by Node with no exec bit needed.
 */
export function bundledTsserver(): string | undefined {
  try {
    return require.resolve('typescript/lib/tsserver.js');
  } catch {
    return undefined;
  }
}
