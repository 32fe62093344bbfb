/**
 * Where the language servers Cellmate ships live: the `.bin` folder next to the installed
 * `basedpyright` and `typescript-language-server` packages (npm dependencies of
 * `@cellmate/server`, installed by `scripts/setup`). Searched after the project's own bins
 * and PATH.
 */
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

/** The `.bin` folders of the shipped servers (those that are installed). */
export function bundledServerBins(): string[] {
  const dirs = new Set<string>();
  for (const pkg of ['basedpyright', 'typescript-language-server', 'typescript']) {
    try {
      dirs.add(path.join(path.dirname(require.resolve(`${pkg}/package.json`)), '..', '.bin'));
    } catch {
      // not installed (a trimmed bundle): PATH and the project's bins still count
    }
  }
  return [...dirs];
}
