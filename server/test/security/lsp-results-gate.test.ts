/**
 * Everything a language server returns passes the same gate as the tool's arguments. A
 * cloned repository with a deny-ruled `conf/secrets.py`, an in-repo symlink alias of it,
 * and a `pyrightconfig.json` whose `extraPaths` reaches a folder outside the workspace:
 * real basedpyright answers definition, hover, symbols and rename, and nothing of the
 * denied or outside files reaches the result — locations are withheld and counted, hover
 * text about them is withheld, and a rename whose edit would write them (through the
 * alias too) changes nothing. Files the policy allows still answer normally.
 */
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/config/logger.js';
import { DocumentSync } from '../../src/lsp/documents.js';
import { LspService } from '../../src/lsp/lsp-service.js';
import { PolicyStore } from '../../src/policy/policy-store.js';
import { createLspTool } from '../../src/tools/lsp/lsp.js';
import { createLspRenameTool } from '../../src/tools/lsp_rename/lsp_rename.js';
import { readTool } from '../../src/tools/index.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { BUNDLED_BINS } from '../lsp/lsp-fixtures.js';

const SECRET = 'sk-live-SECRET-0123456789';
const OUT_SECRET = 'out-SECRET-9876543210';
const SECRETS_PY = `API_KEY = "${SECRET}"\n\n\ndef token() -> str:\n    """Returns ${SECRET}."""\n    return API_KEY\n`;

let parent: string;
let ws: string;
let service: LspService;
let registry: ToolRegistry;

let calls = 0;
/** One call as the model makes it (each in its own chat: the refusals here are the point, not a run of them). */
async function call(tool: string, args: Record<string, unknown>): Promise<{ ok: boolean; output: string }> {
  const r = await registry.call(tool, args, {
    workspace: ws,
    signal: new AbortController().signal,
    actor: 'model',
    chatId: `chat-${++calls}`
  });
  return { ok: r.ok, output: r.output };
}

function expectNothingSecret(output: string): void {
  expect(output).not.toContain(SECRET);
  expect(output).not.toContain(OUT_SECRET);
  expect(output).not.toContain('secrets.py');
  expect(output).not.toContain('outside_mod.py');
}

beforeAll(async () => {
  parent = await realpath(await mkdtemp(path.join(os.tmpdir(), 'cellmate-lsp-gate-')));
  ws = path.join(parent, 'ws');
  const home = path.join(parent, 'home');
  await mkdir(path.join(ws, 'conf'), { recursive: true });
  await mkdir(path.join(parent, 'outside'), { recursive: true });
  await mkdir(path.join(home, '.cellmate'), { recursive: true });
  await writeFile(path.join(parent, 'outside', 'outside_mod.py'), `OUT_SECRET = "${OUT_SECRET}"\n`);
  await writeFile(path.join(ws, 'pyproject.toml'), '[project]\nname = "victim"\n');
  await writeFile(path.join(ws, 'pyrightconfig.json'), JSON.stringify({ extraPaths: ['../outside'] }));
  await writeFile(path.join(ws, 'conf', '__init__.py'), '');
  await writeFile(path.join(ws, 'conf', 'secrets.py'), SECRETS_PY);
  await symlink(path.join(ws, 'conf', 'secrets.py'), path.join(ws, 'alias.py'));
  await writeFile(path.join(ws, 'util.py'), 'def helper(n: int) -> int:\n    return n + 1\n');
  await writeFile(
    path.join(ws, 'app.py'),
    [
      'from conf.secrets import API_KEY, token',
      'from alias import token as token2',
      'from outside_mod import OUT_SECRET',
      'from util import helper',
      '',
      'print(API_KEY, token(), token2(), OUT_SECRET, helper(1))',
      ''
    ].join('\n')
  );
  // The person's rules: lsp_rename may write; nothing may touch conf/secrets.py.
  await writeFile(
    path.join(home, '.cellmate', 'policy.json'),
    JSON.stringify({
      rules: [
        { tool: 'lsp_rename', pattern: '*', action: 'allow' },
        { tool: '*', pattern: 'conf/secrets.py', action: 'deny' }
      ]
    })
  );
  const env = {
    ...process.env,
    HOME: home,
    CELLMATE_HOME: path.join(home, '.cellmate'),
    CELLMATE_TRUSTED_WORKSPACES: ''
  };
  service = new LspService({
    workspace: ws,
    env,
    logger: silentLogger,
    bundledBins: BUNDLED_BINS,
    diagnosticsWaitMs: 60_000
  });
  const docs = new DocumentSync(service);
  registry = new ToolRegistry([readTool, createLspTool(service, docs), createLspRenameTool(docs)], {
    policy: new PolicyStore({ workspace: ws, env })
  });
}, 60_000);

afterAll(async () => {
  await service?.dispose();
  registry?.dispose();
  await rm(parent, { recursive: true, force: true });
});

describe('lsp results pass the same gate as the arguments', () => {
  it('the rule holds for the tools themselves: read and lsp on secrets.py or its alias are denied', async () => {
    expect((await call('read', { path: 'conf/secrets.py' })).output).toMatch(/^Denied/);
    expect((await call('read', { path: 'alias.py' })).output).toMatch(/^Denied/);
    expect((await call('lsp', { action: 'symbols', file: 'alias.py' })).output).toMatch(/^Denied/);
  });

  it('definition: locations in the deny-ruled file, its alias and the extraPaths folder are withheld and counted; an allowed one is shown', async () => {
    const allowed = await call('lsp', { action: 'definition', file: 'app.py', line: 6, symbol: 'helper' });
    expect(allowed.output).toContain('util.py:1');
    for (const [line, symbol] of [
      [6, 'API_KEY'],
      [6, 'token'],
      [6, 'token2'],
      [6, 'OUT_SECRET'],
      [1, 'API_KEY'],
      [3, 'OUT_SECRET']
    ] as const) {
      const r = await call('lsp', { action: 'definition', file: 'app.py', line, symbol });
      expectNothingSecret(r.output);
      expect(r.output, `${symbol} line ${line}`).toMatch(
        /\(\d+ locations? withheld: outside the workspace or not allowed to this tool by the policy\)/
      );
    }
  }, 120_000);

  it('hover on a symbol defined in a withheld file is withheld; hover on an allowed one answers', async () => {
    expect((await call('lsp', { action: 'hover', file: 'app.py', line: 6, symbol: 'helper' })).output).toMatch(
      /def helper\(n: int\) -> int/
    );
    for (const symbol of ['API_KEY', 'token', 'token2', 'OUT_SECRET']) {
      const r = await call('lsp', { action: 'hover', file: 'app.py', line: 6, symbol });
      expectNothingSecret(r.output);
      expect(r.output).toContain(`Hover for "${symbol}" withheld`);
    }
  }, 60_000);

  it('references and workspace symbols drop the withheld files', async () => {
    const refs = await call('lsp', { action: 'references', file: 'app.py', line: 6, symbol: 'API_KEY' });
    expectNothingSecret(refs.output);
    expect(refs.output).toContain('app.py:1');
    expect(refs.output).toMatch(/withheld/);
    for (const query of ['API_KEY', 'OUT_SECRET', 'token']) {
      const r = await call('lsp', { action: 'symbols', file: 'app.py', query });
      expectNothingSecret(r.output);
    }
  }, 60_000);

  it('lsp_rename whose edit would write the deny-ruled file (directly or through the alias) changes nothing', async () => {
    const before = await readFile(path.join(ws, 'app.py'), 'utf8');
    // `token` where it is used, and where it is imported from the alias (the edit names alias.py).
    for (const [line, symbol] of [
      [6, 'token'],
      [2, 'token']
    ] as const) {
      const r = await call('lsp_rename', { file: 'app.py', line, symbol, new_name: 'renamed' });
      expect(r.ok, r.output).toBe(false);
      expect(r.output).toMatch(/which the policy does not let lsp_rename write\. Nothing was changed\./);
      expect(r.output).toContain('conf/secrets.py');
    }
    expect(await readFile(path.join(ws, 'conf', 'secrets.py'), 'utf8')).toBe(SECRETS_PY);
    expect(await readFile(path.join(ws, 'app.py'), 'utf8')).toBe(before);
    const ok = await call('lsp_rename', { file: 'util.py', line: 1, symbol: 'helper', new_name: 'helper2' });
    expect(ok.ok, ok.output).toBe(true);
    expect(await readFile(path.join(ws, 'app.py'), 'utf8')).toContain('helper2(1)');
  }, 60_000);
});
