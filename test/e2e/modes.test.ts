/**
 * Modes in the browser (issue #16, SPEC MODE-1/3/8), real JupyterLab + Chromium, scripted
 * model: the composer's mode selector (Agent, Plan, Orchestrate) and Shift+Tab, the header's mode; then
 * Plan end to end — the run ends without a plan and gets the one nudge, submits a plan and
 * asks for approval, the companion is killed while the approval is pending and the card is
 * still pending after the restart, Approve returns the chat to Agent and the steps run as
 * turns in dependency order.
 */
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { openPane, pressSend, screenshot, screenshotIfFailed } from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';

const SUBMIT = {
  goal: 'Clean the data, then chart it',
  nodes: [
    { key: 'chart', title: 'Chart revenue by region', description: 'One line per region.', depends_on: ['clean'] },
    { key: 'clean', title: 'Clean sales.csv', description: 'Drop rows without a region.', depends_on: [] }
  ]
};
// The scripted model's turn index counts user messages; the nudge is one (so turns 0–1 are the plan run).
const SCRIPT = {
  turns: [
    [{ text: 'I had a look around the workspace.' }],
    [
      {
        toolCalls: [
          { toolName: 'submit_plan', input: SUBMIT },
          { toolName: 'exit_plan_mode', input: {} }
        ]
      },
      { text: 'Waiting for your approval.' }
    ],
    [{ text: 'Step one: cleaned.' }],
    [{ text: 'Step two: charted.' }]
  ]
};

describe('modes (issue #16)', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;
  const log = path.join(os.tmpdir(), `cellmate-modes-e2e-${process.pid}.jsonl`);
  const badge = () => page.locator('.jp-cellmate-mode-badge');
  const select = () => page.locator('select.jp-cellmate-mode-select');

  beforeAll(async () => {
    rmSync(log, { force: true });
    jupyter = await startJupyter({
      files: { 'scripts/plan.json': JSON.stringify(SCRIPT), 'sales.csv': 'region,revenue\nnorth,3\n' },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/plan.json' },
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

  it('MODE-8: the composer offers Agent, Plan and Orchestrate, Shift+Tab cycles them, the header shows the mode', async () => {
    expect(await select().locator('option').allTextContents()).toEqual(['Agent', 'Plan', 'Orchestrate']);
    await expect.poll(() => badge().textContent()).toBe('Mode: Agent');
    const input = page.locator('textarea.jp-cellmate-input');
    await input.focus();
    await input.press('Shift+Tab');
    await page.locator('.jp-cellmate-mode-badge[data-mode="plan"]').waitFor();
    expect(await badge().textContent()).toBe('Mode: Plan');
    expect(await select().inputValue()).toBe('plan');
    // Shift+Tab changed the mode, it did not move the focus out of the composer.
    expect(await page.evaluate(() => document.activeElement?.classList.contains('jp-cellmate-input'))).toBe(true);
    await input.press('Shift+Tab');
    await page.locator('.jp-cellmate-mode-badge[data-mode="orchestrate"]').waitFor();
    expect(await badge().textContent()).toBe('Mode: Orchestrate');
    expect(await select().inputValue()).toBe('orchestrate');
    await input.press('Shift+Tab');
    await page.locator('.jp-cellmate-mode-badge[data-mode="agent"]').waitFor();
    await select().selectOption('plan');
    await page.locator('.jp-cellmate-mode-badge[data-mode="plan"]').waitFor();
    await screenshot(page, 'modes-plan-selected');
  });

  it('Plan end to end: nudge, submit, pending across a companion restart, approve → Agent and the steps run in order', async () => {
    await page.locator('textarea.jp-cellmate-input').fill('Chart revenue by region from sales.csv');
    await pressSend(page);
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 60_000 });
    await page
      .locator('.jp-cellmate-item[data-kind="notice"]', {
        hasText: 'Reminded the agent once that this mode expects submit_plan'
      })
      .waitFor();
    const pending = page.locator('.jp-cellmate-plan[data-approval="pending"]');
    await expect.poll(() => pending.count(), { timeout: 30_000 }).toBe(2); // the submit_plan and exit_plan_mode cards
    expect(await pending.last().locator('.jp-cellmate-plan-nodes li').allTextContents()).toEqual([
      'Clean sales.csv',
      'Chart revenue by region after clean'
    ]);
    // The plan turn ran in Plan mode: its model saw Plan's prompt block and no write tool.
    const prompts = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { turn: number; tools: string[]; prompt: Array<{ content: unknown }> });
    expect(prompts.length).toBeGreaterThan(0);
    for (const p of prompts) {
      expect(String(p.prompt[0]!.content)).toContain('## Mode: Plan');
      expect(p.tools).toContain('submit_plan');
      expect(p.tools).not.toContain('write');
    }
    await screenshot(page, 'modes-plan-pending');

    // Kill the companion while the approval is pending: after the restart it is still pending.
    const before = await jupyter.status();
    process.kill(before.pid!, 'SIGKILL');
    await jupyter.waitForStatus((s) => s.ready && s.pid !== before.pid && s.restarts >= before.restarts + 1);
    await page.locator('.jp-cellmate-connection[data-state="connected"]').waitFor({ timeout: 30_000 });
    await page.locator('.jp-cellmate-item[data-kind="notice"]', { hasText: /reconnected/i }).waitFor();
    await expect.poll(() => pending.count(), { timeout: 30_000 }).toBe(2);
    expect(await badge().getAttribute('data-mode')).toBe('plan');

    await pending.last().locator('button.jp-cellmate-plan-approve').click();
    await page.locator('.jp-cellmate-mode-badge[data-mode="agent"]').waitFor({ timeout: 30_000 });
    expect(await select().inputValue()).toBe('agent');
    await page
      .locator('.jp-cellmate-item[data-kind="assistant"]', { hasText: 'Step two: charted.' })
      .waitFor({ timeout: 60_000 });
    const users = await page.locator('.jp-cellmate-item[data-kind="user"]').allTextContents();
    const steps = users.filter((t) => t.includes('Plan step'));
    expect(steps.length).toBe(2);
    expect(steps[0]).toContain('Plan step 1/2 [clean]: Clean sales.csv');
    expect(steps[1]).toContain('Plan step 2/2 [chart]: Chart revenue by region');
    expect(await page.locator('.jp-cellmate-plan[data-approval="approved"]').count()).toBe(2);
    await screenshot(page, 'modes-plan-approved');
  });
});
