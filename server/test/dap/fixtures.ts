/** Shared fixtures of the debug tests: a notebook, a kernel manager on the project venv, a registry with `debug`. */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KernelManager } from '../../src/kernels/kernel-manager.js';
import { DebugSessionManager, type DebugSessionManagerOptions } from '../../src/dap/session-manager.js';
import type { ToolContext } from '../../src/gate/define-tool.js';
import { createDebugTool, type DebugToolOptions } from '../../src/tools/debug/debug.js';
import { ToolRegistry, type ToolRegistryOptions } from '../../src/gate/registry.js';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const PYTHON = path.join(REPO, '.venv', 'bin', 'python');
export const HAVE_PYTHON = existsSync(PYTHON);

/** Cells: 0 defines `keep`; 1 has a loop (line 3 = `total += i`); 2 raises from a helper; 3 runs for a minute. */
export const CELLS = [
  'keep = 41\nitems = [3, 5, 7]',
  'total = 0\nfor i in range(len(items)):\n    total += items[i]\nresult = total',
  'def ratio(a, b):\n    scaled = a * 10\n    return scaled / b\n\nanswer = ratio(keep, 0)',
  'import time\nfor tick in range(600):\n    time.sleep(0.1)'
];

export function notebookJson(cells: readonly string[]): string {
  return JSON.stringify(
    {
      nbformat: 4,
      nbformat_minor: 5,
      metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
      cells: cells.map((source, i) => ({
        id: `cell${i}`,
        cell_type: 'code',
        metadata: {},
        execution_count: null,
        outputs: [],
        source
      }))
    },
    null,
    1
  );
}

export interface DebugRig {
  ws: string;
  kernels: KernelManager;
  sessions: DebugSessionManager;
  registry: ToolRegistry;
  call(args: Record<string, unknown>, chatId?: string): ReturnType<ToolRegistry['call']>;
  dispose(): Promise<void>;
}

/** A workspace with `nb.ipynb`, real private kernels and the debug tool. */
export async function debugRig(
  opts: DebugSessionManagerOptions &
    Partial<DebugToolOptions> & {
      /** The policy and the person answering its cards (default: no policy gate). */
      gate?: (workspace: string) => Pick<ToolRegistryOptions, 'policy' | 'approvals'>;
    } = {}
): Promise<DebugRig> {
  const ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'cellmate-debug-')));
  await writeFile(path.join(ws, 'nb.ipynb'), notebookJson(CELLS));
  const kernels = new KernelManager({
    workspace: ws,
    maxPrivateKernels: 8,
    pythonArgv: [PYTHON, '-m', 'ipykernel_launcher', '-f', '{connection_file}']
  });
  const sessions = new DebugSessionManager({
    stopWaitMs: opts.stopWaitMs ?? 60_000,
    ...(opts.ttlMs ? { ttlMs: opts.ttlMs } : {})
  });
  const { gate, ...toolOptions } = opts;
  const registry = new ToolRegistry([], gate?.(ws) ?? {});
  registry.register(createDebugTool({ sessions, kernels, ...toolOptions }));
  const ctx = (chatId: string): ToolContext => ({
    workspace: ws,
    signal: new AbortController().signal,
    actor: 'model',
    chatId
  });
  return {
    ws,
    kernels,
    sessions,
    registry,
    call: (args, chatId = 'chat-1') => registry.call('debug', args, ctx(chatId)),
    async dispose() {
      await sessions.dispose();
      await kernels.dispose();
      registry.dispose();
      await rm(ws, { recursive: true, force: true });
    }
  };
}

/** Runs code in the chat's private kernel (outside the debugger) and returns its stdout. */
export async function runInKernel(rig: DebugRig, code: string, chatId = 'chat-1'): Promise<string> {
  const { handle } = await rig.kernels.acquire(chatId, 'python');
  const r = await handle.session.client.execute(code);
  return r.iopub
    .flatMap((m) => (m.header.msg_type === 'stream' ? [(m.content as { text: string }).text] : []))
    .join('');
}

/** The processes whose command line mentions `needle` (checked for leaks, never killed here). */
export function processesWith(needle: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid=,stat=,args='], { encoding: 'utf8' });
  // Zombies (stat Z) are dead, only not reaped yet.
  return out.split('\n').filter((l) => l.includes(needle) && !l.includes('ps -eo') && !/^\s*\d+\s+Z/.test(l));
}

/** The processes still running `needle` once a SIGKILL had time to land (bounded; a kill is asynchronous). */
export async function leftOver(needle: string): Promise<string[]> {
  for (let i = 0; i < 50 && processesWith(needle).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
  return processesWith(needle);
}
