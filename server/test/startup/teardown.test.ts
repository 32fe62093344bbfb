/**
 * The companion ends everything it started exactly once, in one order, whichever way it
 * stops: `dispose()` after a normal start, or a start that fails half-way (its socket
 * already listening). Spies count the disposals; real kernel and language-server
 * processes show that nothing is left running.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import { ChatService } from '../../src/chats/chat-service.js';
import { silentLogger } from '../../src/config/logger.js';
import { DebugSessionManager } from '../../src/dap/session-manager.js';
import { KernelManager } from '../../src/kernels/kernel-manager.js';
import { LspService } from '../../src/lsp/lsp-service.js';
import { WriteDiagnostics } from '../../src/lsp/write-diagnostics.js';
import { McpService } from '../../src/mcp/mcp-service.js';
import { OrchestrationFlow } from '../../src/flows/orchestration-flow.js';
import { OrchestrationStore } from '../../src/modes/orchestrate/orchestration-store.js';
import { PlanFlow } from '../../src/flows/plan-flow.js';
import { PlanStore } from '../../src/modes/plan/plan-store.js';
import { ReviewFlow } from '../../src/flows/review-flow.js';
import { ReviewStore } from '../../src/modes/review/review-store.js';
import { Presence } from '../../src/questions/presence.js';
import { startServer } from '../../src/server.js';
import { StagedEdits } from '../../src/structural/staged-edits.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { WorkerService } from '../../src/workers/worker-service.js';
import { tempDir } from '../helpers/temp.js';

/** What the companion starts, by the method that ends it. */
const ENDED: ReadonlyArray<readonly [name: string, proto: object, method: string]> = [
  ['language servers', LspService.prototype, 'dispose'],
  ['kernels', KernelManager.prototype, 'dispose'],
  ['debug sessions', DebugSessionManager.prototype, 'dispose'],
  ['workers', WorkerService.prototype, 'dispose'],
  ['chats', ChatService.prototype, 'dispose'],
  ['MCP servers', McpService.prototype, 'dispose'],
  ['plan flow', PlanFlow.prototype, 'dispose'],
  ['review flow', ReviewFlow.prototype, 'dispose'],
  ['orchestration flow', OrchestrationFlow.prototype, 'dispose'],
  ['plans', PlanStore.prototype, 'dispose'],
  ['reviews', ReviewStore.prototype, 'dispose'],
  ['orchestrations', OrchestrationStore.prototype, 'dispose'],
  ['write diagnostics', WriteDiagnostics.prototype, 'dispose'],
  ['staged edits', StagedEdits.prototype, 'dispose'],
  ['registry', ToolRegistry.prototype, 'dispose'],
  ['presence', Presence.prototype, 'dispose'],
  ['audit log', AuditLog.prototype, 'flush']
];

function spyAll(): () => Record<string, number> {
  const spies = ENDED.map(
    ([name, proto, method]) => [name, vi.spyOn(proto as Record<string, () => unknown>, method)] as const
  );
  return () => Object.fromEntries(spies.map(([name, spy]) => [name, spy.mock.calls.length]));
}
/** The companion's own exit hook (it SIGKILLs the private kernels); the process-group module keeps one of its own for the whole process. */
const killHooks = (): number => process.listeners('exit').filter((l) => String(l).includes('killAllNow')).length;
const once = (): Record<string, number> => Object.fromEntries(ENDED.map(([name]) => [name, 1]));

/** Processes whose parent is this test process (the companion runs in it). */
function children(): Set<number> {
  const out = spawnSync('ps', ['-o', 'pid=', '--ppid', String(process.pid)], { encoding: 'utf8' }).stdout;
  return new Set(
    out
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((n) => n > 0)
  );
}
async function until(what: string, done: () => boolean, ms = 20_000): Promise<void> {
  for (const end = Date.now() + ms; !done();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('one teardown list for both ways the companion stops', () => {
  it('dispose() after a start ends each part once and leaves no kernel or language server running', async () => {
    const ws = await tempDir();
    await writeFile(path.join(ws, 'pyproject.toml'), '[project]\nname = "t"\n');
    await writeFile(path.join(ws, 'a.py'), 'count: int = 1\nprint(count)\n');
    await mkdir(path.join(ws, '.run'));
    const before = children();
    const counts = spyAll();
    const handle = await startServer({
      workspace: ws,
      socketPath: path.join(ws, '.run', 'c.sock'),
      logger: silentLogger,
      env: { ...process.env, CELLMATE_CONFIG: path.join(ws, 'none.json'), HOME: ws }
    });
    // Start the real processes a person's first turn would: a private kernel and basedpyright.
    await handle.kernels!.acquire('chat-1', 'python');
    const hover = await handle.registry.call(
      'lsp',
      { action: 'hover', file: 'a.py', line: 2, symbol: 'count' },
      { workspace: ws, signal: new AbortController().signal, actor: 'user', chatId: 'chat-1' }
    );
    expect(hover.output).toContain('count');
    const started = [...children()].filter((pid) => !before.has(pid));
    expect(started.length).toBeGreaterThanOrEqual(2);
    expect(killHooks()).toBe(1);

    await Promise.all([handle.dispose(), handle.dispose()]); // twice at once: still once each
    await handle.dispose();
    expect(counts()).toEqual(once());
    expect(killHooks()).toBe(0);
    expect(existsSync(path.join(ws, '.run', 'c.sock'))).toBe(false);
    await until('the kernel and the language server to exit', () => started.every((pid) => !children().has(pid)));
  }, 120_000);

  it('a start that fails after its socket listens (mcp.sock cannot be made) ends the same parts once and frees the socket', async () => {
    const ws = await tempDir();
    const run = path.join(ws, '.run');
    await mkdir(path.join(run, 'mcp.sock', 'in-the-way'), { recursive: true }); // a folder where the MCP socket goes
    const counts = spyAll();
    await expect(
      startServer({
        workspace: ws,
        socketPath: path.join(run, 'c.sock'),
        logger: silentLogger,
        env: { CELLMATE_CONFIG: path.join(ws, 'none.json'), HOME: ws }
      })
    ).rejects.toThrow();
    expect(counts()).toEqual(once());
    expect(killHooks()).toBe(0);
    expect(existsSync(path.join(run, 'c.sock'))).toBe(false);
    await expect(
      new Promise((resolve, reject) =>
        net.connect(path.join(run, 'c.sock')).once('connect', resolve).once('error', reject)
      )
    ).rejects.toThrow(/ENOENT|ECONNREFUSED/);
  }, 60_000);
});
