/**
 * One memory budget across every language-server and debug-adapter stream (DBG-6, LSP-5):
 * real child processes (a tiny flooding server as fault injection) overrun it together;
 * the one holding the most is stopped with an error that names it, says why and that the
 * next call starts it again, the others answer, and the companion goes on.
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/config/logger.js';
import { startAdapterProcess } from '../../src/dap/adapter-process.js';
import { DapClient } from '../../src/dap/dap-client.js';
import { FrameBudget } from '../../src/framing/index.js';
import { DocumentSync } from '../../src/lsp/documents.js';
import { LspService } from '../../src/lsp/lsp-service.js';
import { createLspTool } from '../../src/tools/lsp/lsp.js';
import { ToolRegistry } from '../../src/gate/registry.js';

const FLOOD = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'flood', 'flood-server.mjs');
const MiB = 1024 * 1024;

describe('FrameBudget (pure)', () => {
  it('cuts the largest holder when the total passes the limit; the others keep their bytes', () => {
    const budget = new FrameBudget(100);
    const cut: string[] = [];
    const a = budget.open('a', () => cut.push('a'));
    const b = budget.open('b', () => cut.push('b'));
    expect(a.hold(40)).toBe(true);
    expect(b.hold(50)).toBe(true);
    expect(a.hold(55)).toBe(false); // total 105: a (55) holds the most
    expect(cut).toEqual(['a']);
    expect(budget.usedBytes).toBe(50);
    expect(b.hold(90)).toBe(true);
    expect(b.hold(120)).toBe(false); // alone over the limit
    expect(cut).toEqual(['a', 'b']);
    expect(budget.usedBytes).toBe(0);
    const c = budget.open('c', () => cut.push('c'));
    c.hold(70);
    expect(budget.open('d', () => cut.push('d')).hold(40)).toBe(true); // c (70) goes, not the newcomer
    expect(cut).toEqual(['a', 'b', 'c']);
    c.close();
    expect(FrameBudget.fromEnv({ CELLMATE_FRAME_BUDGET_MB: '8' }).limitBytes).toBe(8 * MiB);
    expect(FrameBudget.fromEnv({ CELLMATE_FRAME_BUDGET_MB: 'lots' }).limitBytes).toBe(64 * MiB);
  });
});

describe('DBG-6 LSP-5: the budget shared by language servers and debug adapters', () => {
  let parent: string;
  let ws: string;
  let service: LspService;
  let registry: ToolRegistry;
  const budget = new FrameBudget(16 * MiB);

  beforeAll(async () => {
    parent = await realpath(await mkdtemp(path.join(os.tmpdir(), 'cellmate-budget-')));
    ws = path.join(parent, 'ws');
    for (const root of ['big', 'small']) {
      await mkdir(path.join(ws, root), { recursive: true });
      await writeFile(path.join(ws, root, 'flood.root'), '');
    }
    await writeFile(path.join(ws, 'big', 'a.flood'), `flood=${60 * MiB}\n`);
    await writeFile(path.join(ws, 'small', 'b.flood'), `flood=${4 * MiB}\n`);
    const table = path.join(parent, 'lsp.json');
    await writeFile(
      table,
      JSON.stringify({
        servers: { flood: { languages: ['.flood'], command: 'node', args: [FLOOD], rootMarkers: ['flood.root'] } }
      })
    );
    service = new LspService({
      workspace: ws,
      env: process.env,
      logger: silentLogger,
      bundledBins: [],
      tableFiles: [table],
      diagnosticsWaitMs: 30_000,
      frameBudget: budget
    });
    registry = new ToolRegistry([createLspTool(service, new DocumentSync(service))]);
  }, 30_000);

  afterAll(async () => {
    await service?.dispose();
    registry?.dispose();
    await rm(parent, { recursive: true, force: true });
  });

  const hover = (file: string) =>
    registry.call(
      'lsp',
      { action: 'hover', file, line: 1, symbol: 'flood' },
      { workspace: ws, signal: new AbortController().signal, actor: 'model', chatId: 'budget' }
    );

  it('two servers and an adapter flood at once: the largest is stopped with a clear error, the others answer, the next call restarts it', async () => {
    const adapter = await startAdapterProcess(['node', FLOOD, '--dap', '--bytes', String(4 * MiB)], {
      cwd: ws,
      name: 'flood',
      budget
    });
    const dap = new DapClient(adapter.reader, adapter.writer, 'flood', false);
    try {
      await dap.request('initialize', { adapterID: 'flood' } as never);
      const [big, small, evaluated] = await Promise.all([
        hover('big/a.flood'),
        hover('small/b.flood'),
        dap.request('evaluate', { expression: 'x' } as never, { timeoutMs: 60_000 })
      ]);
      expect(big.ok).toBe(false);
      expect(big.output).toMatch(
        /^lsp failed: flood had sent \d+(\.\d)? MiB not yet read as whole messages while the language servers and debug adapters together held \d+(\.\d)? MiB, past the companion's budget of 16 MiB \(CELLMATE_FRAME_BUDGET_MB\); it is no longer read\. Cellmate stopped flood; the next lsp call starts it again/
      );
      expect(small.ok, small.output).toBe(true);
      expect(small.output).toContain('flood xxxx');
      expect((evaluated as { result: string }).result).toHaveLength(4 * MiB);
      expect(budget.usedBytes).toBe(0);
      // The stopped server starts again on the next call.
      await writeFile(path.join(ws, 'big', 'a.flood'), 'flood=12\n');
      const again = await hover('big/a.flood');
      expect(again.ok, again.output).toBe(true);
      expect(again.output).toContain(`flood ${'x'.repeat(12)}`);
    } finally {
      dap.close(new Error('test over'));
      adapter.kill();
    }
  }, 120_000);

  it('a debug adapter alone past the budget is stopped and its session request fails saying why', async () => {
    const adapter = await startAdapterProcess(['node', FLOOD, '--dap', '--bytes', String(40 * MiB)], {
      cwd: ws,
      name: 'flood',
      budget
    });
    const dap = new DapClient(adapter.reader, adapter.writer, 'flood', false);
    try {
      await dap.request('initialize', { adapterID: 'flood' } as never);
      await expect(dap.request('evaluate', { expression: 'x' } as never, { timeoutMs: 60_000 })).rejects.toThrow(
        /the flood debug adapter had sent .* past the companion's budget of 16 MiB \(CELLMATE_FRAME_BUDGET_MB\); it is no longer read\. Cellmate stopped the adapter and ended the session; debug launch starts a new one/
      );
      expect(await adapter.exited).toMatch(/SIGKILL/);
      expect(budget.usedBytes).toBe(0);
    } finally {
      adapter.kill();
    }
  }, 60_000);
});
