/**
 * The Python a notebook's kernel runs, for the interpreter setting of the language server
 * that serves a notebook in a plain folder (no root marker): imports the kernel can import
 * then resolve, with no project file to say where packages live.
 *
 * The kernelspec the notebook names (`metadata.kernelspec.name`) is looked up by
 * jupyter_client itself, run by Cellmate's Python (`workspace/cellmate-python.ts`, the
 * Jupyter environment's), so Jupyter's search path and its native `python3` spec are
 * exactly Jupyter's. A spec whose argv starts with a bare `python`/`python3` runs
 * Jupyter's own Python (jupyter_client swaps it for `sys.executable`). A spec's
 * interpreter inside the workspace is the repository's code: it is used only when the
 * workspace is trusted; an untrusted workspace gets Cellmate's Python instead.
 */
import { execFile } from 'node:child_process';
import { readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { childEnv } from '../security/child-env.js';
import { cellmatePython } from '../workspace/cellmate-python.js';

/** The interpreter chosen for a notebook, and why when it is not the kernel's. */
export interface KernelPython {
  python: string | undefined;
  /** Set when the kernel's own interpreter was not used (shown by `status`). */
  note?: string;
}

const SPEC = [
  'import json, sys',
  'from jupyter_client.kernelspec import KernelSpecManager',
  's = KernelSpecManager().get_kernel_spec(sys.argv[1])',
  'print(json.dumps({"argv": s.argv, "language": s.language}))'
].join('\n');

/** Kernelspec look-ups by Python and name (each one starts a Python process; a reload forgets them). */
export type SpecCache = Map<string, Promise<{ argv: string[]; language?: string } | undefined>>;

const BARE_PYTHON = /^python(\d+(\.\d+)?)?$/;

/** The kernelspec name and language a notebook file names, if any. */
export async function notebookKernelspec(notebook: string): Promise<{ name: string; language?: string } | undefined> {
  try {
    const nb = JSON.parse(await readFile(notebook, 'utf8')) as {
      metadata?: { kernelspec?: { name?: unknown; language?: unknown } };
    };
    const spec = nb.metadata?.kernelspec;
    if (typeof spec?.name !== 'string' || !spec.name) return undefined;
    return { name: spec.name, ...(typeof spec.language === 'string' ? { language: spec.language } : {}) };
  } catch {
    return undefined;
  }
}

/** Looks up a kernelspec's argv with jupyter_client, run by `python`. */
function specArgv(
  python: string,
  name: string,
  env: NodeJS.ProcessEnv
): Promise<{ argv: string[]; language?: string } | undefined> {
  return new Promise((resolve) => {
    // -I: the companion's working folder and user site never shadow jupyter_client.
    execFile(python, ['-I', '-c', SPEC, name], { env: childEnv(env), timeout: 20_000, cwd: '/' }, (error, stdout) => {
      if (error) return resolve(undefined);
      try {
        const spec = JSON.parse(stdout.trim().split('\n').pop() ?? '') as { argv?: unknown; language?: unknown };
        const argv = Array.isArray(spec.argv) ? spec.argv.filter((a): a is string => typeof a === 'string') : [];
        resolve(
          argv.length ? { argv, ...(typeof spec.language === 'string' ? { language: spec.language } : {}) } : undefined
        );
      } catch {
        resolve(undefined);
      }
    });
  });
}

/** The interpreter of the kernel `notebook` names (see the module comment). */
export async function kernelPythonFor(
  notebook: string,
  options: { workspace: string; env: NodeJS.ProcessEnv; trusted: boolean; cache?: SpecCache }
): Promise<KernelPython> {
  const jupyterPython = cellmatePython(options.env);
  const named = await notebookKernelspec(notebook);
  if (!named) return { python: jupyterPython, note: "the notebook names no kernel: Jupyter's Python" };
  if (!jupyterPython) return { python: undefined, note: 'no Python found for Jupyter (set CELLMATE_PYTHON)' };
  const key = `${jupyterPython}\u0000${named.name}`;
  let lookup = options.cache?.get(key);
  if (!lookup) {
    lookup = specArgv(jupyterPython, named.name, options.env);
    options.cache?.set(key, lookup);
  }
  const spec = await lookup;
  if (!spec) return { python: jupyterPython, note: `kernel "${named.name}" is not installed: Jupyter's Python` };
  if (spec.language && spec.language.toLowerCase() !== 'python')
    return { python: undefined, note: `kernel "${named.name}" is not a Python kernel` };
  const first = spec.argv[0]!;
  if (BARE_PYTHON.test(first)) return { python: jupyterPython };
  if (!path.isAbsolute(first) || !BARE_PYTHON.test(path.basename(first))) {
    return {
      python: jupyterPython,
      note: `kernel "${named.name}" starts with ${JSON.stringify(first)}, not a Python interpreter: Jupyter's Python`
    };
  }
  const real = await realpath(first).catch(() => undefined);
  if (!real)
    return {
      python: jupyterPython,
      note: `kernel "${named.name}"'s interpreter ${first} does not exist: Jupyter's Python`
    };
  const top = await realpath(options.workspace).catch(() => path.resolve(options.workspace));
  const inside = (p: string): boolean => p === top || p.startsWith(top + path.sep);
  // Both the path as written and where it leads: a symlink out of the workspace is still the workspace's file.
  if (!options.trusted && (inside(path.resolve(first)) || inside(real))) {
    return {
      python: jupyterPython,
      note: `kernel "${named.name}"'s interpreter ${path.relative(top, path.resolve(first))} is inside this untrusted workspace: Cellmate's Python instead (trust the workspace to use it)`
    };
  }
  return { python: first };
}
