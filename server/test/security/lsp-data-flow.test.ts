/**
 * A language server follows data flow out of files the policy withholds: `k = API_KEY` in
 * an allowed file hovers as `Literal['sk-…']` when `API_KEY` lives in a deny-ruled file, and
 * a diagnostic quotes the same type. On real basedpyright and typescript-language-server
 * (a `.ts` twin), with the person's deny rule on `conf/**`: hover, diagnostics (the `lsp`
 * tool's and those a write folds in), symbols and code actions never print a value of the
 * withheld files — short, long (which pyright cuts with `…`) or folded into a longer
 * literal — while literals of allowed files still show.
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/config/logger.js';
import { DocumentSync } from '../../src/lsp/documents.js';
import { LspService } from '../../src/lsp/lsp-service.js';
import { WriteDiagnostics } from '../../src/lsp/write-diagnostics.js';
import { PolicyStore } from '../../src/policy/policy-store.js';
import { writeTool } from '../../src/tools/index.js';
import { createLspTool } from '../../src/tools/lsp/lsp.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { answeringPerson } from '../helpers/answering-person.js';
import { BUNDLED_BINS } from '../lsp/lsp-fixtures.js';

const SECRET = 'sk-live-FLOW-0123456789';
const LONG_SECRET = `tok-${'A1b2C3d4'.repeat(8)}`;
const PIN = '77123';
const ALLOWED = 'hello-allowed-text';

let parent: string;
let ws: string;
let service: LspService;
let registry: ToolRegistry;
let hook: WriteDiagnostics;
let calls = 0;

async function call(
  tool: string,
  args: Record<string, unknown>
): Promise<{ ok: boolean; output: string; display?: unknown }> {
  const r = await registry.call(tool, args, {
    workspace: ws,
    signal: new AbortController().signal,
    actor: 'model',
    chatId: `flow-${++calls}`
  });
  return { ok: r.ok, output: r.output, display: r.ok ? r.display : undefined };
}

function expectNoWithheldValue(r: { output: string; display?: unknown }): void {
  const all = `${r.output}\n${JSON.stringify(r.display ?? null)}`;
  expect(all).not.toContain(SECRET);
  expect(all).not.toContain(LONG_SECRET.slice(0, 20));
  expect(all).not.toMatch(new RegExp(`\\b${PIN}\\b`));
  expect(all).not.toContain('FLOW-0123');
}

beforeAll(async () => {
  parent = await realpath(await mkdtemp(path.join(os.tmpdir(), 'cellmate-lsp-flow-')));
  ws = path.join(parent, 'ws');
  const home = path.join(parent, 'home');
  await mkdir(path.join(ws, 'conf'), { recursive: true });
  await mkdir(path.join(home, '.cellmate'), { recursive: true });
  await writeFile(path.join(ws, 'pyproject.toml'), '[project]\nname = "victim"\n');
  await writeFile(path.join(ws, 'package.json'), '{"name": "victim", "private": true}\n');
  await writeFile(
    path.join(ws, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { strict: true, target: 'es2022', module: 'es2022', moduleResolution: 'bundler', noEmit: true },
      include: ['*.ts', 'conf/*.ts']
    })
  );
  await writeFile(path.join(ws, 'conf', '__init__.py'), '');
  await writeFile(
    path.join(ws, 'conf', 'secrets.py'),
    `API_KEY = "${SECRET}"\nLONG = "${LONG_SECRET}"\nPIN = ${PIN}\n`
  );
  await writeFile(
    path.join(ws, 'conf', 'secrets.ts'),
    `export const API_KEY = "${SECRET}";\nexport const PIN = ${PIN};\n`
  );
  await writeFile(path.join(ws, 'util.py'), `GREETING = "${ALLOWED}"\n`);
  await writeFile(path.join(ws, 'util.ts'), `export const GREETING = "${ALLOWED}";\n`);
  await writeFile(
    path.join(ws, 'app.py'),
    [
      'from conf.secrets import API_KEY, LONG, PIN',
      'from util import GREETING',
      '',
      'k = API_KEY',
      'longer = LONG',
      'pin = PIN',
      'both = API_KEY + "-suffix"',
      'g = GREETING',
      'n: int = API_KEY',
      ''
    ].join('\n')
  );
  await writeFile(
    path.join(ws, 'app.ts'),
    [
      'import { API_KEY, PIN } from "./conf/secrets";',
      'import { GREETING } from "./util";',
      'export const k = API_KEY;',
      'export const pin = PIN;',
      'export const g = GREETING;',
      'export const n: number = API_KEY;',
      ''
    ].join('\n')
  );
  await writeFile(
    path.join(home, '.cellmate', 'policy.json'),
    JSON.stringify({ rules: [{ tool: '*', pattern: 'conf/**', action: 'deny' }] })
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
  hook = new WriteDiagnostics(docs);
  // The write is approved by a person on its card (write asks by default); the deny rule is the subject here.
  registry = new ToolRegistry([createLspTool(service, docs), writeTool], {
    policy: new PolicyStore({ workspace: ws, env }),
    approvals: answeringPerson('once').broker,
    writeHook: hook
  });
}, 60_000);

afterAll(async () => {
  hook?.dispose();
  await service?.dispose();
  registry?.dispose();
  await rm(parent, { recursive: true, force: true });
});

describe('HARN-6 LSP-4: values of deny-ruled files do not flow out through a language server', () => {
  it('basedpyright hover on names whose type is a withheld literal hides the value; an allowed literal still shows', async () => {
    for (const [line, symbol] of [
      [4, 'k'],
      [5, 'longer'],
      [6, 'pin'],
      [7, 'both']
    ] as const) {
      const r = await call('lsp', { action: 'hover', file: 'app.py', line, symbol });
      expect(r.ok, r.output).toBe(true);
      expectNoWithheldValue(r);
      expect(r.output, symbol).toContain(symbol);
    }
    const control = await call('lsp', { action: 'hover', file: 'app.py', line: 8, symbol: 'g' });
    expect(control.output).toContain(`Literal['${ALLOWED}']`);
  }, 120_000);

  it('basedpyright diagnostics name the type mismatch without the value', async () => {
    const r = await call('lsp', { action: 'diagnostics', file: 'app.py' });
    expectNoWithheldValue(r);
    expect(r.output).toMatch(/app\.py:9 \[error\] .*is not assignable to declared type "int"/);
    expect(r.output).toContain('[withheld]');
  }, 120_000);

  it('a write that introduces the mismatch folds in new diagnostics without the value', async () => {
    const r = await call('write', {
      path: 'use.py',
      content: 'from conf.secrets import API_KEY\n\nm: int = API_KEY\n'
    });
    expect(r.ok, r.output).toBe(true);
    expect(r.output).toMatch(/New diagnostics \(\d+\):[\s\S]*use\.py:3 \[error\]/);
    expectNoWithheldValue(r);
  }, 120_000);

  it('typescript-language-server: diagnostics and hover of the .ts twin hide the value; an allowed literal still shows', async () => {
    const d = await call('lsp', { action: 'diagnostics', file: 'app.ts' });
    expectNoWithheldValue(d);
    expect(d.output).toMatch(/app\.ts:6 \[error\] Type '[^']+' is not assignable to type 'number'/);
    for (const [line, symbol] of [
      [3, 'k'],
      [4, 'pin']
    ] as const) {
      const r = await call('lsp', { action: 'hover', file: 'app.ts', line, symbol });
      expect(r.ok, r.output).toBe(true);
      expectNoWithheldValue(r);
      expect(r.output).toContain(`const ${symbol}: [withheld]`);
    }
    const control = await call('lsp', { action: 'hover', file: 'app.ts', line: 5, symbol: 'g' });
    expect(control.output).toContain(`"${ALLOWED}"`);
  }, 120_000);

  it('the files themselves stay denied to lsp', async () => {
    expect(
      (await call('lsp', { action: 'hover', file: 'conf/secrets.py', line: 1, symbol: 'API_KEY' })).output
    ).toMatch(/^Denied/);
  });
});
