/**
 * The `lsp` card end to end (issue #10): the scripted model runs `lsp references` on a real
 * basedpyright over a workspace with a notebook open in JupyterLab; the card lists the uses
 * as links — `util.py:1` and `analysis.ipynb cell N line M` — and clicking the notebook link
 * scrolls the open notebook to that cell and makes it active. Real JupyterLab, Debian's
 * Chromium, the companion's real language server.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import {
  approveOnce,
  launchBrowser,
  openChat,
  openLab,
  pressSend,
  runCommand,
  screenshot,
  screenshotIfFailed,
  sendAndWaitForTurn
} from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';

const code = (id: string, source: string) => ({
  cell_type: 'code',
  id,
  metadata: {},
  source,
  outputs: [],
  execution_count: null
});
// Enough filler cells that the far cell starts off screen.
const NB = {
  cells: [
    code('top', 'from util import clean\nfirst = clean(" a ")'),
    ...Array.from({ length: 30 }, (_, i) => code(`filler-${i}`, `x${i} = ${i}\nprint(x${i})\n# filler\n# filler`)),
    code('far', 'import os\n%matplotlib inline\nlast = clean(os.getcwd())')
  ],
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  nbformat: 4,
  nbformat_minor: 5
};
const SCRIPT = {
  turns: [
    [
      { toolCalls: [{ toolName: 'lsp', input: { action: 'references', file: 'util.py', line: 1, symbol: 'clean' } }] },
      { text: 'clean is used in two notebook cells.' }
    ],
    [
      {
        toolCalls: [
          {
            toolName: 'notebook_edit',
            input: {
              path: 'analysis.ipynb',
              edits: [{ action: 'replace', cell_id: 'top', source: 'from util import clean\nfirst = clen(" a ")' }]
            }
          }
        ]
      },
      { text: 'Edited the first cell.' }
    ]
  ]
};

type NotebookApp = {
  shell: {
    currentWidget: {
      content: {
        activeCellIndex: number;
        widgets: Array<{ model: { id: string }; node: HTMLElement }>;
        node: HTMLElement;
      };
    } | null;
  };
};

describe('lsp card (issue #10)', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    jupyter = await startJupyter({
      files: {
        'pyproject.toml': '[project]\nname = "demo"\nversion = "0"\n',
        'util.py': 'def clean(text: str) -> str:\n    """Trim."""\n    return text.strip()\n',
        'analysis.ipynb': JSON.stringify(NB),
        'scripts/lsp.json': JSON.stringify(SCRIPT)
      },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/lsp.json' },
      // The default policy: the notebook_edit asks and the test approves it once.
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

  const app = () => (window as unknown as { jupyterapp: NotebookApp }).jupyterapp;

  it('the references card links the notebook cell; a click scrolls the open notebook to it', async () => {
    await runCommand(page, 'docmanager:open', { path: 'analysis.ipynb' });
    await page.locator('.jp-Notebook .jp-Cell').first().waitFor({ timeout: 60_000 });
    await openChat(page);
    await sendAndWaitForTurn(page, 'where is clean used?', 120_000);

    const card = page.locator('.jp-cellmate-item[data-kind="tool"]').last();
    const links = card.locator('a.jp-cellmate-lsp-link');
    await links.first().waitFor({ timeout: 15_000 });
    const labels = await links.allInnerTexts();
    expect(labels).toContain('util.py:1');
    expect(labels).toContain('analysis.ipynb cell 1 line 1');
    expect(labels).toContain('analysis.ipynb cell 32 line 3');
    await screenshot(page, 'lsp-references-card');

    // Before the click the far cell is not the active one and lies below the notebook's viewport.
    const farVisible = () =>
      page.evaluate(() => {
        const nb = (window as unknown as { jupyterapp: NotebookApp }).jupyterapp.shell.currentWidget!.content;
        const cell = nb.widgets.find((c) => c.model.id === 'far')!;
        const a = nb.node.getBoundingClientRect();
        const b = cell.node.getBoundingClientRect();
        return b.height > 0 && b.top < a.bottom && b.bottom > a.top;
      });
    expect(
      await page.evaluate(
        () => (window as unknown as { jupyterapp: NotebookApp }).jupyterapp.shell.currentWidget!.content.activeCellIndex
      )
    ).toBe(0);
    expect(await farVisible()).toBe(false);

    await card.locator('a.jp-cellmate-lsp-link[data-cell-id="far"]').click();
    await page.waitForFunction(
      () =>
        (window as unknown as { jupyterapp: NotebookApp }).jupyterapp.shell.currentWidget?.content.activeCellIndex ===
        31,
      undefined,
      { timeout: 10_000 }
    );
    await page.waitForFunction(
      () => {
        const nb = (window as unknown as { jupyterapp: NotebookApp }).jupyterapp.shell.currentWidget!.content;
        const cell = nb.widgets.find((c) => c.model.id === 'far');
        if (!cell) return false;
        const a = nb.node.getBoundingClientRect();
        const b = cell.node.getBoundingClientRect();
        return b.height > 0 && b.top < a.bottom && b.bottom > a.top;
      },
      undefined,
      { timeout: 10_000 }
    );
    await screenshot(page, 'lsp-link-scrolled');
    void app;
  });

  it('an edit of the open notebook that breaks a cell: its card lists the new error, with its severity, linked to the cell', async () => {
    await page.locator('textarea.jp-cellmate-input').fill('break the first cell');
    await pressSend(page);
    await approveOnce(page, 'notebook_edit');
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 120_000 });
    const card = page.locator('.jp-cellmate-item[data-kind="tool"]').last();
    expect(await card.locator('details.jp-cellmate-tool-card').getAttribute('data-tool-name')).toBe('notebook_edit');
    const entry = card.locator('li.jp-cellmate-lsp-location[data-severity="error"]');
    await entry.waitFor({ timeout: 15_000 });
    expect(await entry.count()).toBe(1);
    expect(await entry.locator('a.jp-cellmate-lsp-link').innerText()).toBe('analysis.ipynb cell 1 line 2');
    expect(await entry.innerText()).toContain('"clen" is not defined');
    expect(await entry.locator('.jp-cellmate-lsp-severity-error').count()).toBe(1);
    await screenshot(page, 'lsp-new-diagnostics-card');
  });
});
