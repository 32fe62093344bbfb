/**
 * A real JupyterHub for tests (issue #13): `jupyterhub` of the project venv (pinned in
 * requirements-dev.txt), `configurable-http-proxy` from node_modules/.bin (pinned npm
 * devDependency), the DummyAuthenticator (any password) and SimpleLocalProcessSpawner: each
 * user's single-user server is `jupyterhub-singleuser` of the project venv (JupyterLab with
 * Cellmate), in its own process with its own home `<root>/<user>` (workspace
 * `<home>/work`, settings, Jupyter config and CELLMATE_HOME under it). All on free loopback
 * ports; a service token with admin scopes lets the test mint users' API tokens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './jupyter';
import { repoRoot, venvBin } from './paths';

/** A running Hub. */
export interface Hub {
  /** The public URL (the proxy), e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** `<root>/<user>`: a user's home (their workspace is `<home>/work`). */
  home(user: string): string;
  /** A new API token of `user` (minted through the Hub's REST API with the service token). */
  userToken(user: string): Promise<string>;
  /** The Hub's and proxy's log lines so far. */
  log: string[];
  stop(): Promise<void>;
}

/** Options of {@link startHub}. */
export interface HubOptions {
  /** Users and the files to create in each one's workspace before the Hub starts. */
  users: Record<string, Record<string, string>>;
  /** Cellmate's settings (settings/jupyterlab-cellmate/plugin.jupyterlab-settings) for every user. */
  cellmateSettings?: unknown;
}

const py = (v: unknown) => JSON.stringify(v);

/** Starts a Hub and waits until its API answers. */
export async function startHub(opts: HubOptions): Promise<Hub> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'cellmate-hub-'));
  for (const [user, files] of Object.entries(opts.users)) {
    for (const [rel, content] of Object.entries(files)) {
      const p = path.join(root, user, 'work', rel);
      await fs.mkdir(path.dirname(p), { recursive: true });
      await fs.writeFile(p, content);
    }
    await fs.mkdir(path.join(root, user, 'work'), { recursive: true });
    const settings = path.join(root, user, 'settings');
    await fs.mkdir(path.join(settings, '@jupyterlab', 'apputils-extension'), { recursive: true });
    await fs.writeFile(
      path.join(settings, '@jupyterlab', 'apputils-extension', 'notification.jupyterlab-settings'),
      JSON.stringify({ fetchNews: 'false' })
    );
    if (opts.cellmateSettings) {
      await fs.mkdir(path.join(settings, 'jupyterlab-cellmate'), { recursive: true });
      await fs.writeFile(
        path.join(settings, 'jupyterlab-cellmate', 'plugin.jupyterlab-settings'),
        JSON.stringify(opts.cellmateSettings)
      );
    }
  }
  const [port, hubPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  const serviceToken = randomBytes(16).toString('hex');
  const state = path.join(root, '.hub');
  await fs.mkdir(state, { recursive: true });
  const singleUserArgs = [
    '--LabApp.expose_app_in_browser=True',
    '--LabServerApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate',
    '--LabApp.news_url=None',
    '--YDocExtension.disable_rtc=True',
    ...(process.getuid?.() === 0 ? ['--allow-root'] : [])
  ];
  // Per-user paths are callables of the spawner (JupyterHub evaluates them at spawn).
  const perUser = (sub: string) => `lambda spawner: ${py(root)} + "/" + spawner.user.name + ${py(sub)}`;
  const config = `
c.JupyterHub.bind_url = ${py(`http://127.0.0.1:${port}`)}
c.JupyterHub.hub_bind_url = ${py(`http://127.0.0.1:${hubPort}`)}
c.ConfigurableHTTPProxy.api_url = ${py(`http://127.0.0.1:${apiPort}`)}
c.ConfigurableHTTPProxy.command = [${py(path.join(repoRoot, 'node_modules', '.bin', 'configurable-http-proxy'))}]
c.ConfigurableHTTPProxy.pid_file = ${py(path.join(state, 'proxy.pid'))}
c.JupyterHub.db_url = ${py(`sqlite:///${path.join(state, 'hub.sqlite')}`)}
c.JupyterHub.cookie_secret_file = ${py(path.join(state, 'cookie_secret'))}
c.JupyterHub.pid_file = ${py(path.join(state, 'hub.pid'))}
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = ${py(path.join(root, '{username}'))}
c.Spawner.cmd = [${py(path.join(venvBin, 'jupyterhub-singleuser'))}]
c.Spawner.args = ${py(singleUserArgs)}
c.Spawner.notebook_dir = "~/work"
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.environment = {
    "JUPYTERLAB_SETTINGS_DIR": ${perUser('/settings')},
    "JUPYTERLAB_WORKSPACES_DIR": ${perUser('/lab-workspaces')},
    "JUPYTER_CONFIG_DIR": ${perUser('/config')},
    "JUPYTER_RUNTIME_DIR": ${perUser('/runtime')},
    "CELLMATE_HOME": ${perUser('/cellmate-home')},
    "CELLMATE_CONFIG": ${perUser('/no-cellmate-config.json')},
}
c.JupyterHub.services = [{"name": "cellmate-test", "api_token": ${py(serviceToken)}}]
c.JupyterHub.load_roles = [{"name": "cellmate-test", "scopes": ["admin:users", "admin:servers", "tokens"], "services": ["cellmate-test"]}]
`;
  const configFile = path.join(state, 'jupyterhub_config.py');
  await fs.writeFile(configFile, config);
  const log: string[] = [];
  const child: ChildProcess = spawn(path.join(venvBin, 'jupyterhub'), ['-f', configFile], {
    cwd: state,
    env: { ...process.env, PATH: `${venvBin}:${process.env.PATH ?? ''}` },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true
  });
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => log.push(...chunk.split('\n').filter(Boolean)));
  }
  const url = `http://127.0.0.1:${port}`;
  const api = (p: string, init: RequestInit = {}) =>
    fetch(`${url}/hub/api${p}`, {
      ...init,
      headers: { Authorization: `token ${serviceToken}`, 'Content-Type': 'application/json', ...init.headers }
    });

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      // The Hub stops the proxy and the single-user servers it started on SIGTERM.
      child.kill('SIGTERM');
      const exited = new Promise((r) => child.once('exit', r));
      const timer = setTimeout(() => child.pid && process.kill(-child.pid, 'SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    }
    await fs.rm(root, { recursive: true, force: true });
  };

  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`jupyterhub exited with ${child.exitCode}:\n${log.slice(-40).join('\n')}`);
    try {
      if ((await api('/')).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`jupyterhub did not answer within 90 s:\n${log.slice(-40).join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 300));
  }

  return {
    url,
    log,
    home: (user) => path.join(root, user),
    userToken: async (user) => {
      const res = await api(`/users/${user}/tokens`, {
        method: 'POST',
        body: JSON.stringify({ note: 'cellmate test', expires_in: 3600 })
      });
      if (!res.ok) throw new Error(`minting a token for ${user}: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { token: string }).token;
    },
    stop
  };
}
