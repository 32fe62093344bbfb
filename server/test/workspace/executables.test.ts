/**
 * One rule for "root marker AND executable" (SPEC LSP-2, DBG-4, DBG-5): each row builds a
 * real folder layout and asks every user — the language servers (`lsp/locate.ts`), the
 * debug adapters (`dap/adapters.ts`) and, for `PATH`, the lookup Cellmate's own Python
 * falls back on (`workspace/cellmate-python.ts`: `executableOnPath`) — which must give the
 * same answer.
 */
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findExecutable, findMarker, pythonCandidates } from '../../src/dap/adapters.js';
import { findRoot, locateCommand } from '../../src/lsp/locate.js';
import { isWorkspaceTrusted, TRUSTED_WORKSPACES_ENV } from '../../src/security/workspace-trust.js';
import { executableOnPath } from '../../src/workspace/executables.js';

/** Paths relative to a fresh base folder that holds the workspace `ws`, and what each is. */
type Layout = Record<string, 'file' | 'exec' | 'dir'>;

/** A fresh `<base>/ws` workspace with `files` laid out under `<base>`. */
function layout(files: Layout): string {
  const base = realpathSync(mkdtempSync(path.join(tmpdir(), 'cm-executables-')));
  mkdirSync(path.join(base, 'ws'));
  for (const [rel, kind] of Object.entries(files)) {
    const full = path.join(base, rel);
    mkdirSync(kind === 'dir' ? full : path.dirname(full), { recursive: true });
    if (kind === 'dir') continue;
    writeFileSync(full, '#!/bin/sh\n');
    if (kind === 'exec') chmodSync(full, 0o755);
  }
  return base;
}

/** An environment that reads no person's trust files; `trusted` trusts `<base>/ws`. */
function envFor(base: string, PATH: string, trusted = false): NodeJS.ProcessEnv {
  return {
    PATH,
    HOME: path.join(base, 'home'),
    CELLMATE_HOME: path.join(base, 'home', '.cellmate'),
    ...(trusted ? { [TRUSTED_WORKSPACES_ENV]: path.join(base, 'ws') } : {})
  };
}

const markerRows: Array<{ row: string; files: Layout; program: string; root: string | undefined }> = [
  {
    row: "marker in the program's folder",
    files: { 'ws/cmd/go.mod': 'file', 'ws/cmd/main.go': 'file' },
    program: 'ws/cmd/main.go',
    root: 'ws/cmd'
  },
  {
    row: 'marker in the workspace root, program below',
    files: { 'ws/go.mod': 'file', 'ws/cmd/main.go': 'file' },
    program: 'ws/cmd/main.go',
    root: 'ws'
  },
  {
    row: 'marker only above the workspace',
    files: { 'go.mod': 'file', 'ws/cmd/main.go': 'file' },
    program: 'ws/cmd/main.go',
    root: undefined
  },
  {
    row: "a sibling folder whose name starts with the workspace's",
    files: { 'go.mod': 'file', 'ws2/go.mod': 'file', 'ws2/cmd/main.go': 'file' },
    program: 'ws2/cmd/main.go',
    root: undefined
  },
  {
    row: 'a program outside the workspace with a marker beside it',
    files: { 'ws2/cmd/go.mod': 'file', 'ws2/cmd/main.go': 'file' },
    program: 'ws2/cmd/main.go',
    root: undefined
  },
  { row: 'no marker anywhere', files: { 'ws/cmd/main.go': 'file' }, program: 'ws/cmd/main.go', root: undefined }
];

describe('SPEC LSP-2 / DBG-4: the root marker half, the same for lsp and dap', () => {
  it.each(markerRows)('$row', async ({ files, program, root }) => {
    const base = layout(files);
    const workspace = path.join(base, 'ws');
    const lsp = await findRoot(path.join(base, program), ['go.mod'], workspace);
    const dap = findMarker('delve', workspace, path.join(base, program));
    const expected = root === undefined ? undefined : path.join(base, root);
    expect(lsp?.root).toBe(expected);
    expect(dap).toBe(
      expected === undefined ? undefined : path.relative(workspace, path.join(expected, 'go.mod')) || 'go.mod'
    );
  });
});

/**
 * `PATH` entries are folders under the base, `relative:<folder>` (that folder, relative to the
 * working folder) or `empty` (an empty entry, which a shell reads as the working folder);
 * `cwd` is the working folder the lookup runs in (default: unchanged).
 */
const pathRows: Array<{ row: string; files: Layout; path: string[]; cwd?: string; found: string | undefined }> = [
  { row: 'an executable file on PATH', files: { 'bin/dlv': 'exec' }, path: ['bin'], found: 'bin/dlv' },
  { row: 'a file without the exec bit on PATH', files: { 'bin/dlv': 'file' }, path: ['bin'], found: undefined },
  { row: 'a folder named like the program on PATH', files: { 'bin/dlv': 'dir' }, path: ['bin'], found: undefined },
  {
    row: 'the first executable of several PATH entries',
    files: { 'a/dlv': 'file', 'b/dlv': 'dir', 'c/dlv': 'exec', 'd/dlv': 'exec' },
    path: ['a', 'b', 'c', 'd'],
    found: 'c/dlv'
  },
  {
    row: 'a relative PATH entry, even one that names a real folder',
    files: { 'bin/dlv': 'exec' },
    path: ['relative:bin'],
    found: undefined
  },
  {
    row: 'a relative PATH entry before an absolute one: only the absolute one counts',
    files: { 'ws/node_modules/.bin/dlv': 'exec', 'bin/dlv': 'exec' },
    path: ['relative:ws/node_modules/.bin', 'bin'],
    found: 'bin/dlv'
  },
  {
    row: 'an empty PATH entry while the working folder (a cloned repository) holds the program',
    files: { 'ws/dlv': 'exec' },
    path: ['empty'],
    cwd: 'ws',
    found: undefined
  },
  {
    row: 'an empty PATH entry before an absolute one: only the absolute one counts',
    files: { 'ws/dlv': 'exec', 'bin/dlv': 'exec' },
    path: ['empty', 'bin'],
    cwd: 'ws',
    found: 'bin/dlv'
  }
];

describe('SPEC LSP-2 / DBG-4 / DBG-5: the executable half, the same for lsp and dap', () => {
  it.each(pathRows)('$row', async ({ files, path: entries, cwd, found }) => {
    const base = layout(files);
    const workspace = path.join(base, 'ws');
    const before = process.cwd();
    // The companion runs where Jupyter was started, often inside the workspace itself.
    if (cwd) process.chdir(path.join(base, cwd));
    try {
      const PATH = entries
        .map((e) =>
          e === 'empty'
            ? ''
            : e.startsWith('relative:')
              ? path.relative(process.cwd(), path.join(base, e.slice('relative:'.length)))
              : path.join(base, e)
        )
        .join(path.delimiter);
      const env = envFor(base, PATH);
      const lsp = await locateCommand('dlv', {
        root: workspace,
        workspace,
        pathEnv: PATH,
        bundledBins: [],
        trusted: isWorkspaceTrusted(workspace, env)
      });
      const dap = await findExecutable('delve', { workspace, env });
      const expected = found === undefined ? undefined : path.join(base, found);
      expect(lsp).toBe(expected);
      expect(dap).toEqual(expected === undefined ? undefined : [expected, 'dap']);
      expect(executableOnPath('dlv', PATH)).toBe(expected);
    } finally {
      process.chdir(before);
    }
  });

  it.each([
    { row: "a trusted workspace's own .venv/bin program runs", trusted: true, kind: 'exec' as const, runs: true },
    {
      row: "an untrusted workspace's own .venv/bin program never runs",
      trusted: false,
      kind: 'exec' as const,
      runs: false
    },
    {
      row: "a trusted workspace's .venv/bin file without the exec bit does not count",
      trusted: true,
      kind: 'file' as const,
      runs: false
    }
  ])('$row', async ({ trusted, kind, runs }) => {
    const base = layout({ 'ws/.venv/bin/python': kind, 'ws/go.mod': 'file', 'ws/main.py': 'file' });
    const workspace = path.join(base, 'ws');
    const planted = path.join(workspace, '.venv', 'bin', 'python');
    const env = envFor(base, '', trusted);
    expect(isWorkspaceTrusted(workspace, env)).toBe(trusted);
    const lsp = await locateCommand('python', {
      root: workspace,
      workspace,
      pathEnv: env.PATH,
      bundledBins: [],
      trusted: isWorkspaceTrusted(workspace, env)
    });
    const dap = await pythonCandidates(workspace, env, path.join(workspace, 'main.py'));
    expect(lsp === planted).toBe(runs);
    expect(dap.includes(planted)).toBe(runs);
  });
});
