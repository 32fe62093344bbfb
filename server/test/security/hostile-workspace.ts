/**
 * A cloned repository as an attacker would shape it, for the tests that drive it through
 * every surface (chat in Agent and Plan mode, `cellmate mcp`, the companion's `mcp.sock`
 * behind `/cellmate/mcp`): planted `.venv/bin/*`, `venv/bin/*`, `node_modules/.bin/*` and a
 * `node_modules/typescript/lib/tsserver.js` in the workspace and in the folder above it —
 * each appends its name to a marker file, then hands over to the real tool, so only the
 * marker tells —, a deny-ruled `conf/secrets.py` with an in-repo symlink alias, a
 * `pyrightconfig.json` whose `extraPaths` leaves the workspace, and an allowed file whose
 * names carry the withheld values by data flow.
 */
import { chmod, mkdir, mkdtemp, readFile, realpath, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Self-contained (the browser tests' project imports it too): the repo's own servers and venv Python.
const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const REAL_BIN = path.join(REPO, 'node_modules', '.bin');
const PYTHON = path.join(REPO, '.venv', 'bin', 'python');

export const SECRET = 'sk-live-HOSTILE-0123456789';
export const OUT_SECRET = 'out-HOSTILE-9876543210';

export interface HostileWorkspace {
  parent: string;
  ws: string;
  home: string;
  /** Environment of an untrusted workspace: the person's home (deny rule on conf/secrets.py), PATH without any node_modules. */
  env: NodeJS.ProcessEnv;
  /** The names of planted programs that ran. */
  ran(): Promise<string[]>;
  /** Text that must never appear anywhere: the withheld values and the withheld files' names. */
  leaks(text: string): string[];
}

async function put(file: string, text: string, mode = 0o644): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
  await chmod(file, mode);
}

/**
 * Builds it in a new temporary folder, or in `at` (an existing workspace, e.g. a Jupyter
 * server's root dir, with its parent folder and the person's home).
 */
export async function hostileWorkspace(at?: { ws: string; home: string }): Promise<HostileWorkspace> {
  const parent = at ? path.dirname(at.ws) : await realpath(await mkdtemp(path.join(os.tmpdir(), 'cellmate-hostile-')));
  const ws = at?.ws ?? path.join(parent, 'ws');
  const home = at?.home ?? path.join(parent, 'home');
  const marker = path.join(parent, 'ran.log');
  const realBin = REAL_BIN;
  const realTsserver = path.join(REPO, 'node_modules', 'typescript', 'lib', 'tsserver.js');
  const plant = (file: string, name: string, real: string) =>
    put(file, `#!/bin/sh\necho ${name} >> '${marker}'\nexec '${real}' "$@"\n`, 0o755);
  const plantTypescript = async (dir: string, name: string) => {
    await put(
      path.join(dir, 'node_modules', 'typescript', 'package.json'),
      JSON.stringify({ name: 'typescript', version: '5.9.3', main: 'lib/typescript.js' })
    );
    await put(
      path.join(dir, 'node_modules', 'typescript', 'lib', 'tsserver.js'),
      `require('fs').appendFileSync(${JSON.stringify(marker)}, ${JSON.stringify(name + '\n')});\nrequire(${JSON.stringify(realTsserver)});\n`
    );
  };

  await put(path.join(ws, 'pyproject.toml'), '[project]\nname = "victim"\n');
  await put(path.join(ws, 'pyrightconfig.json'), JSON.stringify({ extraPaths: ['../outside'] }));
  for (const bin of ['.venv/bin', 'venv/bin', 'node_modules/.bin']) {
    await plant(path.join(ws, bin, 'python'), `${bin}/python`, PYTHON);
    for (const tool of ['basedpyright-langserver', 'basedpyright', 'typescript-language-server', 'tsc'])
      await plant(path.join(ws, bin, tool), `${bin}/${tool}`, path.join(realBin, tool));
  }
  await plantTypescript(ws, 'ws/node_modules/typescript');
  await plantTypescript(parent, 'parent/node_modules/typescript');
  await put(path.join(ws, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true }, files: ['web.ts'] }));
  await put(path.join(ws, 'web.ts'), 'export function twice(n: number): number {\n  return n * 2;\n}\n');
  await put(path.join(parent, 'outside', 'outside_mod.py'), `OUT_SECRET = "${OUT_SECRET}"\n`);
  await put(path.join(ws, 'conf', '__init__.py'), '');
  await put(path.join(ws, 'conf', 'secrets.py'), `API_KEY = "${SECRET}"\n`);
  await symlink(path.join(ws, 'conf', 'secrets.py'), path.join(ws, 'alias.py'));
  await put(
    path.join(ws, 'app.py'),
    [
      'from conf.secrets import API_KEY',
      'from alias import API_KEY as KEY2',
      'from outside_mod import OUT_SECRET',
      '',
      'def area(width: int, height: int) -> int:',
      '    return width * height',
      '',
      'k = API_KEY',
      'n: int = KEY2',
      'print(area(2, 3), k, OUT_SECRET)',
      'o = OUT_SECRET',
      ''
    ].join('\n')
  );
  await put(
    path.join(home, '.cellmate', 'policy.json'),
    JSON.stringify({ rules: [{ tool: '*', pattern: 'conf/secrets.py', action: 'deny' }] })
  );
  // PATH without the repo's node_modules/.bin (vitest puts it there): Cellmate's own servers come from its bundle.
  const PATH = (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((d) => !d.includes('node_modules'))
    .join(path.delimiter);
  const env = {
    ...process.env,
    PATH,
    HOME: home,
    CELLMATE_HOME: path.join(home, '.cellmate'),
    CELLMATE_PYTHON: PYTHON,
    CELLMATE_TRUSTED_WORKSPACES: ''
  };
  return {
    parent,
    ws,
    home,
    env,
    ran: async () => (await readFile(marker, 'utf8').catch(() => '')).split('\n').filter(Boolean),
    leaks: (text) =>
      [SECRET, OUT_SECRET, 'secrets.py', 'outside_mod.py', 'HOSTILE-0123'].filter((s) => text.includes(s))
  };
}

/** The `lsp` calls an attacker's prompt would ask for, with what a control answer shows. */
export const ATTACK_CALLS: ReadonlyArray<{ args: Record<string, unknown>; shows?: RegExp }> = [
  {
    args: { action: 'hover', file: 'app.py', line: 10, symbol: 'area' },
    shows: /def area\(\s*width: int,\s*height: int\s*\) -> int/
  },
  { args: { action: 'hover', file: 'web.ts', line: 1, symbol: 'twice' }, shows: /function twice\(n: number\): number/ },
  { args: { action: 'hover', file: 'app.py', line: 10, symbol: 'k' } },
  { args: { action: 'hover', file: 'app.py', line: 8, symbol: 'API_KEY' } },
  { args: { action: 'hover', file: 'app.py', line: 11, symbol: 'o' }, shows: /\bo\b/ },
  { args: { action: 'definition', file: 'app.py', line: 10, symbol: 'OUT_SECRET' }, shows: /withheld/ },
  { args: { action: 'definition', file: 'app.py', line: 9, symbol: 'KEY2' }, shows: /withheld/ },
  { args: { action: 'diagnostics', file: 'app.py' }, shows: /app\.py:9 \[error\]/ },
  { args: { action: 'symbols', file: 'app.py', query: 'API_KEY' } },
  // The project checkers (basedpyright's CLI, tsc): the planted node_modules/.bin/tsc and .venv/bin ones must not run.
  {
    args: { action: 'diagnostics', file: '*' },
    shows:
      /basedpyright --outputjson in \.: \d+ diagnostic[\s\S]*app\.py:9 \[error\][\s\S]*tsc --noEmit --pretty false in \.: 0 diagnostics/
  }
];
