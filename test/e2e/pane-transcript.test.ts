/**
 * The pane a data scientist lives in (issue #5 part B), in Debian's Chromium against a
 * real JupyterLab with a scripted model: an eval's figure and DataFrame in the transcript
 * (screenshots in the light and the dark theme, and at ~300 px), "Show all" on a long
 * result, nothing from model markdown or kernel HTML executes, retry and edit of the last
 * message, several chats with rename and delete, a reload in the middle of a running
 * turn brings every chat back, Esc stops the running cell, copy to notebook.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { openChat, openLab, openPane, pressSend, runCommand, screenshot, setTheme } from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';
import { artifactsDir } from '../support/paths';

const PLOT = [
  'import pandas as pd, matplotlib.pyplot as plt',
  'df = pd.DataFrame({"kiln": ["north", "south", "east"], "peak_c": [1240, 1180, 1215]})',
  'for i in range(30): print(f"reading {i}: {1100 + i * 5} C")',
  'display(df)',
  'fig, ax = plt.subplots(figsize=(3.2, 2)); ax.bar(df.kiln, df.peak_c); ax.set_ylabel("peak °C"); plt.show()'
].join('\n');

const XSS_HTML =
  'from IPython.display import HTML, display\ndisplay(HTML(\'<b>kernel html</b><script>window.__pwned=3</script><img src=x onerror="window.__pwned=4">\'))';

const SLOW = 'import time\nfor i in range(120):\n    print(f"step {i}", flush=True)\n    time.sleep(0.5)';

/** One list of steps per user message (turn index = user messages − 1, per chat). */
const SCRIPT = {
  turns: [
    // 0: every chat's first message
    [{ text: 'Hello! Ask me about your kilns.' }],
    // 1: a figure and a table
    [
      {
        text: 'Plotting the peak temperatures.',
        toolCalls: [{ toolName: 'eval', input: { description: 'Plot kiln peaks and show the table', code: PLOT } }]
      },
      {
        text: 'Here they are. To reuse the frame:\n\n```python\ndf.sort_values("peak_c")\n```\n\nThe **north** kiln ran hottest.'
      }
    ],
    // 2: hostile markdown and hostile kernel HTML
    [
      {
        text: 'Careful: <img src=x onerror="window.__pwned=1"> and <script>window.__pwned=2</script> end.',
        toolCalls: [
          { toolName: 'eval', input: { description: 'Show an HTML snippet from the kernel', code: XSS_HTML } }
        ]
      },
      { text: 'Rendered safely.' }
    ],
    // 3: a quick answer (retried and edited)
    [{ text: 'The answer is **42**.' }],
    // 4: a long cell (reload mid-turn, Esc stops it)
    [
      {
        text: 'Running a long cell.',
        toolCalls: [{ toolName: 'eval', input: { description: 'Run a slow loop printing progress lines', code: SLOW } }]
      }
    ]
  ]
};

const EMPTY_NOTEBOOK = {
  cells: [{ cell_type: 'code', metadata: {}, source: 'x = 1', outputs: [], execution_count: null }],
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  nbformat: 4,
  nbformat_minor: 5
};

type LabWindow = {
  jupyterapp: {
    commands: { execute(id: string, args?: unknown): Promise<unknown> };
    shell: {
      currentWidget: {
        content?: {
          model?: { sharedModel: { cells: Array<{ source: string; getMetadata(): Record<string, unknown> }> } };
        };
      } | null;
    };
  };
  __pwned?: unknown;
};

describe('the Cellmate pane (issue #5 part B)', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;

  const panel = () => page.locator('#jp-cellmate-panel');
  const input = () => page.locator('textarea.jp-cellmate-input');
  const idle = () => page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 60_000 });

  async function send(text: string): Promise<void> {
    await input().fill(text);
    await pressSend(page);
  }

  /** A picture of the pane alone, kept in test/artifacts/. */
  async function shootPane(name: string): Promise<void> {
    await fs.mkdir(artifactsDir, { recursive: true });
    await panel().screenshot({ path: path.join(artifactsDir, `${name}.png`) });
  }

  /** Drags the split handle left of the right sidebar so the pane is `width` px wide. */
  async function setPaneWidth(width: number): Promise<void> {
    const box = await panel().boundingBox();
    const handles = await page.locator('.lm-SplitPanel-handle').all();
    for (const handle of handles) {
      const h = await handle.boundingBox();
      if (!box || !h || h.height < 200 || Math.abs(h.x + h.width - box.x) > 12) continue;
      await page.mouse.move(h.x + h.width / 2, h.y + h.height / 2);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width - width, h.y + h.height / 2, { steps: 8 });
      await page.mouse.up();
      break;
    }
  }

  beforeAll(async () => {
    jupyter = await startJupyter({
      files: { 'scripts/pane.json': JSON.stringify(SCRIPT), 'scratch.ipynb': JSON.stringify(EMPTY_NOTEBOOK) },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/pane.json' }
    });
    ({ browser, page } = await openPane(jupyter.labUrl, { width: 1400, height: 1000 }));
  });

  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail' && page) {
      await screenshot(page, `failed-pane-${ctx.task.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`);
    }
  });

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
  });

  it('controls have accessible names and the transcript is a polite live log', async () => {
    const transcript = page.locator('.jp-cellmate-transcript');
    expect(await transcript.getAttribute('role')).toBe('log');
    expect(await transcript.getAttribute('aria-live')).toBe('polite');
    const unnamed = await page.evaluate(() =>
      [
        ...document.querySelectorAll(
          '#jp-cellmate-panel button, #jp-cellmate-panel select, #jp-cellmate-panel textarea'
        )
      ]
        .filter((el) => !(el.getAttribute('aria-label') || (el as HTMLElement).innerText.trim()))
        .map((el) => el.className)
    );
    expect(unnamed).toEqual([]);
    // Private kernel until a notebook is focused.
    expect(await page.locator('.jp-cellmate-kernel-binding').getAttribute('data-origin')).toBe('private');
  });

  it('several chats: create, rename (dialog), first turns', async () => {
    await runCommand(page, 'cellmate:new-chat');
    await send('hello from B');
    await page
      .locator('.jp-cellmate-item[data-kind="assistant"]', { hasText: 'Ask me about your kilns' })
      .waitFor({ timeout: 30_000 });
    await idle();
    await page.locator('button.jp-cellmate-rename-chat').click();
    const dialog = page.locator('.jp-Dialog');
    await dialog.locator('input').fill('Scratch B');
    await dialog.locator('.jp-mod-accept').click();
    await page.waitForFunction(
      () =>
        document.querySelector<HTMLSelectElement>('select.jp-cellmate-chat-select')?.selectedOptions[0]?.textContent ===
        'Scratch B'
    );

    await page.locator('button.jp-cellmate-new-chat').click();
    await page.waitForFunction(() => document.querySelectorAll('.jp-cellmate-item').length === 0);
    await send('hello');
    await page
      .locator('.jp-cellmate-item[data-kind="assistant"]', { hasText: 'Ask me about your kilns' })
      .waitFor({ timeout: 30_000 });
    await idle();
    expect(await page.locator('select.jp-cellmate-chat-select option').count()).toBe(2);
  });

  it('an eval with a matplotlib figure and a DataFrame shows the image and an HTML table (light, dark, narrow)', async () => {
    await send('Plot the kiln peaks');
    const card = page.locator('.jp-cellmate-tool-card[data-tool-name="eval"]').last();
    await card.locator('xpath=self::*[@data-status="ok"]').waitFor({ timeout: 90_000 });
    await idle();
    await card.locator('.jp-cellmate-eval-output table').first().waitFor({ timeout: 15_000 });
    await card.locator('.jp-cellmate-eval-output img').first().waitFor({ timeout: 15_000 });
    expect(await card.locator('.jp-cellmate-eval-output table').first().innerText()).toContain('north');
    expect(await card.locator('.jp-cellmate-tool-kernel').innerText()).toMatch(/private/);
    // The header names the chat's private kernel once an eval used it.
    expect(await page.locator('.jp-cellmate-kernel-binding').innerText()).toMatch(/python3 · private/);

    // The long result starts collapsed with "Show all"; the whole text is in the DOM.
    const output = card.locator('pre.jp-cellmate-tool-output');
    expect(await output.getAttribute('class')).toContain('jp-mod-collapsed');
    const showAll = card.locator('button.jp-cellmate-show-all');
    expect(await showAll.innerText()).toMatch(/Show all/);
    const collapsedHeight = (await output.boundingBox())!.height;
    await showAll.click();
    expect((await output.boundingBox())!.height).toBeGreaterThan(collapsedHeight);
    expect(await showAll.getAttribute('aria-expanded')).toBe('true');
    await showAll.click();

    // The markdown code block and the eval card both offer "Copy to notebook".
    await page.locator('.jp-cellmate-item[data-kind="assistant"] button.jp-cellmate-copy-code').first().waitFor();
    expect(await card.locator('button.jp-cellmate-copy-to-notebook').count()).toBe(1);

    const showTable = () =>
      card
        .locator('.jp-cellmate-eval-output table')
        .first()
        .evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await showTable();
    await shootPane('pane-eval-light');
    await screenshot(page, 'pane-eval-light-full');
    await setTheme(page, 'JupyterLab Dark');
    await showTable();
    await shootPane('pane-eval-dark');
    // The narrowest the pane goes: a drag to 300 px stops at its 340 px floor (the width that
    // fits a 6-column table); wider tables scroll inside their card.
    await setPaneWidth(300);
    // The split layout applies the drag on a later animation frame.
    await expect.poll(async () => (await panel().boundingBox())!.width).toBeLessThanOrEqual(342);
    expect((await panel().boundingBox())!.width).toBeGreaterThanOrEqual(338);
    await showTable();
    await shootPane('pane-eval-dark-narrow');
    // Nothing overflows the narrow pane sideways.
    const overflow = await page.evaluate(() => {
      const t = document.querySelector('.jp-cellmate-transcript')!;
      return t.scrollWidth - t.clientWidth;
    });
    expect(overflow).toBeLessThanOrEqual(1);
    await setTheme(page, 'JupyterLab Light');
    await showTable();
    await shootPane('pane-eval-light-narrow');
  });

  it('model markdown and kernel HTML execute nothing', async () => {
    await send('Show me something risky');
    await page
      .locator('.jp-cellmate-item[data-kind="assistant"]', { hasText: 'Rendered safely' })
      .waitFor({ timeout: 60_000 });
    await idle();
    const card = page.locator('.jp-cellmate-tool-card[data-tool-name="eval"]').last();
    await card.locator('.jp-cellmate-eval-output', { hasText: 'kernel html' }).waitFor({ timeout: 15_000 });
    await page.waitForTimeout(1000); // give any onerror handler time to fire
    const result = await page.evaluate(() => ({
      pwned: (window as unknown as LabWindow).__pwned,
      scripts: document.querySelectorAll('#jp-cellmate-panel script').length,
      handlers: document.querySelectorAll('#jp-cellmate-panel [onerror]').length
    }));
    expect(result).toEqual({ pwned: undefined, scripts: 0, handlers: 0 });
    await shootPane('pane-xss');
  });

  it('retry runs the last turn again; edit replaces the last message and runs it', async () => {
    await send('What is the answer?');
    const answer = page.locator('.jp-cellmate-item[data-kind="assistant"]', { hasText: 'The answer is' });
    await answer.waitFor({ timeout: 30_000 });
    await idle();
    const firstId = await answer.getAttribute('data-item-id');
    const lastUser = page.locator('.jp-cellmate-item[data-kind="user"].jp-mod-last');
    expect(await page.locator('.jp-cellmate-item[data-kind="user"] button.jp-cellmate-retry:visible').count()).toBe(1);

    await lastUser.locator('button.jp-cellmate-retry').click();
    await page.waitForFunction(
      (id) => {
        const all = [...document.querySelectorAll('.jp-cellmate-item[data-kind="assistant"]')];
        const last = all.at(-1);
        return !!last && last.getAttribute('data-item-id') !== id && !!last.textContent?.includes('The answer is');
      },
      firstId,
      { timeout: 30_000 }
    );
    await idle();
    expect(await page.locator('.jp-cellmate-item[data-kind="user"]', { hasText: 'What is the answer?' }).count()).toBe(
      1
    );
    expect(await answer.count()).toBe(1);

    await lastUser.locator('button.jp-cellmate-edit').click();
    const editor = lastUser.locator('textarea.jp-cellmate-edit-input');
    expect(await editor.inputValue()).toBe('What is the answer?');
    await editor.fill('What is six times seven?');
    await editor.press('Enter');
    await page
      .locator('.jp-cellmate-item[data-kind="user"]', { hasText: 'six times seven' })
      .waitFor({ timeout: 30_000 });
    await answer.waitFor({ timeout: 30_000 });
    await idle();
    expect(await page.locator('.jp-cellmate-item[data-kind="user"]', { hasText: 'What is the answer?' }).count()).toBe(
      0
    );
    expect(await answer.count()).toBe(1);
  });

  it('reload in the middle of a running cell: every chat and transcript is back; the card ticks; Esc stops it', async () => {
    await send('Run the long job');
    const running = page.locator('.jp-cellmate-tool-card[data-tool-name="eval"][data-status="running"]');
    await running.waitFor({ timeout: 60_000 });
    const chatsBefore = await page.locator('select.jp-cellmate-chat-select option').allInnerTexts();
    const itemsBefore = await page.locator('.jp-cellmate-item:not([data-kind="notice"])').count();

    await page.reload();
    await openLab(page, jupyter.labUrl);
    await openChat(page);
    await page.locator('#jp-cellmate-panel[data-running="true"]').waitFor({ timeout: 30_000 });
    expect(await page.locator('select.jp-cellmate-chat-select option').allInnerTexts()).toEqual(chatsBefore);
    expect(await page.locator('.jp-cellmate-item:not([data-kind="notice"])').count()).toBe(itemsBefore);
    // The open chat's whole transcript: figure, table, the edited message, the running card.
    await page.locator('.jp-cellmate-eval-output img').first().waitFor({ timeout: 15_000 });
    await page.locator('.jp-cellmate-eval-output table').first().waitFor({ timeout: 15_000 });
    await page.locator('.jp-cellmate-item[data-kind="user"]', { hasText: 'six times seven' }).waitFor();

    // The running card's elapsed time ticks.
    const duration = running.locator('.jp-cellmate-tool-duration[data-elapsed="true"]');
    const t1 = await duration.innerText();
    expect(t1).toMatch(/^\d+:\d\d$/);
    await expect.poll(() => duration.innerText()).not.toBe(t1);
    // …and shows the last line the cell printed.
    await page
      .locator('.jp-cellmate-tool-progress:not([hidden])', { hasText: /^step \d+$/ })
      .waitFor({ timeout: 10_000 });
    await shootPane('pane-running');

    // Esc in the pane stops the turn and interrupts the cell.
    await page.locator('.jp-cellmate-transcript').focus();
    await page.keyboard.press('Escape');
    await idle();
    await page
      .locator('.jp-cellmate-tool-card[data-tool-name="eval"][data-status="aborted"]')
      .waitFor({ timeout: 30_000 });

    // The other chat comes back with its transcript too.
    const other = await page.evaluate(() => {
      const select = document.querySelector<HTMLSelectElement>('select.jp-cellmate-chat-select')!;
      return [...select.options].find((o) => o.textContent === 'Scratch B')!.value;
    });
    await page.locator('select.jp-cellmate-chat-select').selectOption(other);
    await page.locator('.jp-cellmate-item[data-kind="user"]', { hasText: 'hello from B' }).waitFor({ timeout: 15_000 });
    await page.locator('.jp-cellmate-item[data-kind="assistant"]', { hasText: 'Ask me about your kilns' }).waitFor();
  });

  it('delete asks first, then removes the chat and opens the next one', async () => {
    await page.locator('button.jp-cellmate-delete-chat').click();
    const dialog = page.locator('.jp-Dialog');
    expect(await dialog.innerText()).toContain('Scratch B');
    await dialog.locator('.jp-mod-reject').click();
    expect(await page.locator('select.jp-cellmate-chat-select option').count()).toBe(2);
    await page.locator('button.jp-cellmate-delete-chat').click();
    await page.locator('.jp-Dialog .jp-mod-warn').click();
    await page.waitForFunction(() => document.querySelectorAll('select.jp-cellmate-chat-select option').length === 1);
    await page
      .locator('.jp-cellmate-item[data-kind="user"]', { hasText: 'six times seven' })
      .waitFor({ timeout: 15_000 });
    const files = await fs.readdir(path.join(jupyter.workspace, '.cellmate', 'chats'));
    // One chat left: its journal (and maybe a snapshot); the deleted chat's files are gone.
    expect(new Set(files.filter((f) => /\.jsonl?$/.test(f)).map((f) => f.replace(/\.jsonl?$/, ''))).size).toBe(1);
  });

  it('copy to notebook inserts the code below the active cell, marked agent-copy; the header names the notebook kernel', async () => {
    await runCommand(page, 'docmanager:open', { path: 'scratch.ipynb' });
    await page.locator('.jp-cellmate-kernel-binding[data-origin="notebook"]').waitFor({ timeout: 60_000 });
    expect(await page.locator('.jp-cellmate-kernel-binding').innerText()).toContain('scratch.ipynb');
    await page
      .locator('.jp-cellmate-tool-card[data-tool-name="eval"] button.jp-cellmate-copy-to-notebook')
      .first()
      .click();
    await page.locator('.jp-cellmate-item[data-kind="assistant"] button.jp-cellmate-copy-code').first().click();
    const cells = await page.evaluate(() => {
      const w = (window as unknown as LabWindow).jupyterapp.shell.currentWidget;
      return w!.content!.model!.sharedModel.cells.map((c) => ({ source: c.source, mark: c.getMetadata().cellmate }));
    });
    expect(cells.map((c) => c.source)).toEqual(['x = 1', PLOT, 'df.sort_values("peak_c")']);
    expect(cells[1].mark).toEqual({ created_by: 'agent-copy' });
    expect(cells[2].mark).toEqual({ created_by: 'agent-copy' });
    await screenshot(page, 'pane-copy-to-notebook');
  });
});
