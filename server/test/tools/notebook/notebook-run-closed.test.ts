/**
 * `notebook_run` on a closed notebook goes through eval's kernel path (issue #9): a cell's
 * `tool()` reaches the registry, the idle budget interrupts a silent cell, a dead kernel is
 * replaced on the next run, and the result says why the run stopped — idle timeout, dead
 * kernel and the user's Stop are three different messages. Real ipykernel from the venv.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KernelManager } from '../../../src/kernels/kernel-manager.js';
import { createKernelRunner } from '../../../src/tools/eval/kernel-runner.js';
import { createNotebookTools } from '../../../src/tools/notebook/notebook.js';
import { readTool } from '../../../src/tools/read/read.js';
import { ToolRegistry } from '../../../src/gate/registry.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const PYTHON = path.join(REPO, '.venv', 'bin', 'python');
const code = (id: string, source: string) => ({
  cell_type: 'code',
  id,
  metadata: {},
  source,
  outputs: [],
  execution_count: null
});
const NB = {
  cells: [
    code('bridge', 'print("via tool():", tool("read", {"path": "notes.md"}).count("alpha"))'),
    code('silent', 'import time\ntime.sleep(60)'),
    code('after', 'print("after")'),
    code('die', 'import os\nos._exit(1)'),
    code('state', 'print("fresh" if "time" not in dir() else "old")')
  ],
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  nbformat: 4,
  nbformat_minor: 5
};

describe.skipIf(!existsSync(PYTHON))('notebook_run on a closed notebook: eval’s kernel path (issue #9)', () => {
  let ws: string;
  let kernels: KernelManager;
  let registry: ToolRegistry;
  const run = (cellIds: string[], signal = new AbortController().signal) =>
    registry.call(
      'notebook_run',
      { path: 'nb.ipynb', cell_ids: cellIds },
      { workspace: ws, signal, actor: 'model', chatId: 'chat-1' }
    );

  beforeAll(async () => {
    ws = await realpath(await mkdtemp(path.join(os.tmpdir(), 'cellmate-nbrun-')));
    await writeFile(path.join(ws, 'notes.md'), 'alpha\nbeta\n');
    await writeFile(path.join(ws, 'nb.ipynb'), JSON.stringify(NB, null, 1));
    kernels = new KernelManager({
      workspace: ws,
      pythonArgv: [PYTHON, '-m', 'ipykernel_launcher', '-f', '{connection_file}']
    });
    registry = new ToolRegistry([readTool]);
    const runner = createKernelRunner({ kernels, registry: () => registry, idleTimeoutMs: 1500 });
    for (const t of createNotebookTools({ port: { find: async () => undefined }, runner }))
      registry.register(t as never);
  }, 60_000);
  afterAll(async () => {
    await kernels?.dispose();
    registry?.dispose();
    if (ws) await rm(ws, { recursive: true, force: true });
  });

  it("a cell's tool() call goes through the registry; outputs are written to the file", async () => {
    const r = await run(['bridge']);
    expect(r.ok).toBe(true);
    expect(r.output).toContain('via tool(): 1');
    const file = JSON.parse(await readFile(path.join(ws, 'nb.ipynb'), 'utf8'));
    expect(JSON.stringify(file.cells[0].outputs)).toContain('via tool(): 1');
  });

  it('a silent cell hits the idle budget: the result says so (not "the user stopped"), later cells do not run', async () => {
    const r = await run(['silent', 'after']);
    expect(r.output).toContain('the idle budget');
    expect(r.output).not.toContain('the user stopped');
    expect(r.output).not.toContain('[id=after]');
    expect(r.title).toContain('idle-timeout');
  }, 30_000);

  it("the user's Stop says the user stopped", async () => {
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 500);
    const r = await run(['silent'], stop.signal);
    expect(r.output).toContain('the user stopped the turn');
    expect(r.output).not.toContain('idle budget');
  }, 30_000);

  it('a dead kernel is reported as dead, and the next run starts a fresh kernel and says so', async () => {
    const dead = await run(['die', 'after']);
    expect(dead.output).toContain('The kernel died');
    expect(dead.output).not.toContain('the user stopped');
    expect(dead.output).not.toContain('[id=after]');
    const next = await run(['state']);
    expect(next.output).toContain('fresh');
    expect(next.output).toMatch(/Note: The previous python kernel of this chat died/);
  }, 60_000);
});
