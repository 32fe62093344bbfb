/**
 * kernel_state (SPEC: persistent interpreter state): a real ipykernel whose history is made
 * the way a person makes it — cells run, one edited after it ran, two run out of order, a
 * cell deleted after it defined `tmp` — against the notebook as it is now.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LaunchedKernel } from '@cellmate/kernel-bridge';
import { analyseKernelState, type KernelFacts, type StateCell } from '../../src/context/kernel-state.js';
import { KernelManager } from '../../src/kernels/kernel-manager.js';
import { createKernelStateTool } from '../../src/tools/kernel_state/kernel_state.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { tempDir } from '../helpers/temp.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const PYTHON = path.join(REPO, '.venv', 'bin', 'python');

describe('kernel_state: the pure comparison', () => {
  const facts = (f: Partial<KernelFacts>): KernelFacts => ({ history: {}, count: 1, names: [], cells: [], ...f });
  it('a kernel that ran exactly the notebook, in order, has nothing to report', () => {
    const cells: StateCell[] = [
      { index: 0, id: 'a', source: 'x = 1', executionCount: 1 },
      { index: 1, id: 'b', source: 'y = x', executionCount: 2 }
    ];
    const r = analyseKernelState(
      cells,
      facts({
        history: { 1: 'x = 1', 2: 'y = x' },
        names: ['x', 'y'],
        cells: [
          { assigned: ['x'], used: [] },
          { assigned: ['y'], used: ['x'] }
        ]
      })
    );
    expect(r.findings).toEqual([]);
  });
  it('a count the kernel never ran (it restarted) is reported', () => {
    const r = analyseKernelState(
      [{ index: 0, id: 'a', source: 'x = 1', executionCount: 9 }],
      facts({ cells: [{ assigned: ['x'], used: [] }] })
    );
    expect(r.findings.map((f) => f.kind)).toEqual(['not-run-in-kernel']);
  });
});

describe.skipIf(!existsSync(PYTHON))('kernel_state on a real ipykernel', () => {
  let manager: KernelManager;
  let kernel: LaunchedKernel;
  let ws: string;
  const counts: Record<string, number> = {};
  const run = async (name: string, code: string): Promise<void> => {
    const r = await kernel.client.execute(code, { storeHistory: true });
    counts[name] = r.reply.content.execution_count as number;
  };

  beforeAll(async () => {
    manager = new KernelManager({
      workspace: REPO,
      pythonArgv: [PYTHON, '-m', 'ipykernel_launcher', '-f', '{connection_file}']
    });
    kernel = await manager.launchFresh('python', REPO);
    // What the person did: ran 1–3, a scratch cell defining tmp (deleted since), 5 before 4, then edited 3.
    await run('c1', 'import math');
    await run('c2', 'base = 10');
    await run('c3', 'scale = base * 2');
    await run('scratch', 'tmp = [1, 2, 3]');
    await run('c5', 'total = sum(tmp) + scale');
    await run('c4', 'ratio = scale / base');
    await run('c6', 'report = f"{total}"');
  }, 60_000);
  afterAll(async () => {
    await manager?.dispose();
  });

  it('names the cell edited after it ran, the cell run before the one above it, the name a deleted cell left, and the cells depending on them', async () => {
    ws = await tempDir();
    const cell = (id: string, source: string, count: number) => ({
      cell_type: 'code',
      id,
      metadata: {},
      source,
      outputs: [],
      execution_count: count
    });
    await writeFile(
      path.join(ws, 'analysis.ipynb'),
      JSON.stringify({
        cells: [
          cell('c1', 'import math', counts.c1!),
          cell('c2', 'base = 10', counts.c2!),
          cell('c3', 'scale = base * 3  # edited after it ran', counts.c3!),
          cell('c4', 'ratio = scale / base', counts.c4!),
          cell('c5', 'total = sum(tmp) + scale', counts.c5!),
          cell('c6', 'report = f"{total}"', counts.c6!)
        ],
        metadata: { kernelspec: { name: 'python3', language: 'python' } },
        nbformat: 4,
        nbformat_minor: 5
      })
    );
    const registry = new ToolRegistry([]);
    registry.register(
      createKernelStateTool({
        kernels: {
          focused: async () => ({ client: kernel.client, notebookPath: 'analysis.ipynb', language: 'python' })
        }
      })
    );
    const r = await registry.call(
      'kernel_state',
      {},
      { workspace: ws, signal: new AbortController().signal, actor: 'model', chatId: 'c' }
    );
    if (!r.ok) throw new Error(r.output);
    const findings = r.metadata!.findings as Array<{ kind: string; cell: { id: string }; detail: string }>;
    const of = (id: string) => findings.filter((f) => f.cell.id === id).map((f) => f.kind);
    expect(of('c3')).toEqual(['edited-since-run']);
    expect(of('c5')).toContain('out-of-order');
    expect(of('c5')).toContain('uses-orphan-state');
    expect(findings.find((f) => f.kind === 'uses-orphan-state')!.detail).toContain(
      'uses tmp, which the kernel holds but no current cell defines'
    );
    expect(of('c4')).toContain('depends-on-stale');
    expect(of('c6')).toEqual(['depends-on-stale']);
    expect(of('c1')).toEqual([]);
    expect(of('c2')).toEqual([]);
    expect(r.metadata!.orphanNames).toEqual(['tmp']);
    expect(r.output).toContain('cell 3 [id=c3] edited-since-run');
    // Silent: the kernel's count did not move, nothing was added to its namespace.
    const after = await kernel.client.execute('sorted(k for k in globals() if not k.startswith("_"))', {
      storeHistory: true
    });
    expect(after.reply.content.execution_count).toBe(counts.c6! + 1);
  }, 60_000);

  it('refuses clearly when no notebook kernel is focused, or another notebook is named', async () => {
    ws = await tempDir();
    const registry = new ToolRegistry([]);
    registry.register(createKernelStateTool({ kernels: { focused: async () => undefined } }));
    const r = await registry.call(
      'kernel_state',
      {},
      { workspace: ws, signal: new AbortController().signal, actor: 'model', chatId: 'c' }
    );
    expect(r.ok).toBe(false);
    expect(r.output).toContain('no notebook with a running kernel is focused');
  });
});
