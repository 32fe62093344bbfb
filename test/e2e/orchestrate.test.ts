/**
 * Orchestrate in the browser (issue #16 items 4/6, SPEC MODE-5/8), real JupyterLab +
 * Chromium, scripted model: the person picks Orchestrate in the composer, a scripted
 * Orchestrate turn (read-only surface) proposes roles, a task tree, a synthesis and a
 * budget; the pane shows the orchestration card with Approve / Reject and nothing runs;
 * the companion is killed while it is pending and the card is still pending after the
 * restart; the person approves; the chat returns to Agent and the tasks run as turns in dependency
 * order, then the synthesis, each task's progress shown on the card.
 */
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { openPane, pressSend, screenshot, screenshotIfFailed } from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';

const PROPOSAL = {
  roles: [
    { name: 'analyst', tier: 'good', brief: 'Explores the data; reports findings as bullet points.' },
    { name: 'plotter', tier: 'fast', brief: 'Draws the charts it is asked for.' }
  ],
  // Out of order on purpose: the card and the run follow the dependencies.
  tasks: [
    {
      key: 'chart',
      title: 'Chart revenue by region',
      description: 'One line per region.',
      role: 'plotter',
      depends_on: ['clean']
    },
    {
      key: 'clean',
      title: 'Clean sales.csv',
      description: 'Drop rows without a region.',
      role: 'analyst',
      depends_on: ['load']
    },
    { key: 'load', title: 'Load sales.csv', description: 'Read it with pandas.', role: 'analyst', depends_on: [] }
  ],
  synthesis: 'Summarise the regional trend in two sentences.',
  budget: { max_workers: 2, max_minutes: 15, max_tool_calls: 40 }
};
const SCRIPT = {
  turns: [
    [
      { toolCalls: [{ toolName: 'propose_orchestration', input: PROPOSAL }] },
      { text: 'Proposed: waiting for your approval.' }
    ],
    [{ text: 'Task one: loaded.' }],
    [{ text: 'Task two: cleaned.' }],
    [{ text: 'Task three: charted.' }],
    [{ text: 'Synthesis: north leads.' }]
  ]
};

describe('Orchestrate mode (issue #16)', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;
  const log = path.join(os.tmpdir(), `cellmate-orchestrate-e2e-${process.pid}.jsonl`);
  const badge = () => page.locator('.jp-cellmate-mode-badge');
  const select = () => page.locator('select.jp-cellmate-mode-select');

  beforeAll(async () => {
    rmSync(log, { force: true });
    jupyter = await startJupyter({
      files: { 'scripts/orchestrate.json': JSON.stringify(SCRIPT), 'sales.csv': 'region,revenue\nnorth,3\n' },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/orchestrate.json' },
      env: { CELLMATE_SCRIPT_LOG: log, CELLMATE_POLICY: '/nonexistent/cellmate-policy.json' }
    });
    ({ browser, page } = await openPane(jupyter.labUrl));
  });

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
    rmSync(log, { force: true });
  });

  it('MODE-5: a scripted Orchestrate turn proposes, the card shows it and nothing runs, pending across a companion restart; Approve runs the tasks in dependency order, then the synthesis', async () => {
    expect(await select().locator('option').allTextContents()).toEqual(['Agent', 'Plan', 'Orchestrate']);
    await select().selectOption('orchestrate');
    await page.locator('.jp-cellmate-mode-badge[data-mode="orchestrate"]').waitFor();
    expect(await badge().textContent()).toBe('Mode: Orchestrate');

    await page.locator('textarea.jp-cellmate-input').fill('Chart revenue by region from sales.csv');
    await pressSend(page);
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 60_000 });
    const card = page.locator('.jp-cellmate-orchestration[data-approval="pending"]');
    await card.waitFor({ timeout: 30_000 });
    expect(
      await card
        .locator('.jp-cellmate-orchestration-roles li')
        .evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.role))
    ).toEqual(['analyst', 'plotter']);
    expect(
      await card.locator('.jp-cellmate-orchestration-roles li .jp-cellmate-orchestration-tier').allTextContents()
    ).toEqual(['good', 'fast']);
    const taskItems = card.locator('.jp-cellmate-orchestration-tasks li');
    expect(await taskItems.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.key))).toEqual([
      'load',
      'clean',
      'chart'
    ]);
    expect(await taskItems.allTextContents()).toEqual([
      'Load sales.csv · analyst',
      'Clean sales.csv · analyst after load',
      'Chart revenue by region · plotter after clean'
    ]);
    // The tree: each task indented one level deeper than what it waits for.
    expect(await taskItems.evaluateAll((els) => els.map((e) => (e as HTMLElement).style.marginLeft))).toEqual([
      '0px',
      '12px',
      '24px'
    ]);
    expect(await card.locator('.jp-cellmate-orchestration-synthesis').textContent()).toBe(PROPOSAL.synthesis);
    expect(await card.locator('.jp-cellmate-orchestration-budget').textContent()).toBe(
      'Budget: 2 workers at once, 15 min, 40 tool calls'
    );
    expect(await card.locator('.jp-cellmate-orchestration-state').textContent()).toBe(
      'Waiting for your approval. Nothing runs until you approve.'
    );
    // The proposing turn ran in Orchestrate: its model saw Orchestrate's prompt block, propose_orchestration and no write tool.
    const prompts = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { turn: number; tools: string[]; prompt: Array<{ content: unknown }> });
    expect(prompts.length).toBeGreaterThan(0);
    for (const p of prompts) {
      expect(String(p.prompt[0]!.content)).toContain('## Mode: Orchestrate');
      expect(p.tools).toContain('propose_orchestration');
      expect(p.tools).not.toContain('write');
    }
    // Nothing ran: still one user message, and the mode is still Orchestrate.
    expect(await page.locator('.jp-cellmate-item[data-kind="user"]').count()).toBe(1);
    expect(await badge().getAttribute('data-mode')).toBe('orchestrate');
    await screenshot(page, 'orchestrate-pending');

    // Kill the companion while the approval is pending: after the restart the card is still pending.
    const before = await jupyter.status();
    process.kill(before.pid!, 'SIGKILL');
    await jupyter.waitForStatus((s) => s.ready && s.pid !== before.pid && s.restarts >= before.restarts + 1);
    await page.locator('.jp-cellmate-connection[data-state="connected"]').waitFor({ timeout: 30_000 });
    await page.locator('.jp-cellmate-item[data-kind="notice"]', { hasText: /reconnected/i }).waitFor();
    await expect.poll(() => card.count(), { timeout: 30_000 }).toBe(1);
    expect(await badge().getAttribute('data-mode')).toBe('orchestrate');

    await card.locator('button.jp-cellmate-orchestration-approve').click();
    await page.locator('.jp-cellmate-mode-badge[data-mode="agent"]').waitFor({ timeout: 30_000 });
    expect(await select().inputValue()).toBe('agent');
    await page
      .locator('.jp-cellmate-item[data-kind="assistant"]', { hasText: 'Synthesis: north leads.' })
      .waitFor({ timeout: 60_000 });
    const done = page.locator('.jp-cellmate-orchestration[data-approval="approved"][data-run="done"]');
    await done.waitFor({ timeout: 30_000 });
    expect(
      await done
        .locator('.jp-cellmate-orchestration-tasks li')
        .evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.state))
    ).toEqual(['done', 'done', 'done']);
    expect(await done.locator('.jp-cellmate-orchestration-synthesis').getAttribute('data-state')).toBe('done');
    const users = (await page.locator('.jp-cellmate-item[data-kind="user"]').allTextContents()).slice(1);
    expect(users.map((t) => t.match(/Orchestration (task \d\/\d \[\w+\]|synthesis)/)?.[1])).toEqual([
      'task 1/3 [load]',
      'task 2/3 [clean]',
      'task 3/3 [chart]',
      'synthesis'
    ]);
    await page
      .locator('.jp-cellmate-item[data-kind="notice"]', {
        hasText: /Orchestration orch-\w+ finished: 3 tasks and the synthesis/
      })
      .waitFor();
    await screenshot(page, 'orchestrate-done');
  });
});
