/**
 * The verify card end to end (INTEL-1): the scripted model calls `notebook_verify` on two
 * notebooks, the person approves it once on the default policy, the card shows one row per
 * notebook — the failing one open, its failing cell named — and clicking the cell row opens
 * the notebook at that cell. "Accept new outputs" on the changed notebook writes the run's
 * outputs into it. Real JupyterLab, Debian's Chromium, real ipykernels.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import {
  approveOnce,
  launchBrowser,
  openLab,
  pressSend,
  runCommand,
  screenshot,
  screenshotIfFailed
} from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';

const code = (id: string, source: string, outputs: unknown[] = []) => ({
  cell_type: 'code',
  id,
  metadata: {},
  source,
  outputs,
  execution_count: 1
});
const notebook = (cells: unknown[]) =>
  JSON.stringify({
    cells,
    metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
    nbformat: 4,
    nbformat_minor: 5
  });
const SCRIPT = {
  turns: [
    [
      { toolCalls: [{ toolName: 'notebook_verify', input: { notebooks: ['report.ipynb', 'totals.ipynb'] } }] },
      { text: 'report.ipynb fails in its third cell.' }
    ]
  ]
};

type NotebookApp = {
  shell: { currentWidget: { context?: { path: string }; content: { activeCellIndex: number } } | null };
};

describe('verify card (INTEL-1)', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    jupyter = await startJupyter({
      files: {
        'report.ipynb': notebook([
          code('load', 'rows = [3, 4, 5]'),
          code('mean', 'print(sum(rows) / len(rows))', [{ output_type: 'stream', name: 'stdout', text: '4.0\n' }]),
          code('bad', 'rows["total"]'),
          code('after', 'print("never reached")')
        ]),
        'totals.ipynb': notebook([
          code('t', 'print(sum([1, 2, 3]))', [{ output_type: 'stream', name: 'stdout', text: '5\n' }])
        ]),
        'scripts/verify.json': JSON.stringify(SCRIPT)
      },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/verify.json' },
      // The default policy: notebook_verify (exec) asks, and the person approves it once.
      env: { CELLMATE_POLICY: '/nonexistent/cellmate-policy.json' }
    });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await openLab(page, jupyter.labUrl);
  });

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
  });

  it('a failing notebook: its row is open with the failing cell; a click on the cell row opens the notebook at that cell', async () => {
    const before = await readFile(path.join(jupyter.workspace, 'report.ipynb'));
    await runCommand(page, 'cellmate:open-chat');
    await page.locator('.jp-cellmate-connection[data-state="connected"]').waitFor({ timeout: 30_000 });
    await page.locator('textarea.jp-cellmate-input').fill('do my notebooks still run?');
    await pressSend(page);
    await approveOnce(page, 'notebook_verify', 120_000);
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 180_000 });

    const card = page.locator('.jp-cellmate-item[data-kind="tool"]').last();
    const report = card.locator('details.jp-cellmate-verify-notebook[data-path="report.ipynb"]');
    await report.waitFor({ timeout: 15_000 });
    expect(await report.getAttribute('data-status')).toBe('error');
    expect(await report.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
    expect(
      await card.locator('details.jp-cellmate-verify-notebook[data-path="totals.ipynb"]').getAttribute('data-status')
    ).toBe('changed');
    const cells = report.locator('li.jp-cellmate-verify-cell');
    expect(await cells.evaluateAll((li) => li.map((l) => (l as HTMLElement).dataset.status))).toEqual([
      'ok',
      'ok',
      'error',
      'not-run'
    ]);
    const failing = report.locator('li.jp-cellmate-verify-cell[data-status="error"]');
    expect(await failing.innerText()).toContain('TypeError');
    await screenshot(page, 'verify-card-failing');

    await failing.locator('a.jp-cellmate-verify-link').click();
    await page.waitForFunction(
      () => {
        const w = (window as unknown as { jupyterapp: NotebookApp }).jupyterapp.shell.currentWidget;
        return w?.context?.path === 'report.ipynb' && w.content.activeCellIndex === 2;
      },
      undefined,
      { timeout: 30_000 }
    );
    await screenshot(page, 'verify-card-opened-cell');
    // The run wrote nothing into the notebook.
    expect(await readFile(path.join(jupyter.workspace, 'report.ipynb'))).toEqual(before);
  }, 300_000);

  it('"Accept new outputs" writes the run\'s outputs into the changed notebook', async () => {
    const card = page.locator('.jp-cellmate-item[data-kind="tool"]').last();
    const totals = card.locator('details.jp-cellmate-verify-notebook[data-path="totals.ipynb"]');
    await totals.locator('summary').click();
    await totals.locator('button.jp-cellmate-verify-accept').click();
    await totals.locator('.jp-cellmate-verify-state', { hasText: 'Wrote the outputs' }).waitFor({ timeout: 30_000 });
    const written = JSON.parse(await readFile(path.join(jupyter.workspace, 'totals.ipynb'), 'utf8'));
    expect(written.cells[0].outputs[0].text).toBe('6\n');
  }, 60_000);
});
