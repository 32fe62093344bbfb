/**
 * The language-server table and lifecycle on real servers (SPEC LSP-2, LSP-5): a server
 * answers only where a root marker exists AND its executable resolves (`status` names the
 * missing half), the project's .venv/bin comes first, each file is served from its nearest
 * root, a killed server is restarted by the next call, and a server that cannot start is
 * not respawned on every call.
 */
import { chmod, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lspFixture, type LspFixture } from './lsp-fixtures.js';

const open: LspFixture[] = [];
afterEach(async () => {
  while (open.length) await open.pop()!.dispose();
});
async function fixture(...args: Parameters<typeof lspFixture>): Promise<LspFixture> {
  const f = await lspFixture(...args);
  open.push(f);
  return f;
}

/**
 * A fixture whose home folder (`$CELLMATE_HOME`) trusts its workspace to start its own
 * `.cellmate/lsp.json` commands (the table is read at the first call, after this).
 */
async function trustedFixture(): Promise<LspFixture> {
  const home = await mkdtemp(path.join(os.tmpdir(), 'cellmate-lsp-home-'));
  const f = await fixture([], {
    tableFiles: undefined,
    env: { ...process.env, HOME: '/nonexistent', CELLMATE_HOME: home }
  });
  await writeFile(path.join(home, 'lsp.json'), JSON.stringify({ trustedWorkspaces: [f.workspace] }));
  return f;
}

async function script(file: string, body: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
}

describe('which server may answer (LSP-2)', () => {
  it('no root marker: status says "no root marker" and a call says so, naming the markers', async () => {
    const f = await fixture([]);
    await writeFile(path.join(f.workspace, 'loose.py'), 'x = 1\n');
    const status = await f.call('lsp', { action: 'status', file: 'loose.py' });
    expect(status.output).toMatch(
      /basedpyright \(\.py \.pyi \.ipynb\): not usable — no root marker: .*pyproject\.toml/
    );
    const call = await f.call('lsp', { action: 'hover', file: 'loose.py', line: 1, symbol: 'x' });
    expect(call.ok).toBe(false);
    expect(call.output).toContain('no root marker');
    expect(await f.service.runningClients()).toHaveLength(0);
  });

  it('marker present but the executable hidden from PATH (and not shipped): "executable not found"', async () => {
    const f = await fixture(['py'], { flat: true, bundledBins: [], env: { ...process.env, PATH: '/usr/bin:/bin' } });
    const status = await f.call('lsp', { action: 'status', file: 'pkg/util.py' });
    expect(status.output).toMatch(
      /basedpyright .*: not usable — executable not found: .*root \. \(pyproject\.toml\) found, but executable not found: "basedpyright-langserver"/
    );
    const call = await f.call('lsp', { action: 'definition', file: 'pkg/main.py', line: 3, symbol: 'load_data' });
    expect(call.ok).toBe(false);
    expect(call.output).toContain('executable not found');
  });

  it("a workspace's own .cellmate/lsp.json starts no command until the home file trusts the workspace", async () => {
    const f = await fixture([], {
      tableFiles: undefined,
      env: { ...process.env, HOME: '/nonexistent', CELLMATE_HOME: '/nonexistent/.cellmate' }
    });
    const ran = path.join(f.workspace, 'ran.txt');
    await writeFile(path.join(f.workspace, 'go.mod'), 'module x\n');
    await writeFile(path.join(f.workspace, 'main.go'), 'package main\n');
    await writeFile(path.join(f.workspace, 'pyproject.toml'), '[project]\nname = "x"\n');
    await writeFile(path.join(f.workspace, 'a.py'), 'x = 1\n');
    await script(path.join(f.workspace, 'evil.sh'), `echo ran >> ${ran}\nexit 1`);
    await mkdir(path.join(f.workspace, '.cellmate'));
    // A new server, a built-in's command and settings replaced, and a file that trusts itself.
    await writeFile(
      path.join(f.workspace, '.cellmate', 'lsp.json'),
      JSON.stringify({
        trustedWorkspaces: true,
        servers: {
          gopls: { languages: ['.go'], command: path.join(f.workspace, 'evil.sh'), rootMarkers: ['go.mod'] },
          basedpyright: {
            command: path.join(f.workspace, 'evil.sh'),
            settings: { python: { pythonPath: path.join(f.workspace, 'evil.sh') } },
            notebooks: 'concatenated'
          }
        }
      })
    );
    const status = (await f.call('lsp', { action: 'status' })).output;
    expect(status).toContain('Configuration problems');
    expect(status).toMatch(
      /server "gopls": ignored "command" — a workspace's own file may start or steer a language server only in a workspace you trust; add "trustedWorkspaces": \[".*"\] to \/nonexistent\/\.cellmate\/lsp\.json/
    );
    expect(status).toMatch(/server "basedpyright": ignored "command", "settings"/);
    expect((await f.call('lsp', { action: 'symbols', file: 'main.go' })).output).toContain(
      'No language server is configured for .go files'
    );
    // basedpyright keeps its own command and settings (what the file may set, it did).
    const [entry] = (await f.service.servers()).filter((e) => e.name === 'basedpyright');
    expect(entry).toMatchObject({ command: 'basedpyright-langserver', notebooks: 'concatenated' });
    expect(entry!.settings).not.toHaveProperty('python.pythonPath');
    await f.call('lsp', { action: 'hover', file: 'a.py', line: 1, symbol: 'x' });
    expect(await readFile(ran, 'utf8').catch(() => 'never ran')).toBe('never ran');
  }, 60_000);

  it('a configured entry (workspace .cellmate/lsp.json, trusted from home) with its marker and executable on PATH is usable; without the PATH entry it is not', async () => {
    const f = await trustedFixture();
    await writeFile(path.join(f.workspace, 'go.mod'), 'module x\n');
    await writeFile(path.join(f.workspace, 'main.go'), 'package main\n');
    await mkdir(path.join(f.workspace, '.cellmate'));
    await writeFile(
      path.join(f.workspace, '.cellmate', 'lsp.json'),
      JSON.stringify({ servers: { gopls: { languages: ['.go'], command: 'my-gopls', rootMarkers: ['go.mod'] } } })
    );
    const before = await f.call('lsp', { action: 'status', file: 'main.go' });
    expect(before.output).toMatch(/gopls \(\.go\): not usable — executable not found/);
    const bin = path.join(f.workspace, '.venv', 'bin', 'my-gopls');
    await script(bin, 'exit 0');
    await f.call('lsp', { action: 'reload', file: 'main.go' });
    const after = await f.call('lsp', { action: 'status', file: 'main.go' });
    expect(after.output).toContain(`gopls (.go): usable — root . (go.mod), executable ${bin}`);
  });

  it("trusted: the project's .venv/bin comes before PATH and Cellmate's own servers; untrusted: it is never taken", async () => {
    const f = await trustedFixture();
    await writeFile(path.join(f.workspace, 'pyproject.toml'), '[project]\nname = "x"\n');
    await writeFile(path.join(f.workspace, 'a.py'), 'x = 1\n');
    const mine = path.join(f.workspace, '.venv', 'bin', 'basedpyright-langserver');
    await script(mine, 'exit 0');
    expect((await f.call('lsp', { action: 'status', file: 'a.py' })).output).toContain(`executable ${mine}`);
    const untrusted = await fixture([], {
      env: { ...process.env, HOME: '/nonexistent', CELLMATE_HOME: '/nonexistent/.cellmate' }
    });
    await writeFile(path.join(untrusted.workspace, 'pyproject.toml'), '[project]\nname = "x"\n');
    await writeFile(path.join(untrusted.workspace, 'a.py'), 'x = 1\n');
    await script(path.join(untrusted.workspace, '.venv', 'bin', 'basedpyright-langserver'), 'exit 0');
    const status = (await f.call('lsp', { action: 'status', file: 'a.py' }),
    await untrusted.call('lsp', { action: 'status', file: 'a.py' })).output;
    expect(status).not.toContain(path.join(untrusted.workspace, '.venv'));
    expect(status).toContain('Workspace not trusted');
  });
});

describe('lifecycle (LSP-5)', () => {
  it('lazy: nothing runs until a call needs a server; each file is served from its nearest root', async () => {
    const f = await fixture(['py']);
    await mkdir(path.join(f.workspace, 'other'));
    await writeFile(path.join(f.workspace, 'other', 'pyproject.toml'), '[project]\nname = "o"\n');
    await writeFile(path.join(f.workspace, 'other', 'o.py'), 'def f() -> int:\n    return 1\n');
    expect((await f.call('lsp', { action: 'status' })).output).toContain('Running: none');
    expect((await f.call('lsp', { action: 'hover', file: 'py/pkg/util.py', line: 1, symbol: 'load_data' })).ok).toBe(
      true
    );
    expect((await f.call('lsp', { action: 'hover', file: 'other/o.py', line: 1, symbol: 'f' })).ok).toBe(true);
    const status = (await f.call('lsp', { action: 'status' })).output;
    expect(status).toMatch(/- basedpyright for py \(running, pid \d+/);
    expect(status).toMatch(/- basedpyright for other \(running, pid \d+/);
  }, 60_000);

  it('kill -9 of basedpyright: the next call restarts it and answers', async () => {
    const f = await fixture(['py'], { flat: true });
    expect((await f.call('lsp', { action: 'hover', file: 'pkg/util.py', line: 1, symbol: 'load_data' })).ok).toBe(true);
    const [client] = await f.service.runningClients();
    const pid = client!.process.pid!;
    process.kill(pid, 'SIGKILL');
    await client!.process.exited;
    const again = await f.call('lsp', { action: 'definition', file: 'pkg/main.py', line: 3, symbol: 'load_data' });
    expect(again.output).toContain('pkg/util.py:1');
    const status = (await f.call('lsp', { action: 'status' })).output;
    expect(status).toMatch(/basedpyright for \. \(running, pid (\d+).*restarted 1×/);
    expect(status).not.toContain(`pid ${pid},`);
  }, 60_000);

  it('a server that cannot start is not respawned on every call; reload tries again', async () => {
    const f = await trustedFixture();
    const runs = path.join(f.workspace, 'runs.txt');
    await writeFile(path.join(f.workspace, 'x.toml'), '');
    await writeFile(path.join(f.workspace, 'a.broken'), 'a\n');
    await script(
      path.join(f.workspace, '.venv', 'bin', 'broken-ls'),
      `echo run >> ${runs}\necho "cannot start: missing config" >&2\nexit 3`
    );
    await mkdir(path.join(f.workspace, '.cellmate'));
    await writeFile(
      path.join(f.workspace, '.cellmate', 'lsp.json'),
      JSON.stringify({ servers: { broken: { languages: ['.broken'], command: 'broken-ls', rootMarkers: ['x.toml'] } } })
    );
    const first = await f.call('lsp', { action: 'symbols', file: 'a.broken' });
    expect(first.ok).toBe(false);
    expect(first.output).toMatch(/broken for \. failed to start: .*exit code 3.*cannot start: missing config/);
    const second = await f.call('lsp', { action: 'symbols', file: 'a.broken' });
    expect(second.output).toMatch(
      /failed to start: .*cannot start: missing config.* It is not started again until \d\d:\d\d:\d\d UTC/
    );
    expect((await readFile(runs, 'utf8')).trim().split('\n')).toHaveLength(1);
    await f.call('lsp', { action: 'reload', file: 'a.broken' });
    await f.call('lsp', { action: 'symbols', file: 'a.broken' });
    expect((await readFile(runs, 'utf8')).trim().split('\n')).toHaveLength(2);
  }, 60_000);
});

describe('bounded: language servers per workspace and in all (least recently used stops first)', () => {
  /** Roots r0…r{n-1}, each a project with one type error. */
  async function roots(f: LspFixture, n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      await mkdir(path.join(f.workspace, `r${i}`));
      await writeFile(path.join(f.workspace, `r${i}`, 'pyproject.toml'), `[project]\nname = "r${i}"\n`);
      await writeFile(path.join(f.workspace, `r${i}`, 'a.py'), `def f${i}() -> int:\n    return "not an int"\n`);
    }
  }
  const runningCount = async (f: LspFixture): Promise<number> =>
    ((await f.service.status()).match(/\(running, pid \d+/g) ?? []).length;

  it('a glob over 4 roots answers for every file with never more than 2 servers running (maxServers 2)', async () => {
    const f = await fixture([], { maxServers: 2 });
    await roots(f, 4);
    let peak = 0;
    let polling = true;
    const poll = (async () => {
      while (polling) {
        peak = Math.max(peak, (await f.service.runningClients()).length);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const r = await f.call('lsp', { action: 'diagnostics', file: 'r*/a.py' });
    polling = false;
    await poll;
    expect(r.output).toMatch(/^4 diagnostics in 4 files matching "r\*\/a\.py":/);
    for (let i = 0; i < 4; i++) expect(r.output).toContain(`r${i}/a.py:2`);
    expect(peak).toBeLessThanOrEqual(2);
    expect(await runningCount(f)).toBe(2);
    // The two most recently used roots are the ones still running.
    const status = (await f.call('lsp', { action: 'status' })).output;
    expect(status).toMatch(/basedpyright for r2 \(running/);
    expect(status).toMatch(/basedpyright for r3 \(running/);
  }, 180_000);

  it("the total cap counts every workspace's servers: a third server in another workspace stops the least recently used one", async () => {
    const a = await fixture([], { maxServersTotal: 2 });
    const b = await fixture([], { maxServersTotal: 2 });
    await roots(a, 2);
    await roots(b, 1);
    expect((await a.call('lsp', { action: 'hover', file: 'r0/a.py', line: 1, symbol: 'f0' })).ok).toBe(true);
    expect((await a.call('lsp', { action: 'hover', file: 'r1/a.py', line: 1, symbol: 'f1' })).ok).toBe(true);
    expect((await b.call('lsp', { action: 'hover', file: 'r0/a.py', line: 1, symbol: 'f0' })).ok).toBe(true);
    expect((await runningCount(a)) + (await runningCount(b))).toBe(2);
    expect((await a.call('lsp', { action: 'status' })).output).not.toMatch(/basedpyright for r0 \(running/);
    // The stopped one starts again when it is needed.
    expect((await a.call('lsp', { action: 'hover', file: 'r0/a.py', line: 1, symbol: 'f0' })).output).toContain(
      'def f0() -> int'
    );
  }, 180_000);
});
