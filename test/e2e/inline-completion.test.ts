/**
 * Inline completions in a notebook cell (issue #27), in Debian's Chromium against a real
 * JupyterLab and a real ipykernel. The fast model is a stand-in OpenAI-compatible server
 * that echoes the context it received: its suggestion is built from the DataFrame columns
 * the request carried, so ghost text naming a real column proves the kernel's names reached
 * the model. It answers after a delay, as a model computing does, and records the requests
 * whose client went away before the answer (the abort reached it).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import {
  startProviderStandIn,
  type ProviderStandIn,
  type StandInRequest
} from '../../server/test/helpers/provider-stand-in';
import { openPane, runCommand, screenshot, screenshotIfFailed } from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';

const NOTEBOOK = JSON.stringify({
  cells: [
    {
      cell_type: 'code',
      id: 'load',
      metadata: {},
      outputs: [],
      execution_count: null,
      source:
        'import pandas as pd\ndf = pd.DataFrame({"city": ["Lyon", "Nantes"], "month": [1, 2], "sales": [265.0, 49.5], "returns": [3, 1]})'
    },
    { cell_type: 'code', id: 'work', metadata: {}, outputs: [], execution_count: null, source: '' }
  ],
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  nbformat: 4,
  nbformat_minor: 5
});

/** How long the stand-in model takes to answer. */
const MODEL_DELAY_MS = 1_500;

type App = { shell: { currentWidget: { sessionContext: { session?: { kernel?: { status: string } } } } | null } };

/** The user message an inline request carried (openai-compatible wire: system, then user). */
function promptOf(request: StandInRequest): string {
  const messages = request.body.messages as Array<{ role: string; content: unknown }>;
  return messages.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))).join('\n');
}

/** The stand-in model: a groupby over the first and third columns it was told `df` has. */
function answer(request: StandInRequest): { text: string } {
  const columns = /- df: [^\n]*columns \(\d+\): ([^\n]+)/.exec(promptOf(request))?.[1]?.split(', ');
  return { text: columns ? `groupby("${columns[0]}")["${columns[2]}"].sum()` : 'no_columns_in_context()' };
}

describe('inline completions that know the live kernel (issue #27)', () => {
  let standIn: ProviderStandIn;
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;

  const cell = (n: number) => page.locator('.jp-Notebook .jp-Cell').nth(n);
  const ghost = () => page.locator('.jp-Notebook .jp-GhostText');
  const inlineRequests = () => standIn.requests.filter((r) => promptOf(r).includes('Current cell:'));

  beforeAll(async () => {
    standIn = await startProviderStandIn('openai-compatible', answer, {
      models: ['main-model', 'fast-coder'],
      delayMs: MODEL_DELAY_MS
    });
    jupyter = await startJupyter({
      env: standIn.env,
      files: { 'sales.ipynb': NOTEBOOK },
      cellmateSettings: {
        provider: 'openai-compatible',
        model: 'main-model',
        baseUrl: standIn.settings.baseUrl,
        fastModel: { provider: 'openai-compatible', model: 'fast-coder', baseUrl: standIn.settings.baseUrl }
      }
    });
    ({ browser, page } = await openPane(jupyter.labUrl));
    await runCommand(page, 'docmanager:open', { path: 'sales.ipynb' });
    await page.waitForFunction(
      () =>
        (window as unknown as { jupyterapp: App }).jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel
          ?.status === 'idle',
      undefined,
      { timeout: 60_000 }
    );
    await cell(0).click();
    await runCommand(page, 'notebook:run-cell-and-select-next');
    await cell(0).locator('.jp-InputPrompt', { hasText: '[1]' }).waitFor({ timeout: 30_000 });
    await page
      .locator('.jp-cellmate-kernel-binding[data-origin="notebook"]', { hasText: 'sales.ipynb' })
      .waitFor({ timeout: 30_000 });
  });

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
    await standIn?.close();
  });

  it('off until turned on: typing sends nothing to the model', async () => {
    expect(await page.locator('.jp-cellmate-inline-toggle').getAttribute('aria-pressed')).toBe('false');
    await cell(1).locator('.cm-content').click();
    await page.keyboard.type('df.', { delay: 60 });
    await page.waitForTimeout(1_500);
    expect(inlineRequests()).toHaveLength(0);
    expect(await ghost().count()).toBe(0);
    await page.keyboard.press('Backspace');
    await page.keyboard.press('Backspace');
    await page.keyboard.press('Backspace');
  });

  it('typing df. shows ghost text naming real columns from the kernel, from the fast model; Tab accepts', async () => {
    await page.locator('.jp-cellmate-inline-toggle').click();
    await expect.poll(() => page.locator('.jp-cellmate-inline-toggle').getAttribute('aria-pressed')).toBe('true');
    await cell(1).locator('.cm-content').click();
    await page.keyboard.type('df.', { delay: 60 });
    await expect
      .poll(() => ghost().first().textContent(), { timeout: 15_000 })
      .toContain('groupby("city")["sales"].sum()');

    // What the model received: the fast tier, the kernel's DataFrame with its columns, the cell above.
    const sent = inlineRequests().at(-1)!;
    expect(sent.body.model).toBe('fast-coder');
    expect(promptOf(sent)).toMatch(/- df: pandas\.DataFrame 2×4; columns \(4\): city, month, sales, returns/);
    expect(promptOf(sent)).toContain('df = pd.DataFrame(');
    expect(promptOf(sent)).toContain('df.<CURSOR>');
    await screenshot(page, 'inline-completion-ghost');

    await page.keyboard.press('Tab');
    await expect.poll(() => cell(1).locator('.cm-content').textContent()).toBe('df.groupby("city")["sales"].sum()');
  });

  it('typing on cancels the request in flight: the model server sees the abort before it answers', async () => {
    await page.keyboard.press('Enter');
    await page.keyboard.type('top = df.', { delay: 40 });
    // The debounce passed and the request is with the model, which has not answered yet.
    const forText = () => inlineRequests().find((r) => promptOf(r).includes('top = df.<CURSOR>'));
    await expect.poll(() => forText() !== undefined, { timeout: 10_000 }).toBe(true);
    const inFlight = forText()!;
    expect(inFlight.answeredAt).toBeUndefined();
    await page.keyboard.type('x', { delay: 0 });
    await expect.poll(() => inFlight.aborted ?? false, { timeout: 10_000 }).toBe(true);
    expect(inFlight.answeredAt).toBeUndefined();
    // The text that is there now gets its own request.
    await expect
      .poll(() => inlineRequests().some((r) => promptOf(r).includes('top = df.x<CURSOR>')), { timeout: 10_000 })
      .toBe(true);
  });
});
