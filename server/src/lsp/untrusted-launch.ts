/**
 * What a language server and a project checker are told in an untrusted workspace so that
 * they load none of the repository's code (`security/workspace-trust.ts` is the switch):
 *
 * - pyright and basedpyright with no interpreter setting run `<root>/.venv/bin/python -I -c …`
 *   to learn the import paths: they get an explicit one, Cellmate's own Python
 *   (`workspace/cellmate-python.ts`: the kernels' Python, so imports the notebooks use resolve);
 * - typescript-language-server loads the root's `node_modules/typescript/lib/tsserver.js`,
 *   and looks for one in every folder above the root: it gets `tsserver.path` pinned to the
 *   TypeScript Cellmate ships (whose plugin probe location is Cellmate's own `node_modules`).
 *
 * A value the person set in their own `~/.cellmate/lsp.json` stands (a workspace's own file
 * cannot set settings or initialization options while untrusted). In a trusted workspace
 * nothing changes: its `.venv` and `node_modules` are the project's tools.
 */
import path from 'node:path';
import type { ServerEntry } from './server-table.js';

/** A path that can never exist (a file below `/dev/null`): the interpreter when Cellmate has none. */
export const NO_PYTHON = '/dev/null/python';

/** The interpreter and the tsserver an untrusted workspace's servers get. */
export interface PinnedTools {
  python: string | undefined;
  tsserver: string | undefined;
}

const PYRIGHT = /^(based)?pyright(-langserver)?$/;

/**
 * `entry` as it starts for `executable` (unchanged when `trusted` and no `interpreter`).
 * `interpreter`: the Python a notebook folder's server is given (its kernel's, already
 * judged by `kernel-python.ts`); a `pythonPath` the table sets still stands.
 */
export function launchEntry(
  entry: ServerEntry,
  executable: string,
  trusted: boolean,
  pinned: PinnedTools,
  interpreter?: string
): ServerEntry {
  const program = path.basename(executable);
  if (PYRIGHT.test(program) && (interpreter || !trusted)) {
    const settings = structuredClone((entry.settings ?? {}) as Record<string, unknown>);
    const python = (settings.python ??= {}) as Record<string, unknown>;
    if (typeof python.pythonPath !== 'string') python.pythonPath = interpreter ?? pinned.python ?? NO_PYTHON;
    return { ...entry, settings };
  }
  if (trusted) return entry;
  if (program === 'typescript-language-server' && pinned.tsserver) {
    const init = structuredClone((entry.initializationOptions ?? {}) as Record<string, unknown>);
    const tsserver = (init.tsserver ??= {}) as Record<string, unknown>;
    if (typeof tsserver.path !== 'string') tsserver.path = pinned.tsserver;
    return { ...entry, initializationOptions: init };
  }
  return entry;
}

/** A checker's arguments as it runs (pyright's CLI gets `--pythonpath` for the same reason as its server). */
export function checkerArgs(
  executable: string,
  args: readonly string[],
  trusted: boolean,
  pinned: PinnedTools
): string[] {
  if (
    trusted ||
    !PYRIGHT.test(path.basename(executable)) ||
    args.some((a) => a === '--pythonpath' || a.startsWith('--pythonpath='))
  )
    return [...args];
  return [...args, '--pythonpath', pinned.python ?? NO_PYTHON];
}
