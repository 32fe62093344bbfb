/**
 * Starts a real JupyterLab (from the project venv, with Cellmate installed by
 * `scripts/setup`) on a free loopback port with its own workspace, settings and
 * runtime folders, and stops it again. Every e2e test goes through this.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { venvBin } from './paths';

export interface JupyterOptions {
  /** Files to create in the workspace: relative path → content. */
  files?: Record<string, string>;
  /** Cellmate settings written to the user settings dir (provider, model, scriptPath …). */
  cellmateSettings?: Record<string, unknown>;
  /** Extra environment for the Jupyter server (and so for the companion server). */
  env?: Record<string, string>;
  /**
   * Real-time collaboration (jupyter-collaboration, pinned in requirements-dev.txt): on, the
   * browser edits notebooks through its shared Yjs documents (`context.model.collaborative`). Off by default,
   * so the other tests see JupyterLab's plain document model.
   */
  collaboration?: boolean;
  /** Extra `jupyter lab` arguments, e.g. `--CellmateApp.tcp_nodelay=False` (the turn bench's "before"). */
  args?: string[];
  /** The bin directory `jupyter` runs from (default: the project venv's). */
  bin?: string;
  /** PATH for the server, exactly (default: `bin` first, then the test's PATH). */
  path?: string;
  /** The companion's home config file (`CELLMATE_CONFIG`), e.g. `{"workers": {"tiers": …}}`; default: none. */
  serverConfig?: Record<string, unknown>;
}

export interface CellmateStatus {
  running: boolean;
  ready: boolean;
  pid: number | null;
  restarts: number;
  lastExit: number | null;
}

export interface Jupyter {
  url: string;
  baseUrl: string;
  token: string;
  workspace: string;
  /** The lab page URL, token included. */
  labUrl: string;
  /** The WebSocket URL of Cellmate's bridge route, without credentials. */
  wsUrl: string;
  /** Lines the server printed (stdout + stderr), for diagnosis. */
  log: string[];
  status(): Promise<CellmateStatus>;
  /** Polls `/cellmate/status` until `predicate` holds. */
  waitForStatus(predicate: (s: CellmateStatus) => boolean, timeoutMs?: number): Promise<CellmateStatus>;
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (the OS picks it; closed again before it is returned). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

export async function startJupyter(opts: JupyterOptions = {}): Promise<Jupyter> {
  const bin = opts.bin ?? venvBin;
  const jupyterBin = path.join(bin, 'jupyter');
  if (!existsSync(jupyterBin)) {
    throw new Error(`${jupyterBin} is missing: run scripts/setup first (the README's test command does).`);
  }
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'cellmate-e2e-'));
  const workspace = path.join(root, 'workspace');
  const settingsDir = path.join(root, 'settings');
  const runtimeDir = path.join(root, 'runtime');
  const workspacesDir = path.join(root, 'lab-workspaces');
  for (const d of [workspace, settingsDir, runtimeDir, workspacesDir]) await fs.mkdir(d, { recursive: true });
  for (const [rel, content] of Object.entries(opts.files ?? {})) {
    const p = path.join(workspace, rel);
    await fs.mkdir(path.dirname(p), { recursive: true });
    await fs.writeFile(p, content);
  }
  // No "get Jupyter news?" toast over the pane in screenshots.
  const notifications = path.join(settingsDir, '@jupyterlab', 'apputils-extension');
  await fs.mkdir(notifications, { recursive: true });
  await fs.writeFile(
    path.join(notifications, 'notification.jupyterlab-settings'),
    JSON.stringify({ fetchNews: 'false' })
  );
  if (opts.cellmateSettings) {
    const dir = path.join(settingsDir, 'jupyterlab-cellmate');
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(dir, 'plugin.jupyterlab-settings'), JSON.stringify(opts.cellmateSettings));
  }
  const configFile = path.join(root, opts.serverConfig ? 'cellmate-config.json' : 'no-cellmate-config.json');
  if (opts.serverConfig) await fs.writeFile(configFile, JSON.stringify(opts.serverConfig));
  const port = await freePort();
  const token = randomBytes(16).toString('hex');
  const args = [
    'lab',
    '--no-browser',
    `--port=${port}`,
    '--ip=127.0.0.1',
    `--IdentityProvider.token=${token}`,
    `--ServerApp.root_dir=${workspace}`,
    `--LabApp.user_settings_dir=${settingsDir}`,
    `--LabApp.workspaces_dir=${workspacesDir}`,
    '--LabApp.expose_app_in_browser=True',
    '--ServerApp.open_browser=False',
    '--LabServerApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate',
    '--LabApp.news_url=None',
    `--YDocExtension.disable_rtc=${opts.collaboration ? 'False' : 'True'}`
  ];
  if (process.getuid?.() === 0) args.push('--allow-root');
  args.push(...(opts.args ?? []));
  const log: string[] = [];
  const child: ChildProcess = spawn(jupyterBin, args, {
    cwd: workspace,
    env: {
      ...process.env,
      ...opts.env,
      PATH: opts.path ?? `${bin}:${process.env.PATH ?? ''}`,
      JUPYTER_RUNTIME_DIR: runtimeDir,
      // Keep the user's real config and data out of tests.
      JUPYTER_CONFIG_DIR: path.join(root, 'config'),
      // No server-side key file: tests use the scripted provider unless they say otherwise.
      CELLMATE_CONFIG: configFile,
      HOME: process.env.HOME ?? root
    },
    stdio: ['ignore', 'pipe', 'pipe']
  });
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => log.push(...chunk.split('\n').filter(Boolean)));
  }
  const url = `http://127.0.0.1:${port}`;
  const baseUrl = `${url}/`;
  const authHeaders = { Authorization: `token ${token}` };

  const status = async (): Promise<CellmateStatus> => {
    const res = await fetch(`${url}/cellmate/status`, { headers: authHeaders });
    if (!res.ok) throw new Error(`/cellmate/status answered ${res.status}`);
    return (await res.json()) as CellmateStatus;
  };

  const waitForStatus = async (predicate: (s: CellmateStatus) => boolean, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    let last: CellmateStatus | undefined;
    let lastError: unknown;
    while (Date.now() < deadline) {
      try {
        last = await status();
        if (predicate(last)) return last;
      } catch (e) {
        lastError = e;
      }
      await sleep(200);
    }
    throw new Error(
      `cellmate status never matched within ${timeoutMs} ms; last=${JSON.stringify(last)} error=${String(lastError)}\n` +
        log.slice(-40).join('\n')
    );
  };

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const exited = new Promise((r) => child.once('exit', r));
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    await fs.rm(root, { recursive: true, force: true });
  };

  // Wait for the Jupyter server, then for the companion server.
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`jupyter lab exited with ${child.exitCode}:\n${log.slice(-40).join('\n')}`);
    }
    try {
      const res = await fetch(`${url}/api/status`, { headers: authHeaders });
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`jupyter lab did not start within 60 s:\n${log.slice(-40).join('\n')}`);
    }
    await sleep(250);
  }
  const j: Jupyter = {
    url,
    baseUrl,
    token,
    workspace,
    labUrl: `${url}/lab?token=${token}`,
    wsUrl: `ws://127.0.0.1:${port}/cellmate/ws`,
    log,
    status,
    waitForStatus,
    stop
  };
  try {
    await waitForStatus((s) => s.ready, 30_000);
  } catch (e) {
    await stop();
    throw e;
  }
  return j;
}
