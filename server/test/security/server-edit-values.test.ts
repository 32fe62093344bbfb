/**
 * A server's edit is untrusted text too: a server reads files the actor may not (here a
 * deny-ruled `conf/secrets.env`), and a code action that would copy one of their values into
 * an allowed file is refused before anything is written, while an ordinary action applies.
 * The server is a tiny scripted one (fault injection: no real server offers to inline another
 * file's constant), configured in the person's own lsp.json; the person approves the write on
 * its card, the deny rule is the subject.
 */
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/config/logger.js';
import { DocumentSync } from '../../src/lsp/documents.js';
import { LspService } from '../../src/lsp/lsp-service.js';
import { PolicyStore } from '../../src/policy/policy-store.js';
import { createLspCodeActionTool } from '../../src/tools/lsp_code_action/lsp_code_action.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { answeringPerson } from '../helpers/answering-person.js';

const SERVER = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'fixtures',
  'hostile-edit',
  'hostile-edit-server.mjs'
);
const SECRET = 'sk-live-EDIT-0123456789';

let parent: string;
let ws: string;
let service: LspService;
let registry: ToolRegistry;

beforeAll(async () => {
  parent = await realpath(await mkdtemp(path.join(os.tmpdir(), 'cellmate-edit-values-')));
  ws = path.join(parent, 'ws');
  const home = path.join(parent, 'home', '.cellmate');
  await mkdir(path.join(ws, 'conf'), { recursive: true });
  await mkdir(home, { recursive: true });
  await writeFile(path.join(ws, 'notes.root'), '');
  await writeFile(path.join(ws, 'conf', 'secrets.env'), `API_KEY="${SECRET}"\n`);
  await writeFile(path.join(ws, 'a.note'), 'hello\n');
  await writeFile(
    path.join(home, 'policy.json'),
    JSON.stringify({ rules: [{ tool: '*', pattern: 'conf/**', action: 'deny' }] })
  );
  const table = path.join(home, 'lsp.json');
  await writeFile(
    table,
    JSON.stringify({
      servers: {
        notes: {
          languages: ['.note'],
          command: 'node',
          args: [SERVER, path.join(ws, 'conf', 'secrets.env')],
          rootMarkers: ['notes.root']
        }
      }
    })
  );
  const env = { ...process.env, HOME: path.dirname(home), CELLMATE_HOME: home, CELLMATE_TRUSTED_WORKSPACES: '' };
  service = new LspService({
    workspace: ws,
    env,
    logger: silentLogger,
    bundledBins: [],
    tableFiles: [table],
    diagnosticsWaitMs: 30_000
  });
  registry = new ToolRegistry([createLspCodeActionTool(new DocumentSync(service))], {
    policy: new PolicyStore({ workspace: ws, env }),
    approvals: answeringPerson('once').broker
  });
}, 30_000);

afterAll(async () => {
  await service?.dispose();
  registry?.dispose();
  await rm(parent, { recursive: true, force: true });
});

describe('HARN-6 RENAME-1: a server edit that would copy a withheld value is refused', () => {
  it('the inlining action changes nothing and prints no value; an ordinary action applies', async () => {
    const call = (choice: number) =>
      registry.call(
        'lsp_code_action',
        { file: 'a.note', line: 1, choice },
        { workspace: ws, signal: new AbortController().signal, actor: 'model', chatId: 'edit' }
      );
    const refused = await call(1);
    expect(refused.ok).toBe(false);
    expect(refused.output).toBe(
      '"Inline the key" would write a value of a file withheld from lsp_code_action (by the policy, or outside the workspace) into a.note. Nothing was changed.'
    );
    expect(await readFile(path.join(ws, 'a.note'), 'utf8')).toBe('hello\n');
    const applied = await call(2);
    expect(applied.ok, applied.output).toBe(true);
    expect(await readFile(path.join(ws, 'a.note'), 'utf8')).toBe('# note\nhello\n');
  }, 60_000);
});
