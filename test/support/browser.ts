/**
 * Debian's Chromium driven by playwright-core (a test tool's own browser download
 * cannot work here). Screenshots go to test/artifacts/ and are kept.
 */
import { chromium, type Browser, type Page } from 'playwright-core';
import fs from 'node:fs/promises';
import path from 'node:path';
import { artifactsDir } from './paths';

const CHROMIUM = process.env.CELLMATE_CHROMIUM ?? '/usr/bin/chromium';

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic'
    ]
  });
}

/** Saves a full-page PNG under test/artifacts/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await fs.mkdir(artifactsDir, { recursive: true });
  const file = path.join(artifactsDir, `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

/** Opens JupyterLab and waits until the application has started. */
export async function openLab(page: Page, labUrl: string): Promise<void> {
  await page.goto(labUrl);
  await page.waitForFunction(
    () => {
      const app = (window as unknown as { jupyterapp?: { started?: unknown; commands?: unknown } }).jupyterapp;
      return !!app && !!app.commands;
    },
    undefined,
    { timeout: 60_000 }
  );
  await page.evaluate(async () => {
    const app = (window as unknown as { jupyterapp: { started: Promise<void>; restored: Promise<void> } }).jupyterapp;
    await app.started;
    await app.restored;
  });
}

/** Runs a JupyterLab command in the page. */
export async function runCommand(page: Page, id: string, args: Record<string, unknown> = {}): Promise<unknown> {
  return page.evaluate(
    async ([cmd, a]) => {
      const app = (window as unknown as {
        jupyterapp: { commands: { execute(id: string, args: unknown): Promise<unknown> } };
      }).jupyterapp;
      const r = await app.commands.execute(cmd as string, a);
      // Results are often widgets: return nothing that cannot cross the boundary.
      return typeof r === 'object' ? null : r;
    },
    [id, args] as const
  );
}

/**
 * For `afterEach`: keeps a screenshot of what the page showed when the test just failed
 * (test/artifacts/failed-<test name>.png).
 */
export async function screenshotIfFailed(
  ctx: { task: { name: string; result?: { state?: string } } },
  page: Page | undefined
): Promise<void> {
  if (ctx.task.result?.state === 'fail' && page && !page.isClosed()) {
    await screenshot(page, `failed-${ctx.task.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`);
  }
}

/**
 * Presses Enter in the pane's composer (the text already typed) and waits until the turn
 * has started — or already ended: a fast scripted turn can set and clear `data-running`
 * between two polls, so waiting for `data-running="true"` alone can miss it. The panel's
 * `data-last-turn` (the id of the last turn that ended) tells the two apart.
 */
export async function pressSend(page: Page, timeoutMs = 30_000): Promise<void> {
  // Until the settings and providers are known the pane cannot send (its Send button is
  // disabled and Enter keeps the text): wait for that, as a person would.
  await page.locator('button.jp-cellmate-send:not([disabled])').waitFor({ timeout: timeoutMs });
  const before = (await page.locator('#jp-cellmate-panel').getAttribute('data-last-turn')) ?? '';
  await page.locator('textarea.jp-cellmate-input').press('Enter');
  await page.waitForFunction(
    (prev) => {
      const el = document.querySelector<HTMLElement>('#jp-cellmate-panel');
      return !!el && (el.dataset.running === 'true' || (el.dataset.lastTurn ?? '') !== prev);
    },
    before,
    { timeout: timeoutMs }
  );
}

/** Sends `text` from the pane's composer and waits until that turn has ended (see {@link pressSend}). */
export async function sendAndWaitForTurn(page: Page, text: string, timeoutMs = 60_000): Promise<void> {
  await page.locator('textarea.jp-cellmate-input').fill(text);
  await pressSend(page);
  await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: timeoutMs });
}

/**
 * Waits for the pending approval card of `tool` and clicks "Approve once", as a person does
 * on the default policy; resolves once one more card of that tool says it was answered.
 */
export async function approveOnce(page: Page, tool: string, timeoutMs = 60_000): Promise<void> {
  const cards = `.jp-cellmate-question[data-type="approval"][data-tool="${tool}"]`;
  const pending = page.locator(`${cards}[data-state="pending"]`).first();
  await pending.waitFor({ timeout: timeoutMs });
  const answered = await page.locator(`${cards}[data-state="answered"]`).count();
  await pending.locator('.jp-cellmate-approve-once').click();
  await page.waitForFunction(
    ([selector, before]) => document.querySelectorAll(`${selector}[data-state="answered"]`).length > before,
    [cards, answered] as const,
    { timeout: timeoutMs }
  );
}
