/**
 * Kernel focus is per window (issue #9, SPEC EVAL-2): two browser pages, each with its own
 * notebook open and its own chat; each chat's eval lands in its own page's notebook kernel,
 * never in the notebook the other window focused last. Real JupyterLab, Debian's Chromium,
 * the scripted model (every turn runs the same eval), real ipykernels.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  launchBrowser,
  openChat,
  openLab,
  runCommand,
  screenshot,
  screenshotIfFailed,
  sendAndWaitForTurn
} from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';

const notebook = (who: string) =>
  JSON.stringify({
    cells: [
      { cell_type: 'code', id: 'set', metadata: {}, source: `who = "${who}"`, outputs: [], execution_count: null }
    ],
    metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
    nbformat: 4,
    nbformat_minor: 5
  });
// Every turn: one eval that says which notebook kernel it ran in and counts its visits there.
const SCRIPT = {
  steps: [
    {
      toolCalls: [
        {
          toolName: 'eval',
          input: {
            description: 'Say which notebook kernel this is',
            code: 'visits = globals().get("visits", 0) + 1\nprint("kernel of", who, "visits", visits)'
          }
        }
      ]
    },
    { text: 'Done.' }
  ]
};

type App = { shell: { currentWidget: { sessionContext: { session?: { kernel?: { status: string } } } } | null } };

describe('kernel focus per window: two pages on two notebooks (issue #9)', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const pages: Page[] = [];

  beforeAll(async () => {
    jupyter = await startJupyter({
      files: { 'a.ipynb': notebook('A'), 'b.ipynb': notebook('B'), 'scripts/every.json': JSON.stringify(SCRIPT) },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/every.json' }
    });
    browser = await launchBrowser();
  });

  afterEach(async (ctx) => {
    for (const p of pages)
      await screenshotIfFailed({ task: { ...ctx.task, name: `${ctx.task.name}-${pages.indexOf(p)}` } }, p);
  });

  afterAll(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await jupyter?.stop();
  });

  /** A window on its own lab workspace with `path` open, its cell run, and a new chat. */
  async function openWindow(name: string, path: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1300, height: 850 } });
    contexts.push(context);
    const page = await context.newPage();
    pages.push(page);
    await openLab(page, `${jupyter.url}/lab/workspaces/${name}?token=${jupyter.token}`);
    await runCommand(page, 'docmanager:open', { path });
    await page.waitForFunction(
      () =>
        (window as unknown as { jupyterapp: App }).jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel
          ?.status === 'idle',
      undefined,
      { timeout: 60_000 }
    );
    await runCommand(page, 'notebook:run-cell');
    await page
      .locator('.jp-Notebook .jp-Cell')
      .first()
      .locator('.jp-InputPrompt', { hasText: '[1]' })
      .waitFor({ timeout: 30_000 });
    await openChat(page);
    await runCommand(page, 'cellmate:new-chat');
    // The pane names this window's notebook kernel once the companion has its focus.
    await page
      .locator('.jp-cellmate-kernel-binding[data-origin="notebook"]', { hasText: path })
      .waitFor({ timeout: 30_000 });
    return page;
  }

  async function evalFrom(page: Page): Promise<string> {
    await sendAndWaitForTurn(page, 'which kernel are you in?');
    const card = page.locator('.jp-cellmate-tool-card[data-tool-name="eval"]').last();
    expect(await card.getAttribute('data-status')).toBe('ok');
    return (await card.textContent()) ?? '';
  }

  it("each window's chat evals in its own notebook's kernel, whichever window focused last", async () => {
    const a = await openWindow('wa', 'a.ipynb');
    const b = await openWindow('wb', 'b.ipynb'); // b's focus arrives last
    const fromA = await evalFrom(a);
    expect(fromA).toContain('kernel of A visits 1');
    expect(fromA).toContain('a.ipynb');
    const fromB = await evalFrom(b);
    expect(fromB).toContain('kernel of B visits 1');
    // Once more from A after B: still A's kernel, and it counts A's visits only.
    expect(await evalFrom(a)).toContain('kernel of A visits 2');
    await screenshot(a, 'kernel-focus-window-a');
    await screenshot(b, 'kernel-focus-window-b');
  });
});
