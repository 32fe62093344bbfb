/**
 * Issue #9: edits on an OPEN notebook mean what they mean on disk — one planner
 * (`@cellmate/protocol` `planNotebookEdits`) applied by both paths. In Debian's Chromium
 * against a real JupyterLab with the scripted model, the same `notebook_edit` (replace a
 * code cell, move one, delete one) goes to an open notebook and to a closed copy; the open
 * document's cells (shared model) equal the file's cells afterwards: the replaced code cell
 * lost its outputs and execution count in both, its id and metadata stayed, the moved and
 * deleted cells are where the planner put them; the notebook shows no output for the
 * replaced cell; one undo step reverts the open edit. No policy rule is written: each edit asks,
 * its card shows the change read from the open document cell by cell, and the test clicks
 * "Approve once". Runs twice: on JupyterLab's plain
 * document model and with real-time collaboration on (jupyter-collaboration's shared
 * Yjs documents: the document model is `collaborative`).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
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
  screenshotIfFailed
} from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';

const code = (
  id: string,
  source: string[],
  count: number | null,
  outputs: unknown[],
  metadata: Record<string, unknown> = {}
) => ({ cell_type: 'code', execution_count: count, id, metadata, outputs, source });
const NB = {
  cells: [
    code(
      'load',
      ['x = 1\n', 'print("old load")'],
      4,
      [{ output_type: 'stream', name: 'stdout', text: ['old load\n'] }],
      { tags: ['keep-me'] }
    ),
    { cell_type: 'markdown', id: 'note', metadata: {}, source: ['# Notes'] },
    code('plot', ['print(x)'], 5, [{ output_type: 'stream', name: 'stdout', text: ['plot out\n'] }]),
    code('tail', ['y = 2'], 6, [])
  ],
  metadata: {
    kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' },
    language_info: { name: 'python' }
  },
  nbformat: 4,
  nbformat_minor: 5
};
const EDITS = [
  { action: 'replace', cell_id: 'load', source: 'x = 10' },
  { action: 'move', cell_id: 'tail', to_index: 0 },
  { action: 'delete', cell_id: 'note' }
];
const edit = (p: string) => [
  { toolCalls: [{ toolName: 'notebook_edit', input: { path: p, edits: EDITS } }] },
  { text: `Edited ${p}.` }
];
const SCRIPT = { turns: [edit('open.ipynb'), edit('closed.ipynb')] };

/**
 * The comparable view of a cell: nbformat-equivalent (multiline strings joined; JupyterLab's
 * in-memory `metadata.trusted` flag, which it never writes to disk, left out).
 */
type Cell = {
  id: string;
  cell_type: string;
  source: string;
  metadata: Record<string, unknown>;
  outputs?: unknown[];
  execution_count?: number | null;
};
const text = (v: unknown): unknown => (Array.isArray(v) ? v.join('') : v);
const normalize = (c: Record<string, unknown>): Cell => {
  const { trusted: _trusted, ...metadata } = c.metadata as Record<string, unknown>;
  return {
    id: c.id as string,
    cell_type: c.cell_type as string,
    source: text(c.source) as string,
    metadata,
    ...(c.cell_type === 'code'
      ? {
          outputs: (c.outputs as Array<Record<string, unknown>>).map((o) =>
            'text' in o ? { ...o, text: text(o.text) } : o
          ),
          execution_count: c.execution_count as number | null
        }
      : {})
  };
};

type App = {
  shell: {
    currentWidget: {
      content: { model: { sharedModel: { cells: Array<{ toJSON(): Record<string, unknown>; getSource(): string }> } } };
      context: { path: string; model: { collaborative: boolean } };
    } | null;
  };
};

describe.each([
  { collaboration: false, label: 'plain document model' },
  { collaboration: true, label: 'real-time collaboration (jupyter-collaboration)' }
])('notebook_edit on an open notebook equals the disk path — $label (issue #9)', ({ collaboration }) => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    jupyter = await startJupyter({
      collaboration,
      files: {
        'open.ipynb': JSON.stringify(NB, null, 1),
        'closed.ipynb': JSON.stringify(NB, null, 1),
        'scripts/edits.json': JSON.stringify(SCRIPT)
      },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/edits.json' },
      // The default policy: each notebook_edit asks, and the test approves it once as a person does.
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

  const openCells = () =>
    page.evaluate(() =>
      (window as unknown as { jupyterapp: App }).jupyterapp.shell.currentWidget!.content.model.sharedModel.cells.map(
        (c) => c.toJSON()
      )
    );

  /** Sends `text`, clicks "Approve once" on the notebook_edit card, waits for the turn to end. */
  const send = async (text: string): Promise<void> => {
    await page.locator('textarea.jp-cellmate-input').fill(text);
    await pressSend(page);
    await approveOnce(page, 'notebook_edit');
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 60_000 });
  };

  it('replace clears the outputs exactly as on disk; move and delete land where the planner puts them', async () => {
    await runCommand(page, 'docmanager:open', { path: 'open.ipynb' });
    await page.locator('.jp-Notebook .jp-Cell').nth(3).waitFor({ timeout: 60_000 });
    // The RTC run really edits jupyter-collaboration's shared document.
    const collaborative = await page.evaluate(
      () => (window as unknown as { jupyterapp: App }).jupyterapp.shell.currentWidget!.context.model.collaborative
    );
    expect(collaborative).toBe(collaboration);
    await page
      .locator('.jp-Notebook .jp-Cell')
      .first()
      .locator('.jp-OutputArea-output', { hasText: 'old load' })
      .waitFor({ timeout: 30_000 });

    await openChat(page);
    await send('edit the open notebook');
    // The card showed the change read from the open document, cell by cell.
    const asked = page.locator('.jp-cellmate-question[data-tool="notebook_edit"]').last();
    expect(await asked.locator('.jp-cellmate-diff-summary').textContent()).toBe('notebook_edit · open.ipynb (3 cells)');
    expect(await asked.locator('.jp-cellmate-diff-note').allTextContents()).toEqual([
      ' — moved from 4 to 1',
      ' — outputs cleared',
      ' — cell deleted'
    ]);
    expect(await asked.locator('.jp-cellmate-diff-add').allTextContents()).toEqual(['+x = 10\n']);
    const openCard = page.locator('.jp-cellmate-tool-card[data-tool-name="notebook_edit"]').last();
    expect(await openCard.getAttribute('data-status')).toBe('ok');
    expect(await openCard.textContent()).toContain('in the open notebook');
    await send('edit the closed notebook');
    const closedCard = page.locator('.jp-cellmate-tool-card[data-tool-name="notebook_edit"]').last();
    expect(await closedCard.textContent()).toContain('on disk');

    const open = (await openCells()).map(normalize);
    const disk = (
      JSON.parse(await fs.readFile(path.join(jupyter.workspace, 'closed.ipynb'), 'utf8')).cells as Array<
        Record<string, unknown>
      >
    ).map(normalize);
    expect(open).toEqual(disk);
    expect(open.map((c) => c.id)).toEqual(['tail', 'load', 'plot']);
    expect(open[1]).toEqual({
      id: 'load',
      cell_type: 'code',
      source: 'x = 10',
      metadata: { tags: ['keep-me'] },
      outputs: [],
      execution_count: null
    });
    expect(open[2]!.outputs).toHaveLength(1); // untouched cells keep their outputs

    // What the user sees: the replaced cell has no output and no execution count any more.
    const loadCell = page.locator('.jp-Notebook .jp-Cell').nth(1);
    await loadCell.locator('.jp-OutputArea-output').waitFor({ state: 'detached', timeout: 10_000 });
    expect(await loadCell.locator('.jp-InputPrompt').innerText()).not.toContain('4');
    await page
      .locator('.jp-Notebook .jp-Cell')
      .nth(2)
      .locator('.jp-OutputArea-output', { hasText: 'plot out' })
      .waitFor({ timeout: 10_000 });
    await screenshot(page, `notebook-edits-open${collaboration ? '-rtc' : ''}`);
  });

  it('one undo step reverts the whole edit in the open notebook (sources and order)', async () => {
    const sources = () =>
      page.evaluate(() =>
        (window as unknown as { jupyterapp: App }).jupyterapp.shell.currentWidget!.content.model.sharedModel.cells.map(
          (c) => c.getSource()
        )
      );
    await page.locator('.jp-Notebook .jp-Cell').first().locator('.jp-InputPrompt').click();
    await page.keyboard.press('Escape');
    await page.keyboard.press('z');
    await page.waitForFunction(
      () =>
        (window as unknown as { jupyterapp: App }).jupyterapp.shell.currentWidget!.content.model.sharedModel.cells
          .length === 4,
      undefined,
      { timeout: 10_000 }
    );
    expect(await sources()).toEqual(NB.cells.map((c) => c.source.join('')));
  });
});
