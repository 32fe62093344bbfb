/**
 * The Python Cellmate itself stands behind: `$CELLMATE_PYTHON` (the Jupyter environment's
 * Python, which runs the notebooks' ipykernel), else Cellmate's own `.venv` in a checkout,
 * else `python3` on `PATH` (by `executables.ts`'s one rule: absolute entries only). Private
 * kernels start with it, and in an untrusted workspace it is the interpreter language servers
 * and debug adapters are given, never a repository's `.venv/bin/python`: a cloned
 * repository's interpreter is its code.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { executableOnPath } from './executables.js';

/** Cellmate's checkout (three folders up from `server/{src,dist}/workspace/`). */
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** `$CELLMATE_PYTHON`, else the checkout's `.venv/bin/python`, else `python3` on `PATH`; undefined when none exists. */
export function cellmatePython(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.CELLMATE_PYTHON) return env.CELLMATE_PYTHON;
  const venv = path.join(REPO, '.venv', 'bin', 'python');
  if (existsSync(venv)) return venv;
  return executableOnPath('python3', env.PATH);
}
