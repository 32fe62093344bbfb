/**
 * An approval never waits unseen, in Debian's Chromium against a real JupyterLab with the
 * scripted model: the Debugger sidebar is showing in the right area (where the Cellmate pane
 * lives) when a `write` asks; the card is on screen within 1 s of arriving. Switching back to
 * the Debugger while it still waits puts a badge on the Cellmate tab, and the notification's
 * "Open" brings the card back; answering it clears the badge.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openPane, screenshot, screenshotIfFailed } from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';

const SCRIPT = {
  turns: [[{ toolCalls: [{ toolName: 'write', input: { path: 'seen.md', content: 'seen\n' } }] }, { text: 'Written.' }]]
};

describe('approvals never hide behind another sidebar panel', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    jupyter = await startJupyter({
      files: { 'scripts/reveal.json': JSON.stringify(SCRIPT) },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/reveal.json' },
      env: { CELLMATE_POLICY: '/nonexistent/cellmate-policy.json' }
    });
    ({ browser, page } = await openPane(jupyter.labUrl));
  });

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
  });

  const showDebugger = async (): Promise<void> => {
    await page.evaluate(() =>
      (
        window as unknown as { jupyterapp: { shell: { activateById(id: string): void } } }
      ).jupyterapp.shell.activateById('jp-debugger-sidebar')
    );
    await page.locator('#jp-debugger-sidebar').waitFor({ state: 'visible', timeout: 10_000 });
    await page.locator('#jp-cellmate-panel').waitFor({ state: 'hidden', timeout: 10_000 });
  };

  it('a card arriving while the Debugger sidebar shows is on screen within 1 s; badge and "Open" while it waits', async () => {
    await page.locator('textarea.jp-cellmate-input').fill('write it down');
    await showDebugger();
    // Record when the card enters the page (hidden or not) and when it is first visible.
    await page.evaluate(() => {
      const w = window as unknown as { cardAdded?: number; cardShown?: number };
      const check = (): void => {
        const card = document.querySelector<HTMLElement>(
          '.jp-cellmate-question[data-type="approval"][data-state="pending"]'
        );
        if (card && w.cardAdded === undefined) w.cardAdded = performance.now();
        if (card && w.cardShown === undefined && card.checkVisibility() && card.getBoundingClientRect().height > 0)
          w.cardShown = performance.now();
        if (w.cardShown === undefined) requestAnimationFrame(check);
      };
      requestAnimationFrame(check);
    });
    // Sent while the Debugger shows (the pane keeps its composer's text): the hidden Send button
    // is clicked through the DOM, as a queued message would be sent.
    await page.locator('button.jp-cellmate-send:not([disabled])').waitFor({ state: 'attached', timeout: 30_000 });
    await page.evaluate(() => document.querySelector<HTMLButtonElement>('button.jp-cellmate-send')!.click());
    await page.waitForFunction(() => (window as unknown as { cardShown?: number }).cardShown !== undefined, undefined, {
      timeout: 30_000
    });
    const { cardAdded, cardShown } = await page.evaluate(() => {
      const w = window as unknown as { cardAdded: number; cardShown: number };
      return { cardAdded: w.cardAdded, cardShown: w.cardShown };
    });
    expect(cardShown - cardAdded).toBeLessThan(1000);
    const card = page.locator('.jp-cellmate-question[data-type="approval"][data-tool="write"][data-state="pending"]');
    expect(await card.isVisible()).toBe(true);
    expect(await card.boundingBox()).not.toBeNull();
    await screenshot(page, 'approval-revealed-over-debugger');

    // The person goes back to the Debugger without answering: the Cellmate tab carries a badge.
    await showDebugger();
    const tab = page.locator('.lm-TabBar-tab[data-id="jp-cellmate-panel"]');
    await page
      .locator('.lm-TabBar-tab.jp-cellmate-mod-waiting[data-id="jp-cellmate-panel"]')
      .waitFor({ timeout: 30_000 });
    const toast = page.locator('.Toastify__toast', { hasText: 'Cellmate is waiting for you to approve write.' });
    // The first notification loads JupyterLab's toast code on demand: a round trip to the server.
    await toast.waitFor({ timeout: 30_000 });
    await screenshot(page, 'approval-badge-and-notification');
    await toast.getByRole('button', { name: 'Open' }).click();
    await card.waitFor({ state: 'visible', timeout: 30_000 });
    // The tab bar redraws a changed title on a later animation frame.
    await expect.poll(() => tab.getAttribute('class')).not.toContain('jp-cellmate-mod-waiting');

    await card.locator('.jp-cellmate-approve-once').click();
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 30_000 });
    await page
      .locator('.Toastify__toast', { hasText: 'Cellmate is waiting' })
      .waitFor({ state: 'detached', timeout: 10_000 });
    await showDebugger();
    expect(await tab.getAttribute('class')).not.toContain('jp-cellmate-mod-waiting');
  });
});
