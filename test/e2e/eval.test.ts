/**
 * The agent shares the focused notebook's kernel (SPEC EVAL-2), end to end in Debian's
 * Chromium against a real JupyterLab: a notebook cell defines a variable → the scripted
 * model's eval sees it (through the companion's own Jupyter Server connection, marked
 * requests) and defines another → the next notebook cell sees that one, and the notebook
 * is not left "pending input". The eval card names the notebook's kernel and shows the
 * DataFrame as a table and the figure as an image (rendermime, untrusted).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openLab, pressSend, runCommand, screenshot, screenshotIfFailed } from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';

const cell = (source: string) => ({ cell_type: 'code', metadata: {}, source, outputs: [], execution_count: null });
const NOTEBOOK = {
  cells: [cell('shared_from_notebook = 1234'), cell('print("notebook sees:", from_agent)')],
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  nbformat: 4,
  nbformat_minor: 5
};

const SCRIPT = {
  turns: [
    [
      {
        text: 'Let me look at your notebook state.',
        toolCalls: [
          {
            toolName: 'eval',
            input: {
              description: 'Read the notebook variable and plot a table',
              code: [
                'import pandas as pd, matplotlib.pyplot as plt',
                'from_agent = "hello from eval"',
                'print("agent sees:", shared_from_notebook + 1)',
                'print("bridge read:", tool("read", {"path": "notes.md"}).splitlines()[0].split("\\t")[1])',
                'df = pd.DataFrame({"kiln": ["north", "south"], "peak_c": [1240, 1180]})',
                'display(df)',
                'plt.figure(figsize=(3, 2)); plt.bar(df.kiln, df.peak_c); plt.show()'
              ].join('\n')
            }
          }
        ]
      },
      { text: 'Done: I can see `shared_from_notebook` and left `from_agent` for you.' }
    ],
    [
      {
        toolCalls: [
          {
            toolName: 'eval',
            input: {
              description: 'Run a slow loop that prints ticks',
              code: 'import time\nfor i in range(600):\n    print("tick", i, flush=True)\n    time.sleep(0.1)'
            }
          }
        ]
      }
    ]
  ]
};

type App = {
  shell: {
    currentWidget: {
      content: { activeCellIndex: number };
      sessionContext: { session?: { kernel?: { status: string } } };
    } | null;
  };
  commands: { execute(id: string, args?: unknown): Promise<unknown> };
};

describe('eval shares the notebook kernel (issue #3)', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    jupyter = await startJupyter({
      files: {
        'analysis.ipynb': JSON.stringify(NOTEBOOK),
        'scripts/eval.json': JSON.stringify(SCRIPT),
        'notes.md': 'kiln notes\n'
      },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/eval.json' }
    });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1500, height: 950 } });
    await openLab(page, jupyter.labUrl);
  });

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
  });

  /** Runs one notebook cell the way a user does (the notebook's own connection). */
  async function runNotebookCell(index: number): Promise<void> {
    // Focus the notebook first: after a click in the pane, notebook commands may not apply.
    await page.locator('.jp-Notebook .jp-Cell').nth(index).locator('.jp-InputPrompt').click();
    const ran = await page.evaluate(async (i) => {
      const app = (window as unknown as { jupyterapp: App & { commands: { isEnabled(id: string): boolean } } })
        .jupyterapp;
      app.shell.currentWidget!.content.activeCellIndex = i;
      if (!app.commands.isEnabled('notebook:run-cell')) return 'notebook:run-cell is disabled';
      return String(await app.commands.execute('notebook:run-cell'));
    }, index);
    expect(ran).not.toContain('disabled');
  }

  it('a notebook variable is visible to eval, and an eval variable to the notebook', async () => {
    await runCommand(page, 'docmanager:open', { path: 'analysis.ipynb' });
    await page.waitForFunction(
      () =>
        (window as unknown as { jupyterapp: App }).jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel
          ?.status === 'idle',
      undefined,
      { timeout: 60_000 }
    );
    await runNotebookCell(0);
    await page
      .locator('.jp-Notebook .jp-Cell')
      .first()
      .locator('.jp-InputPrompt', { hasText: '[1]' })
      .waitFor({ timeout: 30_000 });

    await runCommand(page, 'cellmate:new-chat');
    await page.locator('.jp-cellmate-connection[data-state="connected"]').waitFor({ timeout: 30_000 });
    const input = page.locator('textarea.jp-cellmate-input');
    await input.fill('What is in my notebook?');
    await pressSend(page);

    const card = page.locator('.jp-cellmate-tool-card[data-tool-name="eval"]');
    await card.locator('xpath=self::*[@data-status="ok"]').waitFor({ timeout: 60_000 });
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 30_000 });
    const text = await card.innerText();
    expect(text).toContain('agent sees: 1235');
    // tool() rode the agent's own connection's stdin: the notebook must not see "pending input".
    expect(text).toContain('bridge read: kiln notes');
    // The card names the notebook's kernel, and the model's result does too.
    expect(await card.locator('.jp-cellmate-tool-kernel').innerText()).toContain('analysis.ipynb');
    expect(text).toContain('shared with the notebook');
    // Rich outputs, rendered untrusted: the DataFrame as an HTML table, the figure as an image.
    await card.locator('.jp-cellmate-eval-output table').first().waitFor({ timeout: 10_000 });
    await card.locator('.jp-cellmate-eval-output img').first().waitFor({ timeout: 10_000 });
    await card.locator('.jp-cellmate-eval-output').scrollIntoViewIfNeeded();
    await screenshot(page, 'eval-shared-kernel');

    // The notebook sees what the agent defined, and is not stuck on "pending input".
    await runNotebookCell(1);
    await page
      .locator('.jp-Notebook .jp-Cell')
      .nth(1)
      .locator('.jp-OutputArea-output', { hasText: 'notebook sees: hello from eval' })
      .waitFor({ timeout: 30_000 });
    expect(await page.locator('.jp-Notebook').innerText()).not.toContain('pending input');
  });

  it("Stop in the pane interrupts the agent's running cell in the notebook kernel", async () => {
    const input = page.locator('textarea.jp-cellmate-input');
    await input.fill('Run the slow loop');
    await pressSend(page);
    const card = page.locator('.jp-cellmate-tool-card[data-tool-name="eval"]').nth(1);
    await card.locator('xpath=self::*[@data-status="running"]').waitFor({ timeout: 60_000 });
    await page.locator('button.jp-cellmate-stop').click();
    await card.locator('xpath=self::*[@data-status="aborted"]').waitFor({ timeout: 30_000 });
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 30_000 });
    // The kernel is free again: a notebook cell runs now (it would queue for a minute otherwise).
    await page.evaluate(async () => {
      const app = (window as unknown as { jupyterapp: App }).jupyterapp;
      app.shell.currentWidget!.content.activeCellIndex = 1;
    });
    await runCommand(page, 'notebook:insert-cell-below');
    await page.evaluate(async () => {
      const app = (
        window as unknown as {
          jupyterapp: {
            shell: {
              currentWidget: { content: { activeCell: { model: { sharedModel: { setSource(s: string): void } } } } };
            };
          };
        }
      ).jupyterapp;
      app.shell.currentWidget.content.activeCell.model.sharedModel.setSource('print("after stop", from_agent)');
    });
    await runNotebookCell(2);
    await page
      .locator('.jp-Notebook .jp-Cell')
      .nth(2)
      .locator('.jp-OutputArea-output', { hasText: 'after stop hello from eval' })
      .waitFor({ timeout: 20_000 });
  });
});
