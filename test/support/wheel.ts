/**
 * The self-contained wheel (issue #13) for tests and the install bench: built once with
 * `python -m build --wheel` (rebuilt only when an input is newer than it), installed into
 * fresh venvs, and run on a PATH without Node.js and outside the checkout.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { artifactsDir, repoRoot, venvBin } from './paths';

const run = promisify(execFile);

export const wheelDir = path.join(artifactsDir, 'wheel');
/** Venvs live outside the checkout (a test checks nothing is imported from it), one set per checkout. */
export const venvsDir = path.join(
  os.tmpdir(),
  `cellmate-wheel-venvs-${createHash('sha256').update(repoRoot).digest('hex').slice(0, 10)}`
);

/** Inputs of the wheel: when any is newer than the built wheel, it is built again. */
const INPUTS = [
  'pyproject.toml',
  'hatch_build.py',
  'scripts/bundle.mjs',
  'jupyterlab_cellmate',
  'jupyterlab_cellmate/labextension/package.json',
  'server/dist',
  'kernel-bridge/dist',
  'protocol/dist',
  'package-lock.json'
];

function newestMtime(p: string): number {
  if (!existsSync(p)) return 0;
  const st = statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const e of readdirSync(p, { withFileTypes: true })) {
    if (e.name === '__pycache__' || e.name === 'labextension' || e.name === 'node_modules') continue;
    newest = Math.max(newest, newestMtime(path.join(p, e.name)));
  }
  return newest;
}

function findWheel(): string | undefined {
  if (!existsSync(wheelDir)) return undefined;
  const w = readdirSync(wheelDir).find((f) => f.endsWith('.whl'));
  return w && path.join(wheelDir, w);
}

/** The built wheel's path; builds it (~15 s) unless an up-to-date one exists. */
export async function buildWheel(): Promise<string> {
  const existing = findWheel();
  const inputs = Math.max(...INPUTS.map((p) => newestMtime(path.join(repoRoot, p))));
  if (existing && statSync(existing).mtimeMs > inputs) return existing;
  rmSync(wheelDir, { recursive: true, force: true });
  mkdirSync(wheelDir, { recursive: true });
  await run(
    path.join(venvBin, 'python'),
    ['-m', 'build', '--wheel', '--no-isolation', '--outdir', wheelDir, repoRoot],
    {
      cwd: repoRoot,
      env: { ...process.env, PATH: `${venvBin}:${process.env.PATH ?? ''}` },
      maxBuffer: 64 * 1024 * 1024
    }
  );
  const built = findWheel();
  if (!built) throw new Error(`python -m build left no wheel in ${wheelDir}`);
  return built;
}

/**
 * A venv at <tmp>/cellmate-wheel-venvs-<checkout hash>/<name> with the wheel (and `extra` requirements)
 * installed from PyPI's index through pip's cache; kept while the wheel is unchanged.
 */
export async function wheelVenv(name: string, wheel: string, extra: string[] = []): Promise<string> {
  const dir = path.join(venvsDir, name);
  const python = path.join(dir, 'bin', 'python');
  const stamp = path.join(dir, '.installed');
  if (existsSync(stamp) && statSync(stamp).mtimeMs > statSync(wheel).mtimeMs) return dir;
  rmSync(dir, { recursive: true, force: true });
  // The base interpreter, not the project venv's: the new venv must not see the checkout.
  const base = (
    await run(path.join(venvBin, 'python'), ['-c', 'import sys; print(sys._base_executable)'])
  ).stdout.trim();
  await run(base, ['-m', 'venv', dir], { cwd: '/' });
  await run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', wheel, ...extra], {
    cwd: '/',
    env: { ...process.env, PATH: noNodePath(dir) },
    maxBuffer: 64 * 1024 * 1024
  });
  await run(python, ['-c', `open(${JSON.stringify(stamp)}, "w").close()`]);
  return dir;
}

const HIDDEN = new Set(['node', 'nodejs', 'npm', 'npx', 'corepack', 'yarn', 'pnpm']);

/**
 * A PATH of `<venv>/bin` plus a folder of links to every program of /usr/local/bin,
 * /usr/bin and /bin except Node.js and its package managers: a machine without Node.
 */
export function noNodePath(venv: string): string {
  const farm = path.join(venvsDir, 'no-node-bin');
  if (!existsSync(farm)) {
    mkdirSync(farm, { recursive: true });
    for (const d of ['/usr/local/bin', '/usr/bin', '/bin']) {
      if (!existsSync(d)) continue;
      for (const f of readdirSync(d)) {
        if (HIDDEN.has(f) || existsSync(path.join(farm, f))) continue;
        symlinkSync(path.join(d, f), path.join(farm, f));
      }
    }
  }
  return `${path.join(venv, 'bin')}:${farm}`;
}
