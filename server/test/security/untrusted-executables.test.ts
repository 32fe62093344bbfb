/**
 * Trust decides what runs: a cloned repository that plants executables where language
 * servers, checkers and debug adapters used to look for them — `.venv/bin/*`,
 * `node_modules/.bin/*`, `node_modules/typescript/lib/tsserver.js` in the workspace and in
 * the folder above it, a `pyrightconfig.json` venv, a tsconfig plugin — gets none of them
 * run in an untrusted workspace while `lsp` and `debug adapters` still answer from PATH
 * and Cellmate's own servers. The same workspace, trusted, uses its own `.venv` Python.
 *
 * Every planted program appends its name to one marker file and then hands over to the real
 * tool, so on code that still took them the answers would be right and only the marker would
 * tell (this is what an attacker's copy would do too).
 */
import { chmod, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { silentLogger } from '../../src/config/logger.js';
import { serveMcpStdio } from '../../src/mcp/serve.js';
import { DocumentSync } from '../../src/lsp/documents.js';
import { LspService } from '../../src/lsp/lsp-service.js';
import { createLspTool } from '../../src/tools/lsp/lsp.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { BUNDLED_BINS, REPO } from '../lsp/lsp-fixtures.js';
import { debugRig, PYTHON } from '../dap/fixtures.js';

const REAL_BIN = BUNDLED_BINS[0]!;
const REAL_TSSERVER = path.join(REPO, 'node_modules', 'typescript', 'lib', 'tsserver.js');

let parent: string;
let ws: string;
let home: string;
let marker: string;
let env: NodeJS.ProcessEnv;

async function put(file: string, text: string, mode = 0o644): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
  await chmod(file, mode);
}

/** A shell program that logs `name` and then runs `real` with the same arguments. */
async function plantScript(file: string, name: string, real: string): Promise<void> {
  await put(file, `#!/bin/sh\necho ${name} >> '${marker}'\nexec '${real}' "$@"\n`, 0o755);
}

/** A TypeScript package whose tsserver logs `name` and then loads the real one. */
async function plantTypescript(dir: string, name: string): Promise<void> {
  await put(
    path.join(dir, 'node_modules', 'typescript', 'package.json'),
    JSON.stringify({ name: 'typescript', version: '5.9.3', main: 'lib/typescript.js' })
  );
  await put(
    path.join(dir, 'node_modules', 'typescript', 'lib', 'tsserver.js'),
    `require('fs').appendFileSync(${JSON.stringify(marker)}, ${JSON.stringify(name + '\n')});\nrequire(${JSON.stringify(REAL_TSSERVER)});\n`
  );
  await put(
    path.join(dir, 'node_modules', 'typescript', 'lib', 'typescript.js'),
    `require('fs').appendFileSync(${JSON.stringify(marker)}, ${JSON.stringify(name + '-lib\n')});\nmodule.exports = require(${JSON.stringify(path.join(REPO, 'node_modules', 'typescript'))});\n`
  );
}

async function ran(): Promise<string[]> {
  return (await readFile(marker, 'utf8').catch(() => '')).split('\n').filter(Boolean);
}

function lspRig(): {
  service: LspService;
  registry: ToolRegistry;
  call(args: Record<string, unknown>): Promise<{ ok: boolean; output: string }>;
} {
  const service = new LspService({
    workspace: ws,
    env,
    logger: silentLogger,
    bundledBins: BUNDLED_BINS,
    diagnosticsWaitMs: 60_000
  });
  const registry = new ToolRegistry([createLspTool(service, new DocumentSync(service))]);
  return {
    service,
    registry,
    call: async (args) => {
      const r = await registry.call('lsp', args, {
        workspace: ws,
        signal: new AbortController().signal,
        actor: 'model',
        chatId: 'chat-1'
      });
      return { ok: r.ok, output: r.output };
    }
  };
}

beforeAll(async () => {
  parent = await realpath(await mkdtemp(path.join(os.tmpdir(), 'cellmate-planted-')));
  ws = path.join(parent, 'ws');
  home = path.join(parent, 'home');
  marker = path.join(parent, 'ran.log');
  await mkdir(home, { recursive: true });
  // PATH without the repo's node_modules/.bin (vitest puts it there): Cellmate's own servers come from bundledBins.
  const PATH = (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((d) => !d.includes('node_modules'))
    .join(path.delimiter);
  env = {
    ...process.env,
    PATH,
    HOME: home,
    CELLMATE_HOME: home,
    CELLMATE_PYTHON: PYTHON,
    CELLMATE_TRUSTED_WORKSPACES: ''
  };

  // Python: a project root with its own .venv, a root whose pyrightconfig names a venv, and debugpy's marker.
  await put(path.join(ws, 'pyproject.toml'), '[project]\nname = "victim"\n');
  await put(path.join(ws, 'requirements.txt'), '');
  await put(
    path.join(ws, 'app.py'),
    'def area(width: int, height: int) -> int:\n    return width * height\n\nprint(area(2, 3))\n'
  );
  for (const bin of ['.venv/bin', 'venv/bin', 'node_modules/.bin']) {
    await plantScript(path.join(ws, bin, 'python'), `${bin}/python`, PYTHON);
    await plantScript(
      path.join(ws, bin, 'basedpyright-langserver'),
      `${bin}/basedpyright-langserver`,
      path.join(REAL_BIN, 'basedpyright-langserver')
    );
    await plantScript(path.join(ws, bin, 'basedpyright'), `${bin}/basedpyright`, path.join(REAL_BIN, 'basedpyright'));
    await plantScript(
      path.join(ws, bin, 'typescript-language-server'),
      `${bin}/typescript-language-server`,
      path.join(REAL_BIN, 'typescript-language-server')
    );
    await plantScript(path.join(ws, bin, 'tsc'), `${bin}/tsc`, path.join(REAL_BIN, 'tsc'));
  }
  await put(path.join(ws, 'cfg', 'pyrightconfig.json'), JSON.stringify({ venvPath: '.', venv: 'env' }));
  await put(path.join(ws, 'cfg', 'mod.py'), 'LIMIT: int = 3\n');
  await plantScript(path.join(ws, 'cfg', 'env', 'bin', 'python'), 'cfg/env/bin/python', PYTHON);

  // TypeScript: one root with its own node_modules/typescript and a tsconfig plugin, one root
  // without (the server used to walk up past the workspace to the parent's copy).
  await put(
    path.join(ws, 'web', 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { strict: true, plugins: [{ name: 'evil-plugin' }] } })
  );
  await put(
    path.join(ws, 'web', 'a.ts'),
    'export function twice(n: number): number {\n  return n * 2;\n}\nexport const four = twice(2);\n'
  );
  await plantTypescript(path.join(ws, 'web'), 'web/node_modules/typescript');
  await put(
    path.join(ws, 'web', 'node_modules', 'evil-plugin', 'package.json'),
    JSON.stringify({ name: 'evil-plugin', main: 'index.js' })
  );
  await put(
    path.join(ws, 'web', 'node_modules', 'evil-plugin', 'index.js'),
    `require('fs').appendFileSync(${JSON.stringify(marker)}, 'evil-plugin\\n');\nmodule.exports = () => ({ create: (info) => info.languageService });\n`
  );
  await put(path.join(ws, 'tsconfig.json'), JSON.stringify({ files: ['other/b.ts'] }));
  await put(path.join(ws, 'other', 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true } }));
  await put(path.join(ws, 'other', 'b.ts'), 'export const label: string = "b";\n');
  await plantTypescript(parent, 'parent/node_modules/typescript');
  await plantScript(
    path.join(parent, 'node_modules', '.bin', 'typescript-language-server'),
    'parent/node_modules/.bin/typescript-language-server',
    path.join(REAL_BIN, 'typescript-language-server')
  );
}, 60_000);

afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

describe('an untrusted workspace runs none of its own programs', () => {
  it('lsp hover/definition/status and diagnostics "*" answer from Cellmate\'s own servers; nothing planted ran', async () => {
    const { service, call } = lspRig();
    try {
      const status = await call({ action: 'status', file: 'app.py' });
      expect(status.output).toContain('Workspace not trusted');
      expect(status.output).toContain(`executable ${path.join(REAL_BIN, 'basedpyright-langserver')}`);
      const hover = await call({ action: 'hover', file: 'app.py', line: 4, symbol: 'area' });
      expect(hover.ok, hover.output).toBe(true);
      expect(hover.output).toMatch(/def area\(\s*width: int,\s*height: int\s*\) -> int/);
      expect((await call({ action: 'hover', file: 'cfg/mod.py', line: 1, symbol: 'LIMIT' })).output).toContain('LIMIT');
      const ts = await call({ action: 'hover', file: 'web/a.ts', line: 4, symbol: 'twice' });
      expect(ts.ok, ts.output).toBe(true);
      expect(ts.output).toContain('function twice(n: number): number');
      const up = await call({ action: 'hover', file: 'other/b.ts', line: 1, symbol: 'label' });
      expect(up.ok, up.output).toBe(true);
      expect(up.output).toContain('const label: string');
      const all = await call({ action: 'diagnostics', file: '*' });
      expect(all.ok, all.output).toBe(true);
      expect(all.output).toMatch(/basedpyright --outputjson in \.: \d+ diagnostic/);
      expect(all.output).toMatch(/tsc --noEmit --pretty false in \.: 0 diagnostics/);
      expect(await ran()).toEqual([]);
    } finally {
      await service.dispose();
    }
  }, 180_000);

  it('over `cellmate mcp` (an external MCP client calling lsp): the same answers, nothing planted ran', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const served = serveMcpStdio({ workspace: ws, env, logger: silentLogger, input, output });
    type Reply = { id?: number; result?: { content: Array<{ text: string }>; isError?: boolean } };
    const replies = new Map<number, Reply>();
    let buffer = '';
    output.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const message = JSON.parse(buffer.slice(0, nl)) as Reply;
        buffer = buffer.slice(nl + 1);
        if (typeof message.id === 'number') replies.set(message.id, message);
      }
    });
    const send = (message: object): void => void input.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    const reply = async (id: number) => {
      for (let i = 0; i < 1200 && !replies.has(id); i++) await new Promise((r) => setTimeout(r, 100));
      return replies.get(id)!;
    };
    send({
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'attacker', version: '1' } }
    });
    await reply(1);
    send({ method: 'notifications/initialized' });
    send({
      id: 2,
      method: 'tools/call',
      params: { name: 'lsp', arguments: { action: 'hover', file: 'app.py', line: 4, symbol: 'area' } }
    });
    send({
      id: 3,
      method: 'tools/call',
      params: { name: 'lsp', arguments: { action: 'hover', file: 'other/b.ts', line: 1, symbol: 'label' } }
    });
    expect((await reply(2)).result?.content[0]?.text).toMatch(/def area\(\s*width: int,\s*height: int\s*\) -> int/);
    expect((await reply(3)).result?.content[0]?.text).toContain('const label: string');
    input.end();
    await served;
    expect(await ran()).toEqual([]);
  }, 180_000);

  it("debug adapters: debugpy is found without running the project's .venv/venv python, even to probe it", async () => {
    const rig = await debugRig({ env });
    try {
      const r = await rig.registry.call(
        'debug',
        { action: 'adapters' },
        { workspace: ws, signal: new AbortController().signal, actor: 'model', chatId: 'chat-1' }
      );
      expect(r.output).toMatch(/debugpy: usable — marker pyproject\.toml, adapter `\S+ -m debugpy\.adapter`/);
      expect(r.output).not.toContain(path.join(ws, '.venv'));
      expect(await ran()).toEqual([]);
    } finally {
      await rig.dispose();
    }
  }, 60_000);

  it('the debugpy probe runs with the scrubbed environment: a python3 on PATH sees no key', async () => {
    const bin = path.join(parent, 'probe-bin');
    const dump = path.join(parent, 'probe-env.txt');
    await put(path.join(bin, 'python3'), `#!/bin/sh\nenv > '${dump}'\nexit 1\n`, 0o755);
    const probeEnv = {
      ...env,
      PATH: `${bin}${path.delimiter}${env.PATH}`,
      CELLMATE_PYTHON: path.join(bin, 'no-python'),
      OPENAI_API_KEY: 'sk-probe-FAKE-0123456789',
      CELLMATE_JUPYTER_TOKEN: 'jupyter-probe-FAKE'
    };
    const rig = await debugRig({ env: probeEnv });
    try {
      const r = await rig.registry.call(
        'debug',
        { action: 'adapters' },
        { workspace: ws, signal: new AbortController().signal, actor: 'model', chatId: 'chat-1' }
      );
      expect(r.output).toMatch(/debugpy: not usable here/);
      const seen = await readFile(dump, 'utf8');
      expect(seen).toContain(`PATH=${bin}`);
      expect(seen).not.toContain('sk-probe-FAKE');
      expect(seen).not.toContain('jupyter-probe-FAKE');
    } finally {
      await rig.dispose();
    }
  }, 60_000);
});

describe('the same workspace, trusted', () => {
  it('uses its own .venv python for lsp (and its own server), and debugpy through the project venv', async () => {
    await writeFile(path.join(home, 'lsp.json'), JSON.stringify({ trustedWorkspaces: [ws] }));
    const { service, call } = lspRig();
    try {
      expect((await call({ action: 'status', file: 'app.py' })).output).toContain('Workspace trusted');
      const hover = await call({ action: 'hover', file: 'app.py', line: 4, symbol: 'area' });
      expect(hover.ok, hover.output).toBe(true);
      expect(hover.output).toMatch(/def area\(\s*width: int,\s*height: int\s*\) -> int/);
      const log = await ran();
      expect(log).toContain('node_modules/.bin/basedpyright-langserver');
      expect(log).toContain('.venv/bin/python');
    } finally {
      await service.dispose();
      await writeFile(marker, '');
    }
    const rig = await debugRig({ env });
    try {
      const r = await rig.registry.call(
        'debug',
        { action: 'adapters' },
        { workspace: ws, signal: new AbortController().signal, actor: 'model', chatId: 'chat-1' }
      );
      expect(r.output).toContain(`adapter \`${path.join(ws, '.venv', 'bin', 'python')} -m debugpy.adapter\``);
    } finally {
      await rig.dispose();
      await rm(path.join(home, 'lsp.json'));
    }
  }, 120_000);
});
