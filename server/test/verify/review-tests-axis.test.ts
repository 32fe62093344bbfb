/**
 * Review's tests axis without a test command (MODE-4): `notebook_verify` on the notebooks in
 * scope — the changed ones and those importing a changed module — judged as exec on its own
 * surface, so the default policy asks the person. Approved: an erroring notebook fails the
 * axis (Block). Denied: the axis could not run (Hold). Real ipykernels.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { KernelManager } from '../../src/kernels/kernel-manager.js';
import { profileOf } from '../../src/modes/profiles.js';
import { createReviewAxes } from '../../src/flows/review-axes.js';
import { ReviewStore } from '../../src/modes/review/review-store.js';
import type { ApprovalDecision, ApprovalRequest } from '../../src/ports/gate-ports.js';
import { CodeGraphs } from '../../src/structural/graph/code-graph.js';
import type { ToolContext } from '../../src/gate/define-tool.js';
import { createFinalizeReviewTool } from '../../src/tools/finalize_review/finalize_review.js';
import { createNotebookVerifyTool } from '../../src/tools/notebook_verify/notebook_verify.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { fixtureRepo } from '../structural/fixture.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const PYTHON = path.join(REPO, '.venv', 'bin', 'python');
const cell = (id: string, source: string) => ({
  cell_type: 'code',
  execution_count: null,
  id,
  metadata: {},
  outputs: [],
  source
});
const nb = (cells: unknown[]) =>
  JSON.stringify({
    cells,
    metadata: { kernelspec: { name: 'python3', language: 'python' } },
    nbformat: 4,
    nbformat_minor: 5
  });

describe.skipIf(!existsSync(PYTHON))("Review's tests axis verifies the notebooks in scope (MODE-4, INTEL-1)", () => {
  const manager = new KernelManager({
    workspace: REPO,
    pythonArgv: [PYTHON, '-m', 'ipykernel_launcher', '-f', '{connection_file}']
  });
  afterAll(() => manager.dispose());

  /** The review tools and notebook_verify behind the default policy; `answer` is the person's click on the card. */
  function setup(ws: string, answer: ApprovalDecision['decision']) {
    const asked: ApprovalRequest[] = [];
    const store = new ReviewStore(path.join(ws, '.cellmate', 'reviews'));
    let registry: ToolRegistry | undefined;
    registry = new ToolRegistry(
      [
        createFinalizeReviewTool(
          store,
          createReviewAxes({ registry: () => registry!, env: {}, graphs: new CodeGraphs() })
        ),
        createNotebookVerifyTool({ kernels: manager, idleTimeoutMs: 30_000 })
      ],
      {
        policy: { rules: async () => [], remember: () => undefined },
        approvals: {
          requestApproval: async (request) => {
            asked.push(request);
            return { decision: answer } as ApprovalDecision;
          },
          confirmContinue: async () => false
        }
      }
    );
    const ctx: ToolContext = {
      workspace: ws,
      signal: new AbortController().signal,
      actor: 'model',
      chatId: 'chat-r',
      turnId: 't1',
      profile: profileOf('review')
    };
    return { registry, store, asked, ctx };
  }

  it('the person approves the run: the notebook importing the changed module errors → tests failed → Block; the unrelated one is not run', async () => {
    const ws = await fixtureRepo({
      'stats.py': 'def mean(xs):\n    return sum(xs) / len(xs)\n',
      'uses.ipynb': nb([cell('u1', 'from stats import mean'), cell('u2', 'mean([])')]),
      'other.ipynb': nb([cell('o1', 'print(1)')])
    });
    const { registry, store, asked, ctx } = setup(ws, 'once');
    store.start('chat-r', { kind: 'git-diff' }, 'git diff (1 file)', ['stats.py']);
    const r = await registry.call('finalize_review', {}, ctx);
    expect(asked.map((a) => a.tool)).toEqual(['notebook_verify']);
    expect(r.output).toContain('- tests: failed — notebook_verify: uses.ipynb cell 2: ZeroDivisionError');
    expect(r.title).toBe('review: Block');
    expect(r.output).not.toContain('other.ipynb');
  }, 120_000);

  it('the person denies it: the axis could not run → at least Hold; nothing ran', async () => {
    const ws = await fixtureRepo({ 'fine.ipynb': nb([cell('f1', 'print(2)')]) });
    const { registry, store, asked, ctx } = setup(ws, 'deny');
    store.start('chat-r', { kind: 'notebook', path: 'fine.ipynb' }, 'fine.ipynb', ['fine.ipynb']);
    const r = await registry.call('finalize_review', {}, ctx);
    expect(asked.map((a) => a.tool)).toEqual(['notebook_verify']);
    expect(r.output).toMatch(/- tests: not-run — notebook_verify did not run: /);
    expect(r.title).toMatch(/review: (Hold|Block)/);
    expect(existsSync(path.join(ws, '.cellmate', 'verify'))).toBe(false);
  }, 60_000);
});
