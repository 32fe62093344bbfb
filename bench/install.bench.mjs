// install: what `pip install jupyterlab-cellmate` costs a user. Builds the wheel
// (`python -m build --wheel`, the project venv's build tools), installs it into a fresh venv
// through pip's local cache, then starts `jupyter lab` from that venv on a PATH without
// Node.js and outside the checkout, opens the pane in Debian's Chromium, runs the offline
// demo and waits for its first answer (the demo's first `eval` card done, in a new notebook's kernel).
//
//   npm run bench -- install
//
// Last line: install: wheel_mb=<n> install_s=<n> first_answer_s=<n>
//   wheel_mb        size of the built wheel
//   install_s       `python -m venv` + `pip install <wheel>` (dependencies from pip's cache)
//   first_answer_s  `jupyter lab` spawned → the demo's answer shown in the pane
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { machineLine, round } from './lib.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const venvPython = path.join(repo, '.venv', 'bin', 'python');
if (!fs.existsSync(venvPython)) {
  console.error(`${venvPython} is missing: run scripts/setup first`);
  process.exit(1);
}
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cm-bench-install-'));
const sh = (cmd, args, opts = {}) =>
  execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20, ...opts });

// 1. the wheel
const dist = path.join(root, 'dist');
sh(venvPython, ['-m', 'build', '--wheel', '--no-isolation', '--outdir', dist, repo], {
  cwd: repo,
  env: { ...process.env, PATH: `${path.dirname(venvPython)}:${process.env.PATH}` }
});
const wheel = path.join(
  dist,
  fs.readdirSync(dist).find((f) => f.endsWith('.whl'))
);
const wheelMb = fs.statSync(wheel).size / 1e6;

// 2. a fresh venv from the base interpreter, on a PATH without node
const farm = path.join(root, 'no-node-bin');
fs.mkdirSync(farm);
for (const d of ['/usr/local/bin', '/usr/bin', '/bin']) {
  if (!fs.existsSync(d)) continue;
  for (const f of fs.readdirSync(d)) {
    if (['node', 'nodejs', 'npm', 'npx', 'corepack'].includes(f) || fs.existsSync(path.join(farm, f))) continue;
    fs.symlinkSync(path.join(d, f), path.join(farm, f));
  }
}
const venv = path.join(root, 'venv');
const PATH = `${venv}/bin:${farm}`;
const base = sh(venvPython, ['-c', 'import sys; print(sys._base_executable)']).toString().trim();
const t0 = performance.now();
sh(base, ['-m', 'venv', venv], { cwd: root });
sh(path.join(venv, 'bin', 'python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', wheel], {
  cwd: root,
  env: { ...process.env, PATH }
});
const installS = (performance.now() - t0) / 1000;

// 3. jupyter lab → the demo's first answer in the pane
const port = await new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const { port: p } = s.address();
    s.close(() => resolve(p));
  });
});
const ws = path.join(root, 'workspace');
fs.mkdirSync(ws);
fs.writeFileSync(path.join(ws, 'README.md'), '# bench\n');
const token = 'bench' + process.pid;
const t1 = performance.now();
const lab = spawn(
  path.join(venv, 'bin', 'jupyter'),
  [
    'lab',
    '--no-browser',
    `--port=${port}`,
    '--ip=127.0.0.1',
    `--IdentityProvider.token=${token}`,
    `--ServerApp.root_dir=${ws}`,
    `--LabApp.user_settings_dir=${path.join(root, 'settings')}`,
    '--LabServerApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate',
    '--LabApp.news_url=None',
    '--LabApp.expose_app_in_browser=True',
    ...(process.getuid?.() === 0 ? ['--allow-root'] : [])
  ],
  {
    cwd: ws,
    stdio: 'ignore',
    env: {
      ...process.env,
      PATH,
      JUPYTER_CONFIG_DIR: path.join(root, 'config'),
      JUPYTER_RUNTIME_DIR: path.join(root, 'runtime'),
      CELLMATE_CONFIG: path.join(root, 'none.json')
    }
  }
);
let browser;
let firstAnswerS;
try {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/api/status?token=${token}`)).ok) break;
    } catch {
      /* not yet listening */
    }
    if (i > 600) throw new Error('jupyter lab did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  browser = await chromium.launch({
    executablePath: process.env.CELLMATE_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu']
  });
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${port}/lab?token=${token}`);
  await page.waitForFunction(() => window.jupyterapp?.commands, undefined, { timeout: 120_000 });
  await page.evaluate(async () => {
    await window.jupyterapp.restored;
    await window.jupyterapp.commands.execute('cellmate:open-chat');
  });
  await page.locator('.jp-cellmate-connection[data-state="connected"]').waitFor({ timeout: 120_000 });
  // The demo starts on the click (a new notebook, then its first eval in that kernel): its
  // first answer is that card done; the rest of the demo waits for the person's approval.
  await page.locator('button.jp-cellmate-demo').click();
  await page
    .locator('.jp-cellmate-tool-card[data-tool-name="eval"][data-status="ok"]')
    .first()
    .waitFor({ timeout: 120_000 });
  firstAnswerS = (performance.now() - t1) / 1000;
} finally {
  await browser?.close();
  lab.kill('SIGTERM');
  await new Promise((r) => (lab.exitCode !== null ? r() : lab.once('exit', r)));
  fs.rmSync(root, { recursive: true, force: true });
}
console.log(machineLine());
console.log(
  `install: wheel_mb=${round(wheelMb, 1)} install_s=${round(installS, 1)} first_answer_s=${round(firstAnswerS, 1)}`
);
