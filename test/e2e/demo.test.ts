/**
 * The first run (issue #27 item 5): from a fresh settings file (none at all) in a folder
 * with no README, "Try the offline demo" opens a notebook, and the scripted demo makes a
 * table and a plot in its kernel and proposes a cell as a diff, which the person approves
 * once. No red card anywhere; a "Demo" badge in the header; the settings on disk and in
 * the settings API are unchanged afterwards, and "Leave" returns the pane to its setup
 * banner in one click. Screenshots light and dark at the pane's default width.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { approveOnce, openPane, screenshot, screenshotIfFailed, setTheme } from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';

type App = {
  shell: {
    currentWidget: {
      context?: { path: string };
      content?: { model?: { sharedModel: { cells: Array<{ getSource(): string }> } } };
    } | null;
  };
};

describe('the offline demo on a first run (issue #27 item 5)', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;
  let settingsFile: string;

  beforeAll(async () => {
    // No cellmateSettings: no settings file at all, as on a first install. No README.md either.
    jupyter = await startJupyter({
      files: { 'data/readme-less.txt': 'no README in this folder\n' },
      env: { CELLMATE_POLICY: '/nonexistent/cellmate-policy.json' }
    });
    settingsFile = path.join(
      path.dirname(jupyter.workspace),
      'settings',
      'jupyterlab-cellmate',
      'plugin.jupyterlab-settings'
    );
    ({ browser, page } = await openPane(jupyter.labUrl, { width: 1500, height: 950 }));
  });

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
  });

  const savedSettings = async (): Promise<{ raw: string; file: string | undefined }> => {
    const res = await fetch(`${jupyter.url}/lab/api/settings/jupyterlab-cellmate:plugin`, {
      headers: { Authorization: `token ${jupyter.token}` }
    });
    const body = (await res.json()) as { raw: string };
    return { raw: body.raw, file: await fs.readFile(settingsFile, 'utf8').catch(() => undefined) };
  };

  it('one click: a notebook, a table and a plot, a cell proposed as a diff, the Demo badge, no red card', async () => {
    const before = await savedSettings();
    expect(before.file).toBeUndefined();
    await page.locator('.jp-cellmate-setup').waitFor({ state: 'visible' });
    expect(await page.locator('.jp-cellmate-demo-badge').isVisible()).toBe(false);
    await page.locator('button.jp-cellmate-demo').click();

    // The badge says the pane is in the demo; the banner is gone though nothing was configured.
    await page.locator('.jp-cellmate-demo-badge').waitFor({ state: 'visible', timeout: 10_000 });
    await page.locator('.jp-cellmate-setup').waitFor({ state: 'hidden' });
    // A notebook was opened for it (there was none).
    const nbPath = await page
      .waitForFunction(
        () => (window as unknown as { jupyterapp: App }).jupyterapp.shell.currentWidget?.context?.path,
        undefined,
        { timeout: 60_000 }
      )
      .then((h) => h.jsonValue() as Promise<string>);
    expect(nbPath).toMatch(/\.ipynb$/);

    // A table (six columns, digits kept whole) and a plot, each from eval in the kernel.
    const evals = page.locator('.jp-cellmate-tool-card[data-tool-name="eval"]');
    await evals.nth(1).locator('xpath=self::*[@data-status="ok"]').waitFor({ timeout: 90_000 });
    expect(await evals.nth(0).getAttribute('data-status')).toBe('ok');
    const table = evals.nth(0).locator('table');
    expect(await table.locator('thead th').allTextContents()).toEqual(
      expect.arrayContaining(['city', 'units', 'price', 'returns', 'revenue', 'share'])
    );
    expect(await table.locator('tbody tr').count()).toBe(6);
    expect(await evals.nth(1).locator('img').count()).toBe(1);

    // The cell edit on the notebook, shown as a diff on the card the person approves once.
    const card = page.locator(
      '.jp-cellmate-question[data-type="approval"][data-tool="notebook_edit"][data-state="pending"]'
    );
    await card.waitFor({ timeout: 60_000 });
    expect((await card.locator('.jp-cellmate-diff-add').allTextContents()).join('')).toContain(
      'cellmate_demo.sort_values("revenue", ascending=False)'
    );
    await card.scrollIntoViewIfNeeded();
    await screenshot(page, 'demo-diff-light');
    await approveOnce(page, 'notebook_edit');
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 60_000 });
    const cells = await page.evaluate(() =>
      (window as unknown as { jupyterapp: App }).jupyterapp.shell.currentWidget!.content!.model!.sharedModel.cells.map(
        (c) => c.getSource()
      )
    );
    expect(cells.some((c) => c.includes('cellmate_demo.sort_values'))).toBe(true);

    // No red card: every tool call succeeded and no error notice was shown.
    expect(await page.locator('.jp-cellmate-tool-card:not([data-status="ok"])').count()).toBe(0);
    expect(await page.locator('.jp-cellmate-item[data-kind="notice"][data-level="error"]').count()).toBe(0);
    expect(await page.locator('.jp-cellmate-item[data-kind="assistant"]').last().textContent()).toContain(
      'Press Leave on the Demo badge'
    );

    // At the pane's default width (issue #27 item 6): wide enough for the header, the
    // table's values each on one line (no "265 49"), scrolling sideways in its card if need be.
    const paneWidth = (await page.locator('#jp-cellmate-panel').boundingBox())!.width;
    expect(paneWidth).toBeGreaterThanOrEqual(340);
    const rows = await table
      .locator('tbody td')
      .evaluateAll((tds) => tds.map((td) => td.getBoundingClientRect().height));
    const th = (await table.locator('tbody th').first().boundingBox())!.height;
    for (const h of rows) expect(h).toBeLessThanOrEqual(th + 1);
    expect(th).toBeLessThan(40);
    const mime = evals.nth(0).locator('.jp-cellmate-eval-mime').first();
    expect(await mime.evaluate((el) => getComputedStyle(el).overflowX)).toBe('auto');
    // The chat's title, cut short in the selector, is whole in its tooltip; buttons keep theirs.
    expect(await page.locator('.jp-cellmate-chat-select').getAttribute('title')).toBe('Show me what Cellmate can do');
    for (const b of await page.locator('.jp-cellmate-header-row button').all())
      expect(await b.getAttribute('title')).toBeTruthy();

    await table.scrollIntoViewIfNeeded();
    await screenshot(page, 'demo-light');
    await setTheme(page, 'JupyterLab Dark');
    await table.scrollIntoViewIfNeeded();
    await screenshot(page, 'demo-dark');
    await setTheme(page, 'JupyterLab Light');

    // Nothing was written to the person's settings.
    expect(await savedSettings()).toEqual(before);
  });

  it('"Leave" ends the demo in one click: the badge goes, the setup banner is back, settings unchanged', async () => {
    const before = await savedSettings();
    await page.locator('.jp-cellmate-leave-demo').click();
    await page.locator('.jp-cellmate-demo-badge').waitFor({ state: 'hidden' });
    await page.locator('.jp-cellmate-setup').waitFor({ state: 'visible' });
    expect(await savedSettings()).toEqual(before);
  });
});
