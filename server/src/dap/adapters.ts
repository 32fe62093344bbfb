/**
 * Which debug adapters are usable here and why not (DBG-4/5). A process adapter is usable
 * only where its root marker (in the workspace root or a folder between it and the
 * program) AND its executable exist, by the rule the language servers follow too
 * (`workspace/executables.ts`); {@link describeAdapters} says precisely which half is
 * missing. The `kernel` adapter needs no marker: it debugs notebook cells in the focused
 * notebook's kernel or the chat's private kernel.
 */
import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { cellmatePython } from '../workspace/cellmate-python.js';
import { childEnv } from '../security/child-env.js';
import { isWorkspaceTrusted } from '../security/workspace-trust.js';
import {
  executableOnPath,
  findRootMarker,
  firstExecutable,
  foldersUpToWorkspace,
  isExecutableFile,
  pathDirs,
  projectFolders
} from '../workspace/executables.js';

export type ProcessAdapterName = 'debugpy' | 'lldb' | 'delve';
export type AdapterName = ProcessAdapterName | 'kernel';

/** DBG-4 root markers. */
export const ROOT_MARKERS: Record<ProcessAdapterName, readonly string[]> = {
  debugpy: ['pyproject.toml', 'setup.py', 'requirements.txt'],
  lldb: ['Cargo.toml', 'CMakeLists.txt'],
  delve: ['go.mod']
};

/** How each adapter's executable is found, for messages. */
const EXECUTABLE_HINT: Record<ProcessAdapterName, string> = {
  debugpy:
    "a Python with debugpy (in a trusted workspace the project .venv/bin or venv/bin python first; then python3 on PATH, then Cellmate's own Python; `pip install debugpy`)",
  lldb: 'lldb-dap ($CELLMATE_LLDB_DAP, else lldb-dap or lldb-dap-<n> on PATH; Debian: `apt-get install lldb-19` gives /usr/bin/lldb-dap-19)',
  delve:
    "dlv ($CELLMATE_DLV, else dlv on PATH; Debian's delve is too old for current Go: `go install github.com/go-delve/delve/cmd/dlv@v1.27.2`)"
};

/** The variable that names an adapter's executable explicitly (checked before PATH). */
export const EXECUTABLE_ENV: Partial<Record<ProcessAdapterName, string>> = {
  lldb: 'CELLMATE_LLDB_DAP',
  delve: 'CELLMATE_DLV'
};

/** One adapter's availability. */
export interface AdapterStatus {
  name: AdapterName;
  usable: boolean;
  /** The marker file found, if any. */
  marker?: string;
  /** The command that starts the adapter, when its executable was found. */
  command?: string[];
  /** One line for the model: usable with what, or which half is missing. */
  message: string;
}

export interface AdapterEnvironment {
  workspace: string;
  env: NodeJS.ProcessEnv;
}

/** The executable on PATH named `name`, or `name-<n>` (Debian's versioned lldb-dap-19). */
async function onPath(env: NodeJS.ProcessEnv, name: string, versioned = false): Promise<string | undefined> {
  for (const dir of pathDirs(env.PATH)) {
    const exact = firstExecutable(name, [dir]);
    if (exact) return exact;
    if (!versioned) continue;
    const entries = await readdir(dir).catch(() => [] as string[]);
    const hit = entries
      .filter((e) => new RegExp(`^${name}-\\d+$`).test(e) && isExecutableFile(path.join(dir, e)))
      .sort()
      .at(-1);
    if (hit) return path.join(dir, hit);
  }
  return undefined;
}

/**
 * DBG-5: in a trusted workspace the project's `.venv/bin` / `venv/bin` python (from the
 * program's folder up to the workspace root) first; then `python3` on PATH, then Cellmate's
 * own Python. An untrusted workspace's interpreters are never run — not even to ask whether
 * debugpy is there: a cloned repository's `.venv/bin/python` is whatever program it ships.
 */
export async function pythonCandidates(workspace: string, env: NodeJS.ProcessEnv, from?: string): Promise<string[]> {
  const folders = projectFolders(
    isWorkspaceTrusted(workspace, env),
    foldersUpToWorkspace(from ? path.dirname(from) : workspace, workspace)
  );
  const local = folders
    .flatMap((d) => ['.venv', 'venv'].map((v) => path.join(d, v, 'bin', 'python')))
    .filter(isExecutableFile);
  const system = executableOnPath('python3', env.PATH);
  const own = cellmatePython(env);
  return [...new Set([...local, ...(system ? [system] : []), ...(own ? [own] : [])])];
}

/** Pythons known to have debugpy (a probe starts a Python: ~0.1–0.5 s). Only yes is kept: an install later is seen. */
const withDebugpy = new Set<string>();

function hasDebugpy(python: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  if (withDebugpy.has(python)) return Promise.resolve(true);
  return new Promise((resolve) => {
    // The probe is a child like any other: the scrubbed environment, never the companion's keys.
    execFile(python, ['-c', 'import debugpy'], { env: childEnv(env), timeout: 15_000 }, (err) => {
      if (!err) withDebugpy.add(python);
      resolve(!err);
    });
  });
}

/** The adapter's command line, or why there is none. */
export async function findExecutable(
  name: ProcessAdapterName,
  e: AdapterEnvironment,
  program?: string
): Promise<string[] | undefined> {
  if (name === 'debugpy') {
    for (const py of await pythonCandidates(e.workspace, e.env, program)) {
      if (await hasDebugpy(py, e.env)) return [py, '-m', 'debugpy.adapter'];
    }
    return undefined;
  }
  // A set variable is the answer (PATH is not searched behind a wrong one: the message names it).
  const variable = EXECUTABLE_ENV[name];
  const explicit = variable ? e.env[variable] : undefined;
  const exe = explicit
    ? isExecutableFile(explicit)
      ? explicit
      : undefined
    : await onPath(e.env, name === 'lldb' ? 'lldb-dap' : 'dlv', name === 'lldb');
  if (!exe) return undefined;
  return name === 'lldb' ? [exe] : [exe, 'dap'];
}

/** The first root marker of the adapter between the program's folder and the workspace root. */
export function findMarker(name: ProcessAdapterName, workspace: string, program?: string): string | undefined {
  const found = findRootMarker(program ? path.dirname(program) : workspace, ROOT_MARKERS[name], workspace);
  return found && (path.relative(workspace, path.join(found.root, found.marker)) || found.marker);
}

/** One process adapter's availability, with the exact missing half. */
export async function adapterStatus(
  name: ProcessAdapterName,
  e: AdapterEnvironment,
  program?: string
): Promise<AdapterStatus> {
  const marker = findMarker(name, e.workspace, program);
  const command = await findExecutable(name, e, program);
  const markerText = `a root marker (${ROOT_MARKERS[name].join(', ')})`;
  const where = program
    ? `in ${path.relative(e.workspace, path.dirname(program)) || 'the workspace root'} or above it within the workspace`
    : 'in the workspace root';
  if (marker && command)
    return {
      name,
      usable: true,
      marker,
      command,
      message: `${name}: usable — marker ${marker}, adapter \`${command.join(' ')}\``
    };
  const missing: string[] = [];
  if (!marker) missing.push(`root marker missing: no ${ROOT_MARKERS[name].join(' / ')} ${where}`);
  const variable = EXECUTABLE_ENV[name];
  const badVariable =
    !command && variable && e.env[variable] ? ` ($${variable}=${e.env[variable]} is not an executable file)` : '';
  if (!command) missing.push(`executable missing${badVariable}: needs ${EXECUTABLE_HINT[name]}`);
  const have = marker ? ` (marker ${marker} found)` : command ? ` (executable \`${command.join(' ')}\` found)` : '';
  return {
    name,
    usable: false,
    ...(marker ? { marker } : {}),
    ...(command ? { command } : {}),
    message: `${name}: not usable here${have} — ${missing.join('; ')}${marker || command ? '' : ` (both halves missing: ${markerText} and the executable)`}`
  };
}

/** Every adapter's line, `kernel` last. */
export async function describeAdapters(e: AdapterEnvironment): Promise<AdapterStatus[]> {
  const processes = await Promise.all((['debugpy', 'lldb', 'delve'] as const).map((n) => adapterStatus(n, e)));
  return [
    ...processes,
    {
      name: 'kernel',
      usable: true,
      message:
        "kernel: usable for notebook cells — the focused notebook's kernel, else this chat's private Python kernel (needs ipykernel ≥ 6 with debugpy in that kernel); use run_cell"
    }
  ];
}
