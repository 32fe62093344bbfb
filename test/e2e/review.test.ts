/**
 * Review mode in the browser (issue #16 item 3, SPEC MODE-4), real JupyterLab + Chromium,
 * a real git repository, real basedpyright, scripted model: "Review changes" (the pane's
 * button; the command is in the palette too) starts a new chat that the companion puts in
 * Review — the person's mode picker never offers it — with the workspace's git diff as its
 * first message; the scripted model records two findings and finalizes; the pane shows the
 * findings anchored to their files (a click opens the file) and the verdict with each
 * axis's outcome (lint and type-check from the language server, tests from the configured
 * command, all run by the companion); the person approves the P0 finding and the verdict
 * follows (Hold → Block). Model text is shown as text, never as HTML.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { openPane, screenshot, screenshotIfFailed } from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';

const HOSTILE = '<img src=x onerror="document.body.dataset.pwned=1"> is rendered as text';
const SCRIPT = {
  turns: [
    [
      {
        toolCalls: [
          {
            toolName: 'add_review_node',
            input: {
              kind: 'bug',
              priority: 'P0',
              confidence: 0.9,
              anchor: { file: 'calc.py', lines: [2, 2] },
              body: 'total() now drops the last row: rows[:-1] loses data.'
            }
          },
          {
            toolName: 'add_review_node',
            input: {
              kind: 'suggestion',
              priority: 'P3',
              confidence: 0.5,
              anchor: { file: 'helpers.py', lines: [1, 1] },
              body: HOSTILE
            }
          }
        ]
      },
      { toolCalls: [{ toolName: 'finalize_review', input: { summary: 'One data-loss bug, one nit.' } }] },
      { text: 'Reviewed: one P0 bug, one nit.' }
    ]
  ]
};

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'e2e',
      GIT_AUTHOR_EMAIL: 'e2e@example.org',
      GIT_COMMITTER_NAME: 'e2e',
      GIT_COMMITTER_EMAIL: 'e2e@example.org'
    }
  });

describe('review (issue #16, MODE-4)', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;
  const log = path.join(os.tmpdir(), `cellmate-review-e2e-${process.pid}.jsonl`);

  beforeAll(async () => {
    rmSync(log, { force: true });
    jupyter = await startJupyter({
      files: {
        'scripts/review.json': JSON.stringify(SCRIPT),
        '.gitignore': '.ipynb_checkpoints/\n.virtual_documents/\n',
        'pyproject.toml': '[project]\nname = "reviewed"\nversion = "0.0.0"\n',
        'calc.py': 'def total(rows: list[int]) -> int:\n    return sum(rows)\n'
      },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/review.json' },
      env: {
        CELLMATE_SCRIPT_LOG: log,
        CELLMATE_POLICY: '/nonexistent/cellmate-policy.json',
        CELLMATE_REVIEW_TEST_COMMAND: 'python3 -c "print(\'2 passed\')"'
      }
    });
    // The baseline commit, then the change under review: one edited file, one new one.
    git(jupyter.workspace, 'init', '-q');
    git(jupyter.workspace, 'add', '.');
    git(jupyter.workspace, 'commit', '-qm', 'baseline');
    writeFileSync(
      path.join(jupyter.workspace, 'calc.py'),
      'def total(rows: list[int]) -> int:\n    return sum(rows[:-1])\n'
    );
    writeFileSync(path.join(jupyter.workspace, 'helpers.py'), 'def double(x: int) -> int:\n    return 2 * x\n');
    ({ browser, page } = await openPane(jupyter.labUrl));
  }, 180_000);

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
    rmSync(log, { force: true });
  });

  it('Review changes: findings anchored to files, the verdict with its axes, the person approves a finding', async () => {
    // The command is in the palette; the pane's header has the button.
    expect(
      await page.evaluate(() =>
        (
          window as unknown as {
            jupyterapp: { commands: { hasCommand(id: string): boolean; label(id: string): string } };
          }
        ).jupyterapp.commands.label('cellmate:review-changes')
      )
    ).toBe('Review Changes with Cellmate');
    await page.locator('button.jp-cellmate-review-changes:not([disabled])').click();

    // A new chat, in Review, set by the companion; the person's picker still offers only Agent, Plan and Orchestrate (MODE-8).
    await page.locator('.jp-cellmate-mode-badge[data-mode="review"]').waitFor({ timeout: 30_000 });
    const picker = await page.locator('select.jp-cellmate-mode-select option:not([disabled])').allTextContents();
    expect(picker).toEqual(['Agent', 'Plan', 'Orchestrate']);
    // The title can reach the selector with chat/listChanged, a notification apart from the chat the pane opens.
    await expect
      .poll(() => page.locator('select.jp-cellmate-chat-select option:checked').textContent())
      .toBe('Review: git diff (1 file, 1 untracked)');
    const first = page.locator('.jp-cellmate-item[data-kind="user"]').first();
    await first.waitFor();
    expect(await first.textContent()).toContain('+    return sum(rows[:-1])');
    expect(await first.textContent()).toContain('- helpers.py');

    // The scripted model's two findings and the verdict card (the axes run on the companion: a real basedpyright).
    const verdictCard = page.locator('.jp-cellmate-review[data-verdict]');
    await verdictCard.waitFor({ timeout: 120_000 });
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 60_000 });
    expect(await verdictCard.getAttribute('data-verdict')).toBe('Hold');
    const nodes = verdictCard.locator('li.jp-cellmate-review-node');
    expect(await nodes.count()).toBe(2);
    expect(await nodes.nth(0).locator('.jp-cellmate-review-priority').textContent()).toBe('P0');
    expect(await nodes.nth(0).locator('.jp-cellmate-review-kind').textContent()).toBe('bug');
    expect(await nodes.nth(0).locator('.jp-cellmate-review-confidence').textContent()).toBe('90%');
    expect(await nodes.nth(0).locator('a.jp-cellmate-review-anchor').textContent()).toBe('calc.py:2');
    expect(await nodes.nth(0).getAttribute('data-state')).toBe('open');
    expect(await nodes.nth(1).locator('a.jp-cellmate-review-anchor').textContent()).toBe('helpers.py:1');
    // Sanitized: the hostile body is text; no element came out of it and nothing ran.
    expect(await nodes.nth(1).locator('.jp-cellmate-review-body').textContent()).toBe(HOSTILE);
    expect(await page.locator('.jp-cellmate-review img').count()).toBe(0);
    expect(await page.evaluate(() => document.body.dataset.pwned)).toBeUndefined();
    const axis = (name: string) => verdictCard.locator(`.jp-cellmate-review-axes li[data-axis="${name}"]`);
    expect(await axis('lint').getAttribute('data-status')).toBe('passed');
    expect(await axis('type-check').getAttribute('data-status')).toBe('passed');
    expect(await axis('tests').getAttribute('data-status')).toBe('passed');
    expect(await axis('tests').textContent()).toContain('exited 0');
    expect(await verdictCard.locator('.jp-cellmate-review-reasons').textContent()).toContain('P0 bug n1 (open) → Hold');
    await screenshot(page, 'review-findings-hold');

    // The Review turn ran with Review's surface: its prompt block, the review tools, no write or shell.
    const prompts = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { tools: string[]; prompt: Array<{ content: unknown }> });
    expect(prompts.length).toBeGreaterThan(0);
    for (const p of prompts) {
      expect(String(p.prompt[0]!.content)).toContain('## Mode: Review');
      // approve_review_node is one tool_search away (deferred to keep the prefix within budget, HARN-11).
      expect(p.tools).toEqual(expect.arrayContaining(['add_review_node', 'finalize_review']));
      expect(p.tools).not.toContain('write');
      expect(p.tools).not.toContain('shell');
    }

    // The anchor opens the file.
    await nodes.nth(0).locator('a.jp-cellmate-review-anchor').click();
    await page.locator('.jp-FileEditor').first().waitFor({ timeout: 30_000 });
    expect(
      await page.locator('.lm-TabBar-tab.jp-mod-current .lm-TabBar-tabLabel', { hasText: 'calc.py' }).count()
    ).toBeGreaterThan(0);

    // The person approves the P0: consensus ready, and the verdict follows (a confirmed P0 blocks).
    await nodes.nth(0).locator('button.jp-cellmate-review-approve').click();
    await page.locator('.jp-cellmate-review[data-verdict="Block"]').waitFor({ timeout: 30_000 });
    const approved = page.locator('.jp-cellmate-review[data-verdict] li.jp-cellmate-review-node[data-node-id="n1"]');
    expect(await approved.getAttribute('data-state')).toBe('consensusReady');
    expect(await approved.locator('.jp-cellmate-review-consensus').textContent()).toBe(
      'Consensus ready: approved by user (found by agent)'
    );
    expect(await approved.locator('button.jp-cellmate-review-approve').count()).toBe(0);
    // The finding's own card follows too.
    const ownCard = page.locator(
      '.jp-cellmate-review:not([data-verdict]) li.jp-cellmate-review-node[data-node-id="n1"]'
    );
    await expect.poll(() => ownCard.getAttribute('data-state'), { timeout: 10_000 }).toBe('consensusReady');
    await screenshot(page, 'review-approved-block');

    // Durable: the review file holds the approval.
    const stored = readdirReview(jupyter.workspace);
    expect(stored.nodes.map((n) => [n.id, n.state, n.approvedBy ?? null])).toEqual([
      ['n1', 'consensusReady', 'user'],
      ['n2', 'open', null]
    ]);
  }, 240_000);
});

function readdirReview(workspace: string): { nodes: Array<{ id: string; state: string; approvedBy?: string }> } {
  const dir = path.join(workspace, '.cellmate', 'reviews');
  const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  expect(files.length).toBe(1);
  return (
    JSON.parse(readFileSync(path.join(dir, files[0]!), 'utf8')) as {
      review: { nodes: Array<{ id: string; state: string; approvedBy?: string }> };
    }
  ).review;
}
