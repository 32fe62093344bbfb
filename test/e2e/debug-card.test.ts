/**
 * The debug card (issue #12, SPEC DBG): the scripted model sets a breakpoint in a notebook
 * cell and runs it under the notebook kernel's own debugger (through the companion's Jupyter
 * Server connection); the card shows the stopped cell and line with its source line, the
 * stack and the locals, the open notebook scrolls to that cell, and Terminate ends the
 * session (the stopped cell then runs on in the notebook's kernel). JupyterLab's own
 * debugger follows the kernel's: the agent's breakpoint is drawn in the cell's gutter while
 * the session runs and is gone after Terminate. Real JupyterLab, real ipykernel + debugpy,
 * Debian's Chromium.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Locator, Page } from 'playwright-core';
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

const code = (id: string, source: string) => ({
  id,
  cell_type: 'code',
  metadata: {},
  source,
  outputs: [],
  execution_count: null
});
const FILLER = Array.from({ length: 25 }, (_, i) => ({
  id: `note${i}`,
  cell_type: 'markdown',
  metadata: {},
  source: `## Section ${i}\n\nSome notes.\n\n\n`
}));
/** The loop cell is cell 27 (index 26): far enough down that showing it needs a scroll. */
const NOTEBOOK = {
  cells: [
    code('setup', 'keep = 41\nitems = [3, 5, 7]'),
    ...FILLER,
    code('loop', 'total = 0\nfor i in range(len(items)):\n    total += items[i]\nresult = total')
  ],
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  nbformat: 4,
  nbformat_minor: 5
};
const LOOP_INDEX = 26;

const SCRIPT = {
  turns: [
    [
      {
        toolCalls: [
          { toolName: 'debug', input: { action: 'breakpoints', file: 'debug.ipynb', cell: 'loop', lines: [3] } }
        ]
      },
      { toolCalls: [{ toolName: 'debug', input: { action: 'run_cell', file: 'debug.ipynb', cell: 'loop' } }] },
      // Set while stopped: JupyterLab learns it only through the pane's sync (no kernel event says so).
      {
        toolCalls: [
          { toolName: 'debug', input: { action: 'breakpoints', file: 'debug.ipynb', cell: 'loop', lines: [3, 4] } }
        ]
      },
      { text: 'Stopped in the loop.' }
    ],
    [{ toolCalls: [{ toolName: 'debug', input: { action: 'status' } }] }, { text: 'Checked.' }]
  ]
};

/** The line numbers that carry a breakpoint marker in JupyterLab's debugger gutter of a cell. */
const gutterBreakpoints = (cell: Locator): Promise<string[]> =>
  cell.evaluate((node) => {
    const shown = (e: Element) => (e as HTMLElement).style.visibility !== 'hidden'; // not CodeMirror's spacer
    const markers = [...node.querySelectorAll('.cm-gutter.cm-breakpoint-gutter .cm-gutterElement')].filter(
      (e) => shown(e) && e.querySelector('.cm-breakpoint-icon')
    );
    const numbers = [...node.querySelectorAll('.cm-lineNumbers .cm-gutterElement')].filter(shown);
    // The line whose number sits level with the marker (its vertical middle inside that row).
    return markers.map((m) => {
      const r = m.getBoundingClientRect();
      const middle = (r.top + r.bottom) / 2;
      const row = numbers.find((n) => {
        const b = n.getBoundingClientRect();
        return b.top <= middle && middle < b.bottom;
      });
      return row?.textContent ?? `unaligned@${Math.round(middle)}`;
    });
  });

type App = {
  shell: {
    currentWidget: {
      content: { activeCellIndex: number };
      sessionContext: { session?: { kernel?: { status: string } } };
    } | null;
  };
  commands: { execute(id: string, args?: unknown): Promise<unknown>; isEnabled(id: string): boolean };
};

describe('the debug card (issue #12)', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    jupyter = await startJupyter({
      files: {
        'debug.ipynb': JSON.stringify(NOTEBOOK),
        'scripts/debug.json': JSON.stringify(SCRIPT)
      },
      // The default policy: breakpoints and status are read tier, run_cell asks (answered below).
      env: { CELLMATE_POLICY: '/nonexistent/cellmate-policy.json' },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/debug.json' }
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

  it('DBG-3: shows the stopped cell and line, scrolls the notebook there; Terminate ends the session and no card of it keeps a Terminate', async () => {
    await runCommand(page, 'docmanager:open', { path: 'debug.ipynb' });
    await page.waitForFunction(
      () =>
        (window as unknown as { jupyterapp: App }).jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel
          ?.status === 'idle',
      undefined,
      { timeout: 60_000 }
    );
    // The user ran the first cell: `items` lives in the notebook's kernel.
    await page.locator('.jp-Notebook .jp-Cell').first().locator('.jp-InputPrompt').click();
    await page.evaluate(async () => {
      const app = (window as unknown as { jupyterapp: App }).jupyterapp;
      app.shell.currentWidget!.content.activeCellIndex = 0;
      await app.commands.execute('notebook:run-cell');
    });
    await page
      .locator('.jp-Notebook .jp-Cell')
      .first()
      .locator('.jp-InputPrompt', { hasText: '[1]' })
      .waitFor({ timeout: 30_000 });
    expect(
      await page.evaluate(
        () => (window as unknown as { jupyterapp: App }).jupyterapp.shell.currentWidget!.content.activeCellIndex
      )
    ).not.toBe(LOOP_INDEX);

    await runCommand(page, 'cellmate:new-chat');
    await page.locator('.jp-cellmate-connection[data-state="connected"]').waitFor({ timeout: 30_000 });
    const input = page.locator('textarea.jp-cellmate-input');
    await input.fill('Why is total wrong? Debug the loop cell.');
    await pressSend(page);
    // Starting the session is the one question: the person approves run_cell once.
    await approveOnce(page, 'debug', 90_000);

    const card = page.locator('.jp-cellmate-debug[data-state="stopped"]').first();
    await card.waitFor({ state: 'attached', timeout: 90_000 });
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ state: 'attached', timeout: 30_000 });
    // One question for the whole turn: the breakpoints before and while stopped asked nothing.
    expect(await page.locator('.jp-cellmate-question[data-type="approval"]').count()).toBe(1);
    // JupyterLab's own debugger: both of the agent's breakpoints in the loop cell's gutter —
    // the one set before the run (line 3) and the one set while stopped (line 4), which
    // JupyterLab learns only from the card — before anything else touches the shell (its own
    // updates run on focus changes).
    const loopCell = page.locator('.jp-Notebook .jp-Cell').nth(LOOP_INDEX);
    await expect.poll(() => gutterBreakpoints(loopCell), { timeout: 20_000 }).toEqual(['3', '4']);
    expect(
      await page.locator('.jp-Notebook .jp-Cell').first().locator('.cm-breakpoint-gutter').count()
    ).toBeGreaterThan(0);
    expect(await gutterBreakpoints(page.locator('.jp-Notebook .jp-Cell').first())).toEqual([]);
    // JupyterLab's own debugger sidebar saw the kernel's `stopped` event and took the right
    // area (it shows the same frame); bring the chat back.
    await runCommand(page, 'cellmate:open-chat');
    await card.waitFor({ timeout: 10_000 });
    expect(await card.locator('.jp-cellmate-debug-where').innerText()).toBe(
      'Stopped (breakpoint) at debug.ipynb cell 27 (id loop), line 3'
    );
    expect(await card.locator('.jp-cellmate-debug-source').innerText()).toBe('3 │     total += items[i]');
    expect(await card.locator('.jp-cellmate-debug-stack').innerText()).toContain(
      '<module> — debug.ipynb cell 27 (id loop):3'
    );
    const locals = await card.locator('.jp-cellmate-debug-locals').innerText();
    expect(locals).toMatch(/items\s+list\s+\[3, 5, 7\]/);
    expect(locals).toMatch(/keep\s+int\s+41/);
    // The open notebook was scrolled to the stopped cell.
    expect(
      await page.evaluate(
        () => (window as unknown as { jupyterapp: App }).jupyterapp.shell.currentWidget!.content.activeCellIndex
      )
    ).toBe(LOOP_INDEX);
    await expect
      .poll(() => page.locator('.jp-Notebook .jp-Cell').nth(LOOP_INDEX).isVisible(), { timeout: 10_000 })
      .toBe(true);
    await screenshot(page, 'debug-card-stopped');

    const stoppedCard = await card.getAttribute('data-session-id');
    await card.locator('button.jp-cellmate-debug-terminate').click();
    // The session's latest card (the breakpoints one) says it ended, and offers no Terminate.
    const last = page.locator('.jp-cellmate-debug').last();
    await expect.poll(() => last.getAttribute('data-state'), { timeout: 30_000 }).toBe('ended');
    expect(await last.locator('.jp-cellmate-debug-where').innerText()).toMatch(
      /^Ended \(ended: terminated on request\) — kernel: /
    );
    // The earlier card keeps its stop as the record, says the session ended, and has no live Terminate either.
    const earlier = page.locator(`.jp-cellmate-debug[data-session-id="${stoppedCard}"][data-state="stopped"]`).first();
    await expect.poll(() => earlier.getAttribute('data-session-ended'), { timeout: 20_000 }).toBe('true');
    expect(await earlier.locator('.jp-cellmate-debug-where').innerText()).toMatch(
      /^Stopped \(breakpoint\) at debug\.ipynb cell 27 \(id loop\), line 3 — session ended$/
    );
    expect(await page.locator('.jp-cellmate-debug button.jp-cellmate-debug-terminate').count()).toBe(0);
    // The kernel's debugger is off again: so is JupyterLab's, its gutter gone.
    await expect.poll(() => loopCell.locator('.cm-breakpoint-gutter').count(), { timeout: 20_000 }).toBe(0);

    // The session is gone for the model too, and the stopped cell ran on in the kernel.
    await input.fill('Is the debugger still on?');
    await pressSend(page);
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 30_000 });
    const status = page.locator('.jp-cellmate-tool-card[data-tool-name="debug"]').last();
    await status.locator('xpath=self::*[@data-status="ok"]').waitFor({ timeout: 30_000 });
    // The card may still be updated in place after it turned ok: (re)open it until its result shows.
    await expect
      .poll(
        async () => {
          await status.evaluate((d: HTMLDetailsElement) => (d.open = true));
          return status.locator('.jp-cellmate-tool-result').innerText();
        },
        { timeout: 20_000 }
      )
      .toContain('No debug session is running in this chat.');
  });
});
