/**
 * The folder floors of server/src (ARCHITECTURE.md): a file imports only from its own folder
 * or a floor below. The checker is the script `npm run depcheck` runs; these tests run it the
 * way CI does, on the real tree and on a copy with one import turned the wrong way.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const script = path.join(repo, 'scripts/check-floors.mjs');
const copy = mkdtempSync(path.join(tmpdir(), 'cellmate-floors-'));
cpSync(path.join(repo, 'server/src'), copy, { recursive: true });
afterAll(() => rmSync(copy, { recursive: true, force: true }));

function check(root: string): { ok: boolean; output: string } {
  try {
    return { ok: true, output: execFileSync(process.execPath, [script, root], { encoding: 'utf8', stdio: 'pipe' }) };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

function withLine(file: string, line: string, run: () => void): void {
  const target = path.join(copy, file);
  const before = readFileSync(target, 'utf8');
  writeFileSync(target, `${line}\n${before}`);
  try {
    run();
  } finally {
    writeFileSync(target, before);
  }
}

describe('folder floors (renovation: one direction)', () => {
  it('the tree as it is imports only downward', () => {
    const result = check(path.join(repo, 'server/src'));
    expect(result.output).toContain('imports only downward');
    expect(result.ok).toBe(true);
  });

  it('a basement file importing a tool fails, naming the file and the import', () => {
    withLine('workspace/file-io.ts', "import { readTool } from '../tools/read/read.js';", () => {
      const result = check(copy);
      expect(result.ok).toBe(false);
      expect(result.output).toContain(
        'workspace/file-io.ts: imports ../tools/read/read.js ("tools" is above "workspace")'
      );
    });
    expect(check(copy).ok).toBe(true);
  });

  it('the gate importing a mode, and a type-only or re-export arrow, fail alike', () => {
    withLine('gate/catalog.ts', "import type { PlanPort } from '../modes/plan/plan-port.js';", () => {
      expect(check(copy).output).toContain('gate/catalog.ts: imports ../modes/plan/plan-port.js');
    });
    withLine('notebooks/ipynb.ts', "export { ChatService } from '../chats/chat-service.js';", () => {
      expect(check(copy).output).toContain('notebooks/ipynb.ts: imports ../chats/chat-service.js');
    });
  });

  it('siblings on one floor do not import each other, and a new folder needs a floor', () => {
    withLine('lsp/documents.ts', "import { DebugSessionManager } from '../dap/session-manager.js';", () => {
      expect(check(copy).output).toContain('"lsp" and "dap" are siblings on one floor');
    });
    const extra = path.join(copy, 'newroom');
    cpSync(path.join(copy, 'base'), extra, { recursive: true });
    try {
      expect(check(copy).output).toContain('folder "newroom" has no floor');
    } finally {
      rmSync(extra, { recursive: true, force: true });
    }
  });
});
