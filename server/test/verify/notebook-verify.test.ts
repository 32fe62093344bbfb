/**
 * notebook_verify with real ipykernels (INTEL-1, EVAL-6, HARN-3): a refactor across a `.py`
 * module and the notebooks importing it, the write result naming those notebooks, the
 * notebooks re-run in fresh kernels; changed outputs after normalisation (figures by
 * perceptual hash); notebooks never written; no kernel left, also after an abort.
 */
import { existsSync } from 'node:fs';
import { readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decode, encode } from 'fast-png';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LaunchedKernel } from '@cellmate/kernel-bridge';
import { KernelManager } from '../../src/kernels/kernel-manager.js';
import { CodeGraphs } from '../../src/structural/graph/code-graph.js';
import { StagedEdits } from '../../src/structural/staged-edits.js';
import { createStructuralEditTools } from '../../src/tools/ast_edit/ast_edit.js';
import { createNotebookAcceptOutputsTool } from '../../src/tools/notebook_accept_outputs/notebook_accept_outputs.js';
import { createNotebookVerifyTool } from '../../src/tools/notebook_verify/notebook_verify.js';
import { ToolRegistry, type ToolCallResult } from '../../src/gate/registry.js';
import { TouchedNotebooksHook } from '../../src/verify/touched-notebooks.js';
import type { NotebookVerdict } from '../../src/verify/verdicts.js';
import { fixtureRepo } from '../structural/fixture.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const PYTHON = path.join(REPO, '.venv', 'bin', 'python');

type Out = Record<string, unknown>;
const stream = (text: string): Out => ({ name: 'stdout', output_type: 'stream', text: [text] });
const result = (text: string, count: number): Out => ({
  data: { 'text/plain': [text] },
  execution_count: count,
  metadata: {},
  output_type: 'execute_result'
});
const png = (base64: string): Out => ({
  data: { 'image/png': base64, 'text/plain': ['<Figure size 640x480 with 1 Axes>'] },
  metadata: {},
  output_type: 'display_data'
});
const cell = (id: string, source: string, outputs: Out[] = [], count: number | null = 1): Out => ({
  cell_type: 'code',
  execution_count: count,
  id,
  metadata: {},
  outputs,
  source: source.split(/(?<=\n)/)
});
const nb = (cells: Out[]): string =>
  `${JSON.stringify({ cells, metadata: { kernelspec: { display_name: 'Python 3', language: 'python', name: 'python3' }, language_info: { name: 'python' } }, nbformat: 4, nbformat_minor: 5 }, null, 1)}\n`;

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe.skipIf(!existsSync(PYTHON))('notebook_verify: fresh kernels, normalised comparison (INTEL-1)', () => {
  let manager: KernelManager;
  const launched: LaunchedKernel[] = [];
  const kernels = {
    launchFresh: async (...a: Parameters<KernelManager['launchFresh']>) => {
      const k = await manager.launchFresh(...a);
      launched.push(k);
      return k;
    }
  };
  /** `idleTimeoutMs`: long by default, so a slow import on a loaded machine is not taken for a silent cell. */
  const registryFor = (idleTimeoutMs = 60_000): ToolRegistry => {
    const graphs = new CodeGraphs();
    const registry = new ToolRegistry(
      [...createStructuralEditTools(new StagedEdits()), createNotebookAcceptOutputsTool()],
      { writeHook: new TouchedNotebooksHook(graphs) }
    );
    registry.register(createNotebookVerifyTool({ kernels, idleTimeoutMs, parallel: 2 }));
    return registry;
  };
  const ctx = (workspace: string, signal = new AbortController().signal) => ({
    workspace,
    signal,
    actor: 'model' as const,
    chatId: 'chat-1'
  });
  const snapshot = async (ws: string, files: string[]) =>
    Object.fromEntries(await Promise.all(files.map(async (f) => [f, await readFile(path.join(ws, f))] as const)));
  /** The result of a call that must have succeeded (its output is the failure message otherwise). */
  const succeeded = (r: ToolCallResult): Extract<ToolCallResult, { ok: true }> => {
    if (!r.ok) throw new Error(`the call failed: ${r.output}`);
    return r;
  };
  const verdicts = (r: ToolCallResult): NotebookVerdict[] => succeeded(r).metadata!.notebooks as NotebookVerdict[];
  let figure: string;
  let otherFigure: string;

  beforeAll(async () => {
    manager = new KernelManager({
      workspace: REPO,
      pythonArgv: [PYTHON, '-m', 'ipykernel_launcher', '-f', '{connection_file}']
    });
    // The stored figures come from a kernel of their own, like an earlier run of the notebook.
    const k = await manager.launchFresh('python', REPO);
    const plot = async (ys: string): Promise<string> => {
      let data = '';
      await k.client.execute(`import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], ${ys})\nplt.show()`, {
        onIOPub: (m) => {
          const d = (m.content as { data?: Record<string, string> }).data;
          if (m.header.msg_type === 'display_data' && d?.['image/png']) data = d['image/png'];
        }
      });
      return data;
    };
    figure = await plot('[1, 4, 9]');
    otherFigure = await plot('[9, 4, 1]');
    await k.shutdown(1000);
  }, 120_000);

  afterAll(async () => {
    await manager?.dispose();
  });

  it('INTEL-1: rename in a module and its call sites → resolve names the importing notebooks → all ok; a broken call site → exactly that notebook errors, cell and exception named', async () => {
    const ws = await fixtureRepo({
      'geometry.py': 'def area(w, h):\n    return w * h\n',
      'shapes.ipynb': nb([cell('s1', 'from geometry import area'), cell('s2', 'print(area(2, 3))', [stream('6\n')])]),
      'reports/sizes.ipynb': nb([
        cell('r1', 'import sys\nsys.path.insert(0, "..")\nimport geometry'),
        cell('r2', 'geometry.area(4, 5)', [result('20', 2)], 2)
      ]),
      'unrelated.ipynb': nb([cell('u1', 'print(1 + 1)', [stream('2\n')])])
    });
    const registry = registryFor();
    const notebooks = ['reports/sizes.ipynb', 'shapes.ipynb', 'unrelated.ipynb'];
    const staged = await registry.call(
      'ast_edit',
      { pattern: 'area', rewrite: 'surface', language: 'python' },
      ctx(ws)
    );
    expect(staged.ok, staged.output).toBe(true);
    const editId = /edit_[0-9a-f]+_\d+/.exec(staged.output)![0];
    const resolved = await registry.call('resolve', { edit_id: editId, action: 'accept' }, ctx(ws));
    expect(resolved.ok, resolved.output).toBe(true);
    expect(await readFile(path.join(ws, 'geometry.py'), 'utf8')).toBe('def surface(w, h):\n    return w * h\n');
    // The result names the notebooks to verify — changed or importing the changed module — and the call.
    expect(resolved.output).toContain('Notebooks this change touched');
    expect(resolved.output).toContain('notebook_verify {"notebooks":["reports/sizes.ipynb","shapes.ipynb"]}');
    expect(resolved.output).not.toContain('unrelated.ipynb');

    const before = await snapshot(ws, notebooks);
    const ok = await registry.call('notebook_verify', { notebooks: ['reports/sizes.ipynb', 'shapes.ipynb'] }, ctx(ws));
    expect(ok.ok, ok.output).toBe(true);
    expect(verdicts(ok).map((n) => [n.path, n.status])).toEqual([
      ['reports/sizes.ipynb', 'ok'],
      ['shapes.ipynb', 'ok']
    ]);
    expect(ok.output).toContain('✓ shapes.ipynb: ok (2/2 code cells run');

    // A second edit breaks one call site.
    const broken = await registry.call(
      'ast_edit',
      { pattern: 'geometry.surface($A, $B)', rewrite: 'geometry.surface($A)', path: 'reports/sizes.ipynb' },
      ctx(ws)
    );
    const brokenId = /edit_[0-9a-f]+_\d+/.exec(broken.output)![0];
    const applied = await registry.call('resolve', { edit_id: brokenId, action: 'accept' }, ctx(ws));
    expect(applied.output).toContain('reports/sizes.ipynb (changed)');
    const after = await snapshot(ws, notebooks);
    const r = await registry.call('notebook_verify', { folder: '.' }, ctx(ws));
    const byPath = Object.fromEntries(verdicts(r).map((n) => [n.path, n]));
    expect(Object.keys(byPath).sort()).toEqual(notebooks);
    expect(byPath['shapes.ipynb']!.status).toBe('ok');
    expect(byPath['unrelated.ipynb']!.status).toBe('ok');
    expect(byPath['reports/sizes.ipynb']!.status).toBe('error');
    const failing = byPath['reports/sizes.ipynb']!.cells.find((c) => c.status === 'error')!;
    expect(failing).toMatchObject({ index: 1, id: 'r2', error: { ename: 'TypeError' } });
    expect(failing.error!.evalue).toContain("missing 1 required positional argument: 'h'");
    expect(r.output).toMatch(
      /✗ reports\/sizes\.ipynb: error[^\n]*\n {4}cell 2 \[id=r2\]: TypeError: surface\(\) missing 1 required positional argument: 'h'/
    );
    expect(succeeded(r).display).toMatchObject({
      kind: 'verify',
      notebooks: expect.arrayContaining([expect.objectContaining({ path: 'reports/sizes.ipynb', status: 'error' })])
    });
    // Nothing written: byte-identical notebooks; the kernels are gone.
    expect(await snapshot(ws, notebooks)).toEqual(after);
    expect(before['unrelated.ipynb']).toEqual(after['unrelated.ipynb']);
    expect(launched.length).toBeGreaterThanOrEqual(5);
    await new Promise((res) => setTimeout(res, 200));
    expect(launched.filter((k) => alive(k.pid!)).map((k) => k.pid)).toEqual([]);
  }, 180_000);

  it('changed only for real output changes: not execution counts, addresses or timestamps; an identically re-rendered figure is not changed, a different line is', async () => {
    const raw = decode(Buffer.from(figure, 'base64'));
    const reencoded = Buffer.from(
      encode({ width: raw.width, height: raw.height, data: raw.data, channels: raw.channels, depth: raw.depth })
    ).toString('base64');
    expect(reencoded).not.toBe(figure);
    const ws = await fixtureRepo({
      'old.ipynb': nb([
        cell('imp', 'import datetime\nimport matplotlib.pyplot as plt', [], 7),
        cell('addr', 'print(object())', [stream('<object object at 0x7f3a2b1c9d40>\n')], 8),
        cell(
          'time',
          'print("run at", datetime.datetime.now().isoformat())',
          [stream('run at 2021-03-04T05:06:07.123456\n')],
          9
        ),
        cell('same', 'x = 41\nx + 1', [result('42', 3)], 30),
        cell('older', 'x = 41\nprint(x + 2)', [stream('42\n')], 31),
        cell('fig', 'plt.plot([1, 2, 3], [1, 4, 9])\nplt.show()', [png(reencoded)], 32),
        cell('line', 'plt.plot([1, 2, 3], [1, 4, 9])\nplt.show()', [png(otherFigure)], 33)
      ])
    });
    const registry = registryFor();
    const before = await readFile(path.join(ws, 'old.ipynb'));
    const r = await registry.call('notebook_verify', { notebooks: ['old.ipynb'] }, ctx(ws));
    expect(r.ok, r.output).toBe(true);
    const [v] = verdicts(r);
    expect(v!.status).toBe('changed');
    expect(Object.fromEntries(v!.cells.map((c) => [c.id, c.status]))).toEqual({
      imp: 'ok',
      addr: 'ok',
      time: 'ok',
      same: 'ok',
      older: 'changed',
      fig: 'ok',
      line: 'changed'
    });
    expect(v!.cells.find((c) => c.id === 'older')!.difference).toContain('"42" → "43"');
    expect(v!.cells.find((c) => c.id === 'line')!.difference).toContain('image differs');
    expect(await readFile(path.join(ws, 'old.ipynb'))).toEqual(before);
    // The new outputs are kept beside the run, and go into the notebook only when accepted.
    expect(v!.outputsPath).toMatch(/^\.cellmate\/verify\/[0-9TZ]+-[0-9a-f]{6}\/old\.ipynb$/);
    const kept = JSON.parse(await readFile(path.join(ws, v!.outputsPath!), 'utf8'));
    expect(kept.cells[4].outputs[0].text).toBe('43\n');
    const accepted = await registry.call(
      'notebook_accept_outputs',
      { run_id: succeeded(r).metadata!.runId as string, path: 'old.ipynb' },
      { ...ctx(ws), actor: 'user' as const }
    );
    expect(accepted.ok, accepted.output).toBe(true);
    const written = JSON.parse(await readFile(path.join(ws, 'old.ipynb'), 'utf8'));
    expect(written.cells[4].outputs[0].text).toBe('43\n');
    expect(written.cells[4].source).toEqual(['x = 41\n', 'print(x + 2)']);
  }, 120_000);

  it('EVAL-6: a silent cell hits the idle budget; an abort ends the run at once and leaves no kernel', async () => {
    const ws = await fixtureRepo({
      'slow.ipynb': nb([
        cell('a', 'print("start")', [stream('start\n')]),
        cell('b', 'import time\ntime.sleep(60)'),
        cell('c', 'print("never")', [stream('never\n')])
      ]),
      'slow2.ipynb': nb([cell('a', 'import time\ntime.sleep(60)')])
    });
    const registry = registryFor(3_000);
    const start = launched.length;
    const idle = await registry.call('notebook_verify', { notebooks: ['slow.ipynb'] }, ctx(ws));
    const [v] = verdicts(idle);
    expect(v!.status).toBe('error');
    expect(v!.cells.map((c) => c.status)).toEqual(['ok', 'error', 'not-run']);
    expect(v!.cells[1]!.error!.ename).toBe('IdleTimeout');

    // Stopped once both kernels run their sleeping cells, as a person presses Stop mid-run.
    const stop = new AbortController();
    const both = setInterval(() => {
      if (launched.length < start + 3) return;
      clearInterval(both);
      setTimeout(() => {
        abortedAt = Date.now();
        stop.abort();
      }, 500);
    }, 50);
    let abortedAt = 0;
    const before = await snapshot(ws, ['slow.ipynb', 'slow2.ipynb']);
    const aborted = await registry.call(
      'notebook_verify',
      { notebooks: ['slow.ipynb', 'slow2.ipynb'] },
      ctx(ws, stop.signal)
    );
    clearInterval(both);
    expect(stop.signal.aborted).toBe(true);
    // The result comes back at once, not after the 60 s cells.
    expect(Date.now() - abortedAt).toBeLessThan(10_000);
    expect(aborted.output).toMatch(/stopped|aborted/);
    expect(await snapshot(ws, ['slow.ipynb', 'slow2.ipynb'])).toEqual(before);
    await new Promise((res) => setTimeout(res, 500));
    const mine = launched.slice(start);
    expect(mine.length).toBe(3);
    expect(mine.filter((k) => alive(k.pid!)).map((k) => k.pid)).toEqual([]);
  }, 120_000);

  it('bad input is refused with what to do: a path outside the workspace, a symlink out, a missing notebook, a file that is not a notebook, a kernelspec Cellmate does not start', async () => {
    const outsideDir = await fixtureRepo({ 'secret.ipynb': nb([cell('s', 'print("outside")')]) });
    const evil = JSON.stringify({
      cells: [cell('e', 'print("ran")')],
      metadata: { kernelspec: { name: 'evil', language: 'sh', argv: ['/bin/sh', '-c', 'touch pwned'] } },
      nbformat: 4,
      nbformat_minor: 5
    });
    const ws = await fixtureRepo({
      'broken.ipynb': '{"cells": 3}',
      'ok.ipynb': nb([cell('a', 'x = 1')]),
      'evil.ipynb': evil
    });
    await symlink(path.join(outsideDir, 'secret.ipynb'), path.join(ws, 'link.ipynb'));
    const registry = registryFor();
    const link = await registry.call('notebook_verify', { notebooks: ['link.ipynb'] }, ctx(ws));
    expect(link.ok).toBe(false);
    expect(link.output).toContain('outside the workspace');
    const spec = await registry.call('notebook_verify', { notebooks: ['evil.ipynb'] }, ctx(ws));
    expect(verdicts(spec)[0]).toMatchObject({
      status: 'could-not-run',
      reason: 'its kernel "evil" is not one Cellmate can start (python3 or cellmate-js)'
    });
    expect(existsSync(path.join(ws, 'pwned'))).toBe(false);
    const outside = await registry.call('notebook_verify', { notebooks: ['../elsewhere.ipynb'] }, ctx(ws));
    expect(outside.ok).toBe(false);
    expect(outside.output).toContain('outside the workspace');
    const missing = await registry.call('notebook_verify', { notebooks: ['nope.ipynb'] }, ctx(ws));
    expect(missing.output).toContain('nope.ipynb does not exist');
    const r = await registry.call('notebook_verify', { notebooks: ['broken.ipynb', 'ok.ipynb'] }, ctx(ws));
    expect(verdicts(r).map((n) => [n.path, n.status])).toEqual([
      ['broken.ipynb', 'could-not-run'],
      ['ok.ipynb', 'ok']
    ]);
    expect(r.output).toContain('not an nbformat 4 notebook');
  }, 60_000);
});
