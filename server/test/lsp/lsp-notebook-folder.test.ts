/**
 * LSP-2 for the most common data-science folder: one notebook, no `pyproject.toml`,
 * `requirements.txt` or `.git`. The notebook's folder is the root and basedpyright's
 * interpreter is the notebook kernel's Python (its kernelspec, looked up by jupyter_client),
 * so `import pandas` — installed where the kernel runs, not on the companion's PATH — is no
 * false "could not be resolved", while a package nobody has still is reported.
 * Trust decides a kernelspec whose interpreter lies inside the workspace: untrusted, that
 * program never runs (Cellmate's Python instead, and `status` says why); trusted, it does.
 * Real basedpyright, real jupyter_client from the project venv.
 */
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/config/logger.js';
import { DocumentSync } from '../../src/lsp/documents.js';
import { LspService } from '../../src/lsp/lsp-service.js';
import { createLspTool } from '../../src/tools/lsp/lsp.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { BUNDLED_BINS, REPO } from './lsp-fixtures.js';

const VENV_PYTHON = path.join(REPO, '.venv', 'bin', 'python');

const notebook = (kernel: string, cells: string[]) =>
  JSON.stringify({
    cells: cells.map((source, i) => ({
      cell_type: 'code',
      id: `c${i + 1}`,
      metadata: {},
      source,
      outputs: [],
      execution_count: null
    })),
    metadata: { kernelspec: { name: kernel, display_name: kernel, language: 'python' } },
    nbformat: 4,
    nbformat_minor: 5
  });

let parent: string;
let ws: string;
let marker: string;
let env: NodeJS.ProcessEnv;
const services: LspService[] = [];

async function put(file: string, text: string, mode = 0o644): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
  await chmod(file, mode);
}

function lsp(
  extraEnv: NodeJS.ProcessEnv = {}
): (args: Record<string, unknown>) => Promise<{ ok: boolean; output: string }> {
  const service = new LspService({
    workspace: ws,
    env: { ...env, ...extraEnv },
    logger: silentLogger,
    bundledBins: BUNDLED_BINS,
    diagnosticsWaitMs: 60_000
  });
  services.push(service);
  const registry = new ToolRegistry([createLspTool(service, new DocumentSync(service))]);
  return async (args) => {
    const r = await registry.call('lsp', args, {
      workspace: ws,
      signal: new AbortController().signal,
      actor: 'model',
      chatId: 'chat-1'
    });
    return { ok: r.ok, output: r.output };
  };
}

beforeAll(async () => {
  parent = await realpath(await mkdtemp(path.join(os.tmpdir(), 'cellmate-nbfolder-')));
  ws = path.join(parent, 'ws');
  marker = path.join(parent, 'ran.log');
  const home = path.join(parent, 'home');
  await mkdir(home, { recursive: true });
  // PATH without the project venv and node_modules: the python basedpyright would find on its own has no pandas.
  const PATH = (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((d) => !d.includes('node_modules') && !d.includes('.venv'))
    .join(path.delimiter);
  env = {
    ...process.env,
    PATH,
    HOME: home,
    CELLMATE_HOME: home,
    CELLMATE_PYTHON: VENV_PYTHON,
    CELLMATE_TRUSTED_WORKSPACES: '',
    // Kernelspecs installed outside the workspace, where Jupyter looks (JUPYTER_PATH).
    JUPYTER_PATH: path.join(parent, 'jupyter'),
    JUPYTER_DATA_DIR: path.join(home, 'jupyter-data')
  };
  await put(
    path.join(ws, 'study', 'plain.ipynb'),
    notebook('python3', [
      'import pandas as pd\ndf = pd.DataFrame({"a": [1, 2]})',
      'import surely_not_installed_pkg\nprint(df.shape)'
    ])
  );
  // A kernel whose interpreter is a program inside the workspace (a planted "venv" that logs, then runs Python).
  await put(path.join(ws, 'study', 'evil.ipynb'), notebook('inside', ['import pandas as pd']));
  const planted = path.join(ws, 'env', 'bin', 'python');
  await put(planted, `#!/bin/sh\necho planted-python >> '${marker}'\nexec '${VENV_PYTHON}' "$@"\n`, 0o755);
  await put(
    path.join(parent, 'jupyter', 'kernels', 'inside', 'kernel.json'),
    JSON.stringify({
      argv: [planted, '-m', 'ipykernel_launcher', '-f', '{connection_file}'],
      display_name: 'inside',
      language: 'python'
    })
  );
}, 30_000);

afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.dispose()));
});

afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

describe('lsp on a notebook in a folder with no root marker (LSP-2, issue #27)', () => {
  it("precondition: the python on the companion's PATH cannot import pandas (the kernel's can)", () => {
    expect(() => execFileSync('python3', ['-c', 'import pandas'], { env, stdio: 'ignore' })).toThrow();
    expect(() => execFileSync(VENV_PYTHON, ['-c', 'import pandas'], { stdio: 'ignore' })).not.toThrow();
  });

  it("LSP-2: diagnostics use the notebook folder as root and the kernel's Python: no false import error for pandas", async () => {
    const call = lsp();
    const r = await call({ action: 'diagnostics', file: 'study/plain.ipynb' });
    expect(r.ok).toBe(true);
    expect(r.output).not.toMatch(/no root marker/i);
    expect(r.output).not.toMatch(/"pandas" could not be resolved/);
    // A package nobody installed is still reported, in its cell.
    expect(r.output).toMatch(/cell 2[^\n]*line 1[^\n]*"surely_not_installed_pkg" could not be resolved/);
    const status = await call({ action: 'status', file: 'study/plain.ipynb' });
    expect(status.output).toContain("study (no root marker: the notebook's folder)");
    expect(status.output).toContain(`Python ${VENV_PYTHON} (the notebook kernel's)`);
  }, 120_000);

  it("LSP-2, trusted: the kernel's Python still wins over whatever python basedpyright would find itself", async () => {
    const r = await lsp({ CELLMATE_TRUSTED_WORKSPACES: ws })({ action: 'diagnostics', file: 'study/plain.ipynb' });
    expect(r.ok).toBe(true);
    expect(r.output).not.toMatch(/"pandas" could not be resolved/);
    expect(r.output).toMatch(/"surely_not_installed_pkg" could not be resolved/);
  }, 120_000);

  it("LSP-2, untrusted: a kernelspec whose interpreter is inside the workspace never runs; Cellmate's Python instead", async () => {
    const call = lsp();
    const r = await call({ action: 'diagnostics', file: 'study/evil.ipynb' });
    expect(r.ok).toBe(true);
    expect(r.output).not.toMatch(/"pandas" could not be resolved/);
    const status = await call({ action: 'status', file: 'study/evil.ipynb' });
    expect(status.output).toContain('kernel "inside"\'s interpreter env/bin/python is inside this untrusted workspace');
    expect(await readFile(marker, 'utf8').catch(() => '')).toBe('');
  }, 120_000);

  it("LSP-2, trusted: the same kernel's interpreter is the one basedpyright runs", async () => {
    const call = lsp({ CELLMATE_TRUSTED_WORKSPACES: ws });
    const r = await call({ action: 'diagnostics', file: 'study/evil.ipynb' });
    expect(r.ok).toBe(true);
    expect(r.output).not.toMatch(/"pandas" could not be resolved/);
    expect(await readFile(marker, 'utf8')).toContain('planted-python');
  }, 120_000);
});
