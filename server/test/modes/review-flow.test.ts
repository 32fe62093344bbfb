/**
 * "Review changes" (SPEC MODE-4, issue #16 item 3): the system starts a chat in Review — a
 * real git repository's diff (untracked files listed) as the first message, the mode set
 * by the flow (a person cannot pick it) — the scripted model records two findings and
 * finalizes, and the person's Approve is a peer approval that updates the review's cards.
 * Real chat service, store, review files and git; scripted model.
 */
import { PROTOCOL_VERSION, type ToolCallItem, type UserItem } from '@cellmate/protocol';
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/config/logger.js';
import { createReviewAxes } from '../../src/flows/review-axes.js';
import { ReviewFlow } from '../../src/flows/review-flow.js';
import { collectGitDiff, ReviewScopeError } from '../../src/modes/review/review-scope.js';
import { PolicyStore } from '../../src/policy/policy-store.js';
import { readTool } from '../../src/tools/read/read.js';
import { chmod, mkdir, readdir, rm } from 'node:fs/promises';
import { ReviewStore } from '../../src/modes/review/review-store.js';
import { createAddReviewNodeTool } from '../../src/tools/add_review_node/add_review_node.js';
import { createApproveReviewNodeTool } from '../../src/tools/approve_review_node/approve_review_node.js';
import { createFinalizeReviewTool } from '../../src/tools/finalize_review/finalize_review.js';
import { builtinTools } from '../../src/tools/index.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { checkParams } from '../../src/transport/params.js';
import { createRequestHandlers } from '../../src/transport/rpc-handlers.js';
import { createHarness, scriptSettings } from '../helpers/chat-harness.js';
import { tempDir } from '../helpers/temp.js';

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@e',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@e'
    }
  });

async function reviewSetup(ws: string) {
  const reviews = new ReviewStore(path.join(ws, '.cellmate', 'reviews'));
  let registry: ToolRegistry | undefined;
  registry = new ToolRegistry([
    ...builtinTools(),
    createAddReviewNodeTool(reviews),
    createApproveReviewNodeTool(reviews),
    createFinalizeReviewTool(reviews, createReviewAxes({ registry: () => registry!, env: {} }))
  ]);
  const h = await createHarness(ws, { registry, env: { CELLMATE_CONFIG: path.join(ws, 'none.json') } });
  const flow = new ReviewFlow({
    reviews,
    chats: h.service,
    registry: () => registry!,
    workspace: ws,
    env: process.env,
    logger: silentLogger
  });
  return { h, flow, reviews, registry };
}

const SCRIPT = {
  turns: [
    [
      {
        toolCalls: [
          {
            toolName: 'add_review_node',
            input: {
              kind: 'bug',
              priority: 'P1',
              confidence: 0.8,
              anchor: { file: 'calc.py', lines: [2, 2] },
              body: 'total() now drops the last row.'
            }
          },
          {
            toolName: 'add_review_node',
            input: {
              kind: 'suggestion',
              priority: 'P3',
              confidence: 0.5,
              anchor: { file: 'new.py' },
              body: 'Add a docstring.'
            }
          }
        ]
      },
      { toolCalls: [{ toolName: 'finalize_review', input: { summary: 'One bug, one nit.' } }] },
      { text: 'Reviewed: one bug, one nit.' }
    ]
  ]
};

describe("review/start and the person's approval (MODE-4)", () => {
  it('a git diff becomes a Review chat; the model records findings and finalizes; Approve by the person updates the cards', async () => {
    const ws = await tempDir();
    git(ws, 'init', '-q');
    await writeFile(path.join(ws, '.gitignore'), 'script.json\nnone.json\n');
    await writeFile(path.join(ws, 'calc.py'), 'def total(rows):\n    return sum(rows)\n');
    git(ws, 'add', '.');
    git(ws, 'commit', '-qm', 'base');
    await writeFile(path.join(ws, 'calc.py'), 'def total(rows):\n    return sum(rows[:-1])\n');
    await writeFile(path.join(ws, 'new.py'), 'X = 1\n');
    await mkdir(path.join(ws, 'nb', '.ipynb_checkpoints'), { recursive: true });
    await writeFile(path.join(ws, 'nb', '.ipynb_checkpoints', 'a-checkpoint.ipynb'), '{}');
    const model = await scriptSettings(ws, SCRIPT);
    const { h, flow, reviews } = await reviewSetup(ws);

    const { chatId } = await flow.start('git-diff', model);
    await h.service.waitForTurn(chatId);
    const chat = h.service.get(chatId);
    expect(chat).toMatchObject({ mode: 'review', title: 'Review: git diff (1 file, 1 untracked)' });
    const first = chat.items.find((i): i is UserItem => i.kind === 'user')!;
    expect(first.text).toContain('Changed files: calc.py');
    expect(first.text).toContain('-    return sum(rows)\n+    return sum(rows[:-1])');
    expect(first.text).toContain('Untracked files (new, not in the diff; read them if they matter):\n- new.py');
    expect(first.text).not.toContain('script.json');
    expect(first.text).not.toContain('.cellmate');
    expect(first.text).not.toContain('checkpoint');
    const tools = chat.items.filter((i): i is ToolCallItem => i.kind === 'tool');
    expect(tools.map((t) => [t.name, t.status])).toEqual([
      ['add_review_node', 'ok'],
      ['add_review_node', 'ok'],
      ['finalize_review', 'ok']
    ]);
    const review = reviews.get(chatId)!;
    expect(review).toMatchObject({
      scope: { kind: 'git-diff' },
      files: ['calc.py', 'new.py'],
      final: { summary: 'One bug, one nit.' }
    });
    expect(tools[2]!.display).toMatchObject({
      kind: 'review',
      verdict: { verdict: 'Hold' },
      nodes: [
        { id: 'n1', state: 'open' },
        { id: 'n2', state: 'open' }
      ]
    });

    // The person approves n1 (a peer of the agent): every card of the review follows.
    const updates = h.events.length;
    const approved = await flow.approve(chatId, 'n1');
    expect(approved).toEqual({
      ok: true,
      message: 'Approved: finding n1 P1 bug (consensusReady, approved by user; by agent) calc.py:2 is consensusReady.'
    });
    const updated = h.events
      .slice(updates)
      .flatMap((e) => (e.event.type === 'item-updated' && e.event.item.kind === 'tool' ? [e.event.item] : []));
    expect(updated.map((i) => i.name).sort()).toEqual(['add_review_node', 'add_review_node', 'finalize_review']);
    for (const item of updated)
      expect(item.display).toMatchObject({
        kind: 'review',
        nodes: [
          { id: 'n1', state: 'consensusReady', approvedBy: 'user' },
          { id: 'n2', state: 'open' }
        ]
      });
    // Approving again changes nothing and updates nothing.
    const again = h.events.length;
    expect((await flow.approve(chatId, 'n1')).ok).toBe(true);
    expect(h.events.slice(again).filter((e) => e.event.type === 'item-updated')).toEqual([]);
    expect(await flow.approve(chatId, 'n7')).toEqual({
      ok: false,
      message: 'No finding "n7" in this review (findings: n1, n2).'
    });
    await h.dispose();
  }, 60_000);

  it('nothing to review is said plainly; an unusable model leaves no review chat behind', async () => {
    const plain = await tempDir();
    const { h, flow } = await reviewSetup(plain);
    const model = { provider: 'scripted' as const, model: 's', scriptPath: 'none.json' };
    await expect(flow.start('git-diff', model)).rejects.toThrow(ReviewScopeError);
    await expect(flow.start('git-diff', model)).rejects.toThrow(
      'Nothing to review: the workspace is not inside a git repository.'
    );
    git(plain, 'init', '-q');
    await expect(flow.start('git-diff', model)).rejects.toThrow(
      'Nothing to review: git diff is empty and there are no untracked files.'
    );
    await expect(flow.start({ notebook: 'notes.txt' }, model)).rejects.toThrow(
      'Cannot review notes.txt: only notebooks (.ipynb) or the git diff can be reviewed.'
    );
    await expect(flow.start({ notebook: 'gone.ipynb' }, model)).rejects.toThrow(
      'Cannot review gone.ipynb: no such notebook (save it first).'
    );
    await writeFile(path.join(plain, 'a.py'), 'x = 1\n');
    // No OpenAI key in the companion's environment: the chat the review created is deleted again.
    await expect(flow.start('git-diff', { provider: 'openai', model: 'gpt-4.1' })).rejects.toThrow(/key/i);
    expect(h.service.list()).toEqual([]);
    await h.dispose();
  });

  it('a notebook review carries the cells with their ids', async () => {
    const ws = await tempDir();
    const nb = {
      nbformat: 4,
      nbformat_minor: 5,
      metadata: { language_info: { name: 'python' } },
      cells: [
        { cell_type: 'markdown', id: 'md1', metadata: {}, source: '# Sales' },
        {
          cell_type: 'code',
          id: 'c2',
          metadata: {},
          source: ['df = load()\n', 'df.head()'],
          outputs: [],
          execution_count: null
        }
      ]
    };
    await writeFile(path.join(ws, 'sales.ipynb'), JSON.stringify(nb));
    const model = await scriptSettings(ws, { turns: [[{ text: 'Looks fine.' }]] });
    const { h, flow, reviews } = await reviewSetup(ws);
    const { chatId } = await flow.start({ notebook: 'sales.ipynb' }, model);
    await h.service.waitForTurn(chatId);
    const first = h.service.get(chatId).items.find((i): i is UserItem => i.kind === 'user')!;
    expect(first.text).toContain('Review the notebook sales.ipynb (2 cells, as saved).');
    expect(first.text).toContain('### cell 2 (code, id c2)\n```python\ndf = load()\ndf.head()\n```');
    expect(reviews.get(chatId)).toMatchObject({
      scope: { kind: 'notebook', path: 'sales.ipynb' },
      label: 'sales.ipynb',
      files: ['sales.ipynb']
    });
    await h.dispose();
  });

  it('over the wire: params are checked, nothing-to-review and a refused approval come back as InvalidRequest with the message', async () => {
    const ws = await tempDir();
    git(ws, 'init', '-q');
    const { h, flow } = await reviewSetup(ws);
    const model = { provider: 'scripted' as const, model: 's' };
    expect(() => checkParams('review/start', { scope: 'everything', model })).toThrow(
      'Invalid params for review/start: "scope" must be "git-diff" or {notebook: "<path>.ipynb"}.'
    );
    expect(checkParams('review/start', { scope: { notebook: 'a.ipynb' }, model })).toMatchObject({
      scope: { notebook: 'a.ipynb' }
    });
    expect(() => checkParams('review/approve', { chatId: 'c' })).toThrow(/"nodeId"/);
    const handlers = createRequestHandlers({ workspace: ws, chats: h.service, reviews: flow });
    const cancel = { isCancellationRequested: false, onCancellationRequested: () => ({ dispose() {} }) } as never;
    await handlers['cellmate/hello']({ protocolVersion: PROTOCOL_VERSION, interactive: true }, cancel);
    await expect(handlers['review/start']({ scope: 'git-diff', model }, cancel)).rejects.toMatchObject({
      code: -32600,
      message: 'Nothing to review: git diff is empty and there are no untracked files.'
    });
    const chat = h.service.create();
    await expect(handlers['review/approve']({ chatId: chat.id, nodeId: 'n1' }, cancel)).rejects.toMatchObject({
      code: -32600,
      message: 'No finding "n1": this chat has no review findings yet.'
    });
    await h.dispose();
  });

  it('files the policy does not let the agent read stay out of the diff (and the message says so)', async () => {
    const ws = await tempDir();
    git(ws, 'init', '-q');
    await writeFile(path.join(ws, 'a.py'), 'x = 1\n');
    await writeFile(path.join(ws, 'secrets.env'), 'TOKEN=old\n');
    git(ws, 'add', '.');
    git(ws, 'commit', '-qm', 'base');
    await writeFile(path.join(ws, 'a.py'), 'x = 2\n');
    await writeFile(path.join(ws, 'secrets.env'), 'TOKEN=hunter2-new\n');
    await mkdir(path.join(ws, '.cellmate'));
    await writeFile(
      path.join(ws, '.cellmate', 'policy.json'),
      JSON.stringify({ rules: [{ tool: 'read', pattern: 'secrets.env', action: 'deny' }] })
    );
    const registry = new ToolRegistry([readTool], {
      policy: new PolicyStore({ workspace: ws, env: { CELLMATE_POLICY: '/nonexistent/policy.json' } })
    });
    const scope = await collectGitDiff(ws, process.env, (f) => registry.isPathAllowed('read', f, ws));
    expect(scope.files).toEqual(['a.py']);
    expect(scope.label).toBe('git diff (1 file)');
    expect(scope.text).toContain('+x = 2');
    expect(scope.text).not.toContain('hunter2');
    expect(scope.text).not.toContain('secrets.env');
    expect(scope.text).toContain('(1 changed file is left out: the policy does not let the agent read it.)');
  });

  it("starting a review runs no command a repository's own config names (external diff, textconv, fsmonitor)", async () => {
    const ws = await tempDir();
    const marks = await tempDir();
    git(ws, 'init', '-q');
    await writeFile(path.join(ws, 'a.py'), 'x = 1\n');
    git(ws, 'add', '.');
    git(ws, 'commit', '-qm', 'base');
    const hook = path.join(marks, 'hook.sh');
    await writeFile(hook, `#!/bin/sh\ntouch "${marks}/ran-$1"\necho\n`);
    await chmod(hook, 0o755);
    // What a cloned repository could carry (plain `git diff` runs the first and the last here).
    git(ws, 'config', 'diff.external', `${hook} external`);
    git(ws, 'config', 'core.fsmonitor', `${hook} fsmonitor`);
    git(ws, 'config', 'diff.conv.textconv', `${hook} textconv`);
    await writeFile(path.join(ws, '.gitattributes'), '*.py diff=conv\n');
    await writeFile(path.join(ws, 'a.py'), 'x = 2\n');
    const scope = await collectGitDiff(ws, process.env);
    expect(scope.text).toContain('+x = 2');
    expect((await readdir(marks)).filter((f) => f.startsWith('ran-'))).toEqual([]);
  });

  it("starting a review runs no filter driver a repository's config names (clean; dotted names; an included config file; required)", async () => {
    const ws = await tempDir();
    const marks = await tempDir();
    git(ws, 'init', '-q');
    await writeFile(path.join(ws, 'a.py'), 'x = 1\n');
    await writeFile(path.join(ws, 'b.txt'), 'one\n');
    await writeFile(path.join(ws, 'c.md'), 'alpha\n');
    git(ws, 'add', '.');
    git(ws, 'commit', '-qm', 'base');
    const hook = path.join(marks, 'hook.sh');
    // A clean filter must pass the content through: it does, after leaving its mark.
    await writeFile(hook, `#!/bin/sh\ntouch "${marks}/ran-$1"\ncat\n`);
    await chmod(hook, 0o755);
    git(ws, 'config', 'filter.crypt.clean', `${hook} clean`);
    git(ws, 'config', 'filter.crypt.smudge', `${hook} smudge`);
    git(ws, 'config', 'filter.crypt.required', 'true');
    git(ws, 'config', 'filter.dotted.name.clean', `${hook} dotted`);
    git(ws, 'config', 'filter.long.process', `${hook} process`);
    // A driver in a file the repository's config includes (a cloned repository can ship one).
    await writeFile(path.join(ws, 'extra.gitconfig'), `[filter "inc"]\n\tclean = ${hook} included\n`);
    git(ws, 'config', 'include.path', '../extra.gitconfig');
    await writeFile(
      path.join(ws, '.gitattributes'),
      '*.py filter=crypt\n*.txt filter=dotted.name\n*.md filter=inc\n*.cfg filter=long\n'
    );
    await writeFile(path.join(ws, 'a.py'), 'x = 2\n');
    await writeFile(path.join(ws, 'b.txt'), 'two\n');
    await writeFile(path.join(ws, 'c.md'), 'beta\n');
    // The planted drivers do run under a plain `git diff` (the test would otherwise prove nothing).
    git(ws, 'diff', '--no-ext-diff', '--no-textconv');
    expect((await readdir(marks)).filter((f) => f.startsWith('ran-')).sort()).toEqual([
      'ran-clean',
      'ran-dotted',
      'ran-included'
    ]);
    await rm(path.join(marks, 'ran-clean'));
    await rm(path.join(marks, 'ran-dotted'));
    await rm(path.join(marks, 'ran-included'));
    const scope = await collectGitDiff(ws, process.env);
    expect(scope.text).toContain('+x = 2');
    expect(scope.text).toContain('+two');
    expect(scope.text).toContain('+beta');
    expect((await readdir(marks)).filter((f) => f.startsWith('ran-'))).toEqual([]);
  });
});
