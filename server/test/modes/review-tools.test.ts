/**
 * Review mode's tools through the registry (SPEC MODE-4, MODE-2a; issue #16 item 3 and its
 * acceptance): bad arguments are rejected at the call boundary, consensus needs a peer (the
 * author approving its own finding is refused; a worker or the person approving it makes it
 * consensusReady), the review survives a new store on the same files (a companion restart),
 * and finalize_review's verdict table with its axes — run by the companion itself: a failed
 * axis → Block, an axis that could not run → at least Hold, Ship only when every axis
 * passed. Real registry, real review files, real commands and a real basedpyright.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { profileOf } from '../../src/modes/profiles.js';
import { createReviewAxes, REVIEW_AXIS_ENV } from '../../src/flows/review-axes.js';
import { ReviewStore } from '../../src/modes/review/review-store.js';
import { createAddReviewNodeTool } from '../../src/tools/add_review_node/add_review_node.js';
import { createApproveReviewNodeTool } from '../../src/tools/approve_review_node/approve_review_node.js';
import type { ToolContext, ToolDefinition } from '../../src/gate/define-tool.js';
import { createFinalizeReviewTool } from '../../src/tools/finalize_review/finalize_review.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { tempDir } from '../helpers/temp.js';
import { lspFixture, type LspFixture } from '../lsp/lsp-fixtures.js';

function reviewTools(store: ReviewStore, registry: () => ToolRegistry, env: NodeJS.ProcessEnv): ToolDefinition[] {
  return [
    createAddReviewNodeTool(store),
    createApproveReviewNodeTool(store),
    createFinalizeReviewTool(store, createReviewAxes({ registry, env }))
  ];
}

/** A registry of the review tools alone (no language server: lint and type-check cannot run). */
function bareRegistry(store: ReviewStore, env: NodeJS.ProcessEnv = {}): ToolRegistry {
  let registry: ToolRegistry | undefined;
  registry = new ToolRegistry(reviewTools(store, () => registry!, env));
  return registry;
}

const context = (workspace: string, over: Partial<ToolContext> = {}): ToolContext => ({
  workspace,
  signal: new AbortController().signal,
  actor: 'model',
  chatId: 'chat-1',
  turnId: 't1',
  profile: profileOf('review'),
  ...over
});
const finding = {
  kind: 'bug',
  priority: 'P1',
  confidence: 0.9,
  anchor: { file: 'src/a.py', lines: [3, 4] },
  body: 'Off by one: the last row is dropped.'
};

describe('review tools at the call boundary (MODE-4)', () => {
  it('a bad priority (and other bad arguments) is rejected by the registry with a clear message; nothing is recorded', async () => {
    const ws = await tempDir();
    const store = new ReviewStore(path.join(ws, 'reviews'));
    const registry = bareRegistry(store);
    const bad = await registry.call('add_review_node', { ...finding, priority: 'P5' }, context(ws));
    expect(bad).toMatchObject({ ok: false, title: 'add_review_node: invalid arguments' });
    expect(bad.output).toBe(
      'Invalid arguments for add_review_node: "priority" must be one of P0 (blocks shipping), P1, P2, P3 (nit) (got "P5"). Rewrite the arguments and call add_review_node again.'
    );
    const confidence = await registry.call('add_review_node', { ...finding, confidence: 2 }, context(ws));
    expect(confidence.output).toContain('"confidence" must be at most 1');
    const extra = await registry.call('add_review_node', { ...finding, severity: 'high' }, context(ws));
    expect(extra.output).toContain('unknown argument "severity"');
    const node = await registry.call('approve_review_node', { node_id: 'first' }, context(ws));
    expect(node.output).toContain('"node_id" must be a finding id such as "n2"');
    const notNotebook = await registry.call(
      'add_review_node',
      { ...finding, anchor: { file: 'src/a.py', cell: '#1' } },
      context(ws)
    );
    expect(notNotebook).toMatchObject({
      ok: false,
      output: 'anchor.cell is for notebooks: src/a.py is not an .ipynb file. Drop "cell" and give the file\'s lines.'
    });
    expect(store.get('chat-1')?.nodes ?? []).toEqual([]);
  });

  it('schema snapshots (what the model sees); every example call is valid', async () => {
    const ws = await tempDir();
    const registry = bareRegistry(new ReviewStore(path.join(ws, 'reviews')));
    for (const name of ['add_review_node', 'approve_review_node', 'finalize_review']) {
      const tool = registry.get(name)!;
      expect(tool.tier).toBe('read');
      for (const example of tool.examples) expect(tool.parameters.safeParse(example.args).success).toBe(true);
      const declared = {
        name,
        tier: tool.tier,
        parameters: registry.inputJsonSchema(name),
        description: registry.modelDescription(name)
      };
      await expect(`${JSON.stringify(declared, null, 2)}\n`).toMatchFileSnapshot(`../tools/__schemas__/${name}.json`);
    }
  });

  it('consensus needs a peer: the author approving its own finding is refused; a worker or the person makes it consensusReady', async () => {
    const ws = await tempDir();
    const store = new ReviewStore(path.join(ws, 'reviews'));
    const registry = bareRegistry(store);
    const added = await registry.call('add_review_node', finding, context(ws));
    expect(added).toMatchObject({ ok: true, title: 'finding n1: P1 bug' });
    expect(added.output).toContain('Recorded finding n1 P1 bug (open; by agent) src/a.py:3-4.');
    // The chat's own agent wrote n1: approving it itself is refused, with what to do instead.
    const own = await registry.call('approve_review_node', { node_id: 'n1' }, context(ws));
    expect(own).toMatchObject({ ok: false });
    expect(own.output).toBe(
      'Refused: agent wrote finding n1 and cannot approve it; another reviewer has to. A peer must approve it: another reviewer (a worker) or the user in the Cellmate pane. Do not retry.'
    );
    expect(store.get('chat-1')!.nodes[0]).toMatchObject({ state: 'open', author: 'agent' });
    // A worker's finding is its own: the worker cannot approve it either.
    const worker = { worker: { id: 'w-7', label: 'second reviewer' } };
    await registry.call(
      'add_review_node',
      { kind: 'question', priority: 'P3', confidence: 0.4, body: 'Why a list here?' },
      context(ws, worker)
    );
    expect((await registry.call('approve_review_node', { node_id: 'n2' }, context(ws, worker))).output).toMatch(
      /^Refused: w-7 wrote finding n2/
    );
    // Peers: the worker approves the agent's finding, the agent the worker's, the person (actor user) either.
    const peer = await registry.call('approve_review_node', { node_id: 'n1' }, context(ws, worker));
    expect(peer).toMatchObject({
      ok: true,
      output: 'Approved: finding n1 P1 bug (consensusReady, approved by w-7; by agent) src/a.py:3-4 is consensusReady.'
    });
    const byUser = await registry.call('approve_review_node', { node_id: 'n2' }, context(ws, { actor: 'user' }));
    expect(byUser.ok).toBe(true);
    expect(store.get('chat-1')!.nodes.map((n) => [n.id, n.state, n.approvedBy])).toEqual([
      ['n1', 'consensusReady', 'w-7'],
      ['n2', 'consensusReady', 'user']
    ]);
    const unknown = await registry.call('approve_review_node', { node_id: 'n9' }, context(ws, { actor: 'user' }));
    expect(unknown.output).toBe('No finding "n9" in this review (findings: n1, n2).');
  });

  it('a notebook anchor names the cell by id or #N and is recorded with its index and id', async () => {
    const ws = await tempDir();
    const nb = {
      nbformat: 4,
      nbformat_minor: 5,
      metadata: {},
      cells: [
        { cell_type: 'markdown', id: 'intro', metadata: {}, source: '# Title' },
        { cell_type: 'code', id: 'load-1', metadata: {}, source: 'df = load()\n', outputs: [], execution_count: null }
      ]
    };
    await writeFile(path.join(ws, 'analysis.ipynb'), JSON.stringify(nb));
    const store = new ReviewStore(path.join(ws, 'reviews'));
    const registry = bareRegistry(store);
    const byIndex = await registry.call(
      'add_review_node',
      { ...finding, anchor: { file: 'analysis.ipynb', cell: '#2', lines: [1, 1] } },
      context(ws)
    );
    expect(byIndex.ok).toBe(true);
    const byId = await registry.call(
      'add_review_node',
      { ...finding, anchor: { file: './analysis.ipynb', cell: 'intro' } },
      context(ws)
    );
    expect(byId.ok).toBe(true);
    expect(store.get('chat-1')!.nodes.map((n) => n.anchor)).toEqual([
      { file: 'analysis.ipynb', cell: { index: 1, id: 'load-1' }, lines: [1, 1] },
      { file: 'analysis.ipynb', cell: { index: 0, id: 'intro' } }
    ]);
    const missing = await registry.call(
      'add_review_node',
      { ...finding, anchor: { file: 'analysis.ipynb', cell: 'nope' } },
      context(ws)
    );
    expect(missing.output).toBe('No cell "nope" in analysis.ipynb (2 cells); use an id from notebook_read or "#N".');
    const outside = await registry.call(
      'add_review_node',
      { ...finding, anchor: { file: '../etc/passwd' } },
      context(ws)
    );
    expect(outside.ok).toBe(false);
  });

  it('the review survives a new store on the same files (a companion restart): findings, consensus, verdict', async () => {
    const ws = await tempDir();
    const dir = path.join(ws, '.cellmate', 'reviews');
    const first = new ReviewStore(dir);
    first.start('chat-1', { kind: 'git-diff' }, 'git diff (1 file)', ['src/a.py']);
    const registry = bareRegistry(first);
    await registry.call('add_review_node', { ...finding, priority: 'P0' }, context(ws));
    await registry.call('approve_review_node', { node_id: 'n1' }, context(ws, { actor: 'user' }));
    const final = await registry.call('finalize_review', { summary: 'One real bug.' }, context(ws));
    expect(final).toMatchObject({ ok: true, title: 'review: Block' });
    const onDisk = JSON.parse(await readFile(path.join(dir, 'chat-1.json'), 'utf8')) as { version: number };
    expect(onDisk.version).toBe(1);

    const second = new ReviewStore(dir);
    const reloaded = second.get('chat-1')!;
    expect(reloaded).toEqual(first.get('chat-1'));
    expect(reloaded).toMatchObject({
      label: 'git diff (1 file)',
      files: ['src/a.py'],
      nodes: [{ id: 'n1', state: 'consensusReady', approvedBy: 'user' }],
      final: { summary: 'One real bug.' }
    });
    // The reloaded store goes on where the first stopped: the next id, the author rule.
    const again = bareRegistry(second);
    expect((await again.call('add_review_node', finding, context(ws))).title).toBe('finding n2: P1 bug');
    expect((await again.call('approve_review_node', { node_id: 'n2' }, context(ws))).output).toMatch(
      /^Refused: agent wrote finding n2/
    );
    second.removeChat('chat-1');
    expect(new ReviewStore(dir).get('chat-1')).toBeUndefined();
  });
});

describe('finalize_review: the verdict table with its axes (MODE-4)', () => {
  it("axes that could not run force at least Hold, and the result says each axis's outcome and why", async () => {
    const ws = await tempDir();
    const store = new ReviewStore(path.join(ws, 'reviews'));
    store.start('chat-1', { kind: 'git-diff' }, 'git diff (1 file)', ['a.py']);
    await writeFile(path.join(ws, 'a.py'), 'x = 1\n');
    const registry = bareRegistry(store);
    const r = await registry.call('finalize_review', {}, context(ws));
    expect(r).toMatchObject({ ok: true, title: 'review: Hold' });
    expect(r.output).toContain('Verdict: Hold (review of git diff (1 file)).');
    expect(r.output).toContain(
      `- lint: not-run — no language-server tools in this companion and no ${REVIEW_AXIS_ENV.lint}`
    );
    expect(r.output).toContain('- type-check: not-run — no language-server tools in this companion');
    expect(r.output).toContain(
      `- tests: not-run — could not run: no test command is configured (set ${REVIEW_AXIS_ENV.tests} for the companion)`
    );
    expect(r.output).toContain('Why Hold: lint not-run');
    expect(r.ok && r.display).toMatchObject({
      kind: 'review',
      verdict: {
        verdict: 'Hold',
        axes: [
          { axis: 'lint', status: 'not-run' },
          { axis: 'type-check', status: 'not-run' },
          { axis: 'tests', status: 'not-run' }
        ]
      }
    });
  });

  it('a failed lint axis (a configured lint command) forces Block even without findings; a passing one leaves the rest to decide', async () => {
    const ws = await tempDir();
    await writeFile(path.join(ws, 'a.py'), 'x = 1\n');
    const store = new ReviewStore(path.join(ws, 'reviews'));
    store.start('chat-1', { kind: 'git-diff' }, 'git diff (1 file)', ['a.py']);
    // The command sees the changed files in CELLMATE_REVIEW_FILES.
    const failing = bareRegistry(store, {
      [REVIEW_AXIS_ENV.lint]: 'echo "lint: $CELLMATE_REVIEW_FILES: E501 line too long"; exit 3',
      [REVIEW_AXIS_ENV.tests]: 'true',
      PATH: process.env.PATH
    });
    const blocked = await failing.call('finalize_review', {}, context(ws));
    expect(blocked.title).toBe('review: Block');
    expect(blocked.output).toContain(
      '- lint: failed — `echo "lint: $CELLMATE_REVIEW_FILES: E501 line too long"; exit 3` exited 3: lint: a.py: E501 line too long'
    );
    expect(blocked.output).toContain('- tests: passed — `true` exited 0');
    const passing = bareRegistry(store, {
      [REVIEW_AXIS_ENV.lint]: 'exit 0',
      [REVIEW_AXIS_ENV.tests]: 'true',
      PATH: process.env.PATH
    });
    const held = await passing.call('finalize_review', {}, context(ws));
    // Lint and tests passed; type-check could not run here (no language server): still Hold, never Ship.
    expect(held.title).toBe('review: Hold');
    expect(held.output).toContain('Why Hold: type-check not-run');
    // A test command that fails blocks; one that cannot start could not run.
    const badTests = await bareRegistry(store, { [REVIEW_AXIS_ENV.tests]: 'exit 1', PATH: process.env.PATH }).call(
      'finalize_review',
      {},
      context(ws)
    );
    expect(badTests.title).toBe('review: Block');
    expect(badTests.output).toContain('- tests: failed — `exit 1` exited 1');
  });

  describe('with a real language server (basedpyright)', () => {
    let f: LspFixture;
    // The store exists before the fixture builds the tools (they close over it).
    const storeDir = path.join(os.tmpdir(), `cellmate-review-test-${process.pid}`);
    const store = new ReviewStore(path.join(storeDir, 'reviews'));
    let registry: ToolRegistry;
    const env = { ...process.env, [REVIEW_AXIS_ENV.tests]: 'true' };

    beforeAll(async () => {
      let late: ToolRegistry | undefined;
      f = await lspFixture([], { extraTools: () => reviewTools(store, () => late!, env) });
      late = registry = f.registry;
      await writeFile(path.join(f.workspace, 'pyproject.toml'), '[project]\nname = "fixture"\nversion = "0.0.0"\n');
      await mkdir(path.join(f.workspace, 'pkg'));
      await writeFile(
        path.join(f.workspace, 'pkg', 'clean.py'),
        'def total(rows: list[int]) -> int:\n    return sum(rows)\n'
      );
      await writeFile(
        path.join(f.workspace, 'pkg', 'broken.py'),
        'def total(rows: list[int]) -> int:\n    return "none"\n'
      );
    }, 120_000);
    afterAll(async () => {
      await f?.dispose();
      await rm(storeDir, { recursive: true, force: true });
    });

    it('Ship only when every axis passed (and no P0/P1); a confirmed P0 then blocks', async () => {
      store.start('chat-ship', { kind: 'git-diff' }, 'git diff (1 file)', ['pkg/clean.py']);
      const r = await registry.call(
        'finalize_review',
        { summary: 'Clean.' },
        context(f.workspace, { chatId: 'chat-ship' })
      );
      expect(r.output).toContain('- lint: passed — no errors or warnings from the language server in 1 changed file');
      expect(r.output).toContain('- type-check: passed — no type errors in 1 changed file');
      expect(r.output).toContain('- tests: passed — `true` exited 0');
      expect(r.title).toBe('review: Ship');
      // A P2 does not change it; a P0 a peer confirms blocks (the verdict follows consensus).
      await registry.call(
        'add_review_node',
        {
          kind: 'suggestion',
          priority: 'P2',
          confidence: 0.5,
          anchor: { file: 'pkg/clean.py', lines: [2, 2] },
          body: 'Name the sum.'
        },
        context(f.workspace, { chatId: 'chat-ship' })
      );
      await registry.call(
        'add_review_node',
        {
          kind: 'bug',
          priority: 'P0',
          confidence: 0.9,
          anchor: { file: 'pkg/clean.py', lines: [1, 2] },
          body: 'Wrong total.'
        },
        context(f.workspace, { chatId: 'chat-ship' })
      );
      await registry.call(
        'approve_review_node',
        { node_id: 'n2' },
        context(f.workspace, { chatId: 'chat-ship', actor: 'user' })
      );
      expect((await registry.call('finalize_review', {}, context(f.workspace, { chatId: 'chat-ship' }))).title).toBe(
        'review: Block'
      );
    }, 180_000);

    it('a type error in a changed file fails type-check (the project checker) and lint (the language server): Block', async () => {
      store.start('chat-broken', { kind: 'git-diff' }, 'git diff (1 file)', ['pkg/broken.py']);
      const r = await registry.call('finalize_review', {}, context(f.workspace, { chatId: 'chat-broken' }));
      expect(r.title).toBe('review: Block');
      expect(r.output).toMatch(/- type-check: failed — pkg\/broken\.py: 1 error \(basedpyright\)/);
      expect(r.output).toMatch(/- lint: failed — language-server errors\/warnings in pkg\/broken\.py \(1 error/);
      // A changed file no checker covers cannot make type-check green: not run → Hold at least.
      await writeFile(path.join(f.workspace, 'notes.md'), '# notes\n');
      store.start('chat-md', { kind: 'git-diff' }, 'git diff (1 file)', ['notes.md']);
      const md = await registry.call('finalize_review', {}, context(f.workspace, { chatId: 'chat-md' }));
      expect(md.title).toBe('review: Hold');
      expect(md.output).toContain(
        '- type-check: not-run — could not run: the project checker (basedpyright) covers none of the changed files'
      );
      expect(md.output).toContain('- lint: not-run — no language server serves the changed files (notes.md)');
    }, 180_000);
  });
});
