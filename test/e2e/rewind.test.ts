/**
 * Checkpoints and "Rewind to here" (HARN-6, EDIT-2), in Debian's Chromium
 * against a real JupyterLab and a real ipykernel, with the scripted model and the default
 * policy (no rule written: the test clicks "Approve once" on each card as a person does).
 * One turn edits a cell of the open notebook, runs it in the notebook's kernel, rewrites a
 * file and creates another; "Rewind to here" on that turn's message previews the restore as
 * diff cards (per cell, outputs noted), names what the kernel keeps, and Restore puts the
 * open notebook back live — every cell's source, outputs and count as they were — the file's
 * bytes back, and the created file gone; the transcript says what the kernel still holds.
 * Then JupyterLab's own undo takes back an agent's edit and its run in one step, outputs
 * included.
 */
import fs from 'node:fs/promises';
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

const NB = {
  cells: [
    {
      cell_type: 'code',
      execution_count: 1,
      id: 'load',
      metadata: {},
      outputs: [{ output_type: 'stream', name: 'stdout', text: ['3 rows\n'] }],
      source: ['rows = [1, 2, 3]\n', 'print(len(rows), "rows")']
    },
    {
      cell_type: 'code',
      execution_count: 2,
      id: 'total',
      metadata: { tags: ['sum'] },
      outputs: [{ output_type: 'execute_result', data: { 'text/plain': ['6'] }, metadata: {}, execution_count: 2 }],
      source: ['total = sum(rows)\n', 'total']
    },
    { cell_type: 'markdown', id: 'note', metadata: {}, source: ['# Notes'] }
  ],
  metadata: {
    kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' },
    language_info: { name: 'python' }
  },
  nbformat: 4,
  nbformat_minor: 5
};
const NOTES = 'first line\nsecond line\n';

const CALLS = [
  {
    toolName: 'notebook_edit',
    input: {
      path: 'analysis.ipynb',
      edits: [
        {
          action: 'replace',
          cell_id: 'total',
          source: 'scale = 10\ntotal = sum([1, 2, 3]) * scale\nprint("total is", total)'
        }
      ]
    }
  },
  { toolName: 'notebook_run', input: { path: 'analysis.ipynb', cell_ids: ['total'] } },
  { toolName: 'write', input: { path: 'notes.txt', content: 'rewritten by the agent\n' } },
  { toolName: 'write', input: { path: 'report.md', content: '# Report\n\ntotal is 60\n' } }
];
const SCRIPT = {
  turns: [
    [...CALLS.map((c) => ({ toolCalls: [c] })), { text: 'Scaled the total and wrote the report.' }],
    [
      {
        toolCalls: [
          {
            toolName: 'notebook_edit',
            input: {
              path: 'analysis.ipynb',
              edits: [{ action: 'replace', cell_id: 'load', source: 'rows = [4, 5]\nprint(len(rows), "rows")' }]
            }
          }
        ]
      },
      { toolCalls: [{ toolName: 'notebook_run', input: { path: 'analysis.ipynb', cell_ids: ['load'] } }] },
      { text: 'Changed the rows.' }
    ],
    [
      { toolCalls: [{ toolName: 'write', input: { path: 'notes.txt', content: 'the agent again\n' } }] },
      { toolCalls: [{ toolName: 'write', input: { path: 'todo.txt', content: 'check the total\n' } }] },
      { text: 'Noted.' }
    ]
  ]
};

type SharedCell = { toJSON(): Record<string, unknown> };
type App = {
  shell: { currentWidget: { content: { model: { sharedModel: { cells: SharedCell[] } } } } | null };
  commands: { execute(id: string, args?: unknown): Promise<unknown> };
};

/** A cell as nbformat means it: sources and stream texts joined, JupyterLab's in-memory `trusted` flag left out. */
const text = (v: unknown): unknown => (Array.isArray(v) ? v.join('') : v);
function normalize(c: Record<string, unknown>): Record<string, unknown> {
  const { trusted: _trusted, ...metadata } = (c.metadata ?? {}) as Record<string, unknown>;
  const outputs = (c.outputs as Array<Record<string, unknown>> | undefined)?.map((o) => {
    const out: Record<string, unknown> = { ...o };
    if ('text' in o) out.text = text(o.text);
    if (o.data && typeof o.data === 'object')
      out.data = Object.fromEntries(Object.entries(o.data).map(([k, v]) => [k, text(v)]));
    return out;
  });
  return {
    id: c.id,
    cell_type: c.cell_type,
    source: text(c.source),
    metadata,
    ...(c.cell_type === 'code' ? { outputs, execution_count: c.execution_count ?? null } : {})
  };
}

describe('"Rewind to here" restores a turn\'s notebook and file changes', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    jupyter = await startJupyter({
      files: {
        'analysis.ipynb': `${JSON.stringify(NB, null, 1)}\n`,
        'notes.txt': NOTES,
        'scripts/rewind.json': JSON.stringify(SCRIPT)
      },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/rewind.json' },
      // No policy file from the machine's home: the tier defaults apply (write and exec ask).
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

  const cells = async (): Promise<Array<Record<string, unknown>>> =>
    (
      await page.evaluate(() =>
        (window as unknown as { jupyterapp: App }).jupyterapp.shell.currentWidget!.content.model.sharedModel.cells.map(
          (c) => c.toJSON()
        )
      )
    ).map(normalize);
  const exists = (name: string): Promise<boolean> =>
    fs.stat(path.join(jupyter.workspace, name)).then(
      () => true,
      () => false
    );

  it('HARN-6 EDIT-2: the open notebook (source and outputs), the rewritten file (bytes) and the created file (gone) come back; the transcript names what the kernel keeps', async () => {
    await runCommand(page, 'docmanager:open', { path: 'analysis.ipynb' });
    await page.locator('.jp-Notebook .jp-Cell').nth(2).waitFor({ timeout: 60_000 });
    await page.waitForFunction(
      () =>
        (
          window as unknown as {
            jupyterapp: {
              shell: { currentWidget: { sessionContext?: { session?: { kernel?: { status: string } } } } };
            };
          }
        ).jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel?.status === 'idle',
      undefined,
      { timeout: 60_000 }
    );
    const original = await cells();
    expect(original).toEqual(NB.cells.map((c) => normalize(c as unknown as Record<string, unknown>)));

    await runCommand(page, 'cellmate:open-chat');
    await page.locator('.jp-cellmate-connection[data-state="connected"]').waitFor({ timeout: 30_000 });
    await page.locator('textarea.jp-cellmate-input').fill('scale the total by 10, run it, and write it down');
    await pressSend(page);
    for (const call of CALLS) await approveOnce(page, call.toolName, 90_000);
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 90_000 });
    expect(
      await page
        .locator('.jp-cellmate-tool-card')
        .evaluateAll((cards) => cards.map((c) => (c as HTMLElement).dataset.status))
    ).toEqual(['ok', 'ok', 'ok', 'ok']);
    // The turn happened: the cell ran in the notebook's kernel, the files changed.
    await page
      .locator('.jp-Notebook .jp-Cell')
      .nth(1)
      .locator('.jp-OutputArea-output', { hasText: 'total is 60' })
      .waitFor({ timeout: 30_000 });
    expect(await fs.readFile(path.join(jupyter.workspace, 'notes.txt'), 'utf8')).toBe('rewritten by the agent\n');
    expect(await exists('report.md')).toBe(true);

    // The turn's message offers the rewind once the turn has ended.
    const message = page.locator('.jp-cellmate-user').first();
    const rewindButton = message.locator('button.jp-cellmate-rewind-here');
    await rewindButton.waitFor({ state: 'visible', timeout: 30_000 });
    // `/rewind` opens the same preview under that message; Cancel closes it, nothing written.
    const composer = page.locator('textarea.jp-cellmate-input');
    await composer.fill('/rewind');
    // As a person does: the list offers the command, Enter takes it (`/rewind `), the next Enter runs it.
    await expect
      .poll(() =>
        page
          .locator('ul.jp-cellmate-slash-commands:not([hidden]) li.jp-cellmate-mention')
          .first()
          .getAttribute('data-name')
      )
      .toBe('rewind');
    await composer.press('Enter');
    expect(await composer.inputValue()).toBe('/rewind ');
    await composer.press('Enter');
    await message.locator('.jp-cellmate-rewind[data-state="preview"]').waitFor({ timeout: 30_000 });
    await message.locator('button.jp-cellmate-rewind-cancel').click();
    expect(await message.locator('.jp-cellmate-rewind').count()).toBe(0);
    expect(await fs.readFile(path.join(jupyter.workspace, 'notes.txt'), 'utf8')).toBe('rewritten by the agent\n');

    await rewindButton.click();
    const box = message.locator('.jp-cellmate-rewind[data-state="preview"]');
    await box.waitFor({ timeout: 30_000 });
    // The preview is the diff cards: the notebook per cell (source back, outputs noted), the file, the created file.
    expect(
      await box
        .locator('.jp-cellmate-diff-file')
        .evaluateAll((f) => f.map((n) => (n as HTMLElement).dataset.path).sort())
    ).toEqual(['analysis.ipynb', 'notes.txt', 'report.md']);
    const nbDiff = box.locator('.jp-cellmate-diff-file[data-path="analysis.ipynb"]');
    expect(await nbDiff.locator('.jp-cellmate-diff-cell').allTextContents()).toEqual([
      'Cell 2 (id total) — outputs restored'
    ]);
    expect(await nbDiff.locator('.jp-cellmate-diff-add').allTextContents()).toEqual([
      '+total = sum(rows)\n',
      '+total\n'
    ]);
    expect(
      await box.locator('.jp-cellmate-diff-file[data-path="notes.txt"] .jp-cellmate-diff-add').allTextContents()
    ).toEqual(['+first line\n', '+second line\n']);
    expect(await box.locator('.jp-cellmate-rewind-file[data-action="remove"]').textContent()).toBe(
      'report.md will be deleted (the turn created it).'
    );
    expect(await box.locator('.jp-cellmate-rewind-kernel').textContent()).toBe(
      "The kernel's state is not rewound: it keeps scale, total, set by the cells being undone."
    );
    // No conflict: nothing offers to overwrite.
    expect(await box.locator('button.jp-cellmate-rewind-overwrite').isVisible()).toBe(false);
    await box.scrollIntoViewIfNeeded();
    await screenshot(page, 'rewind-preview');

    await box.locator('button.jp-cellmate-rewind-restore').click();
    await message.locator('.jp-cellmate-rewind[data-state="done"]').waitFor({ timeout: 30_000 });

    // The open notebook is back, live: every cell's id, source, metadata, outputs and count.
    await expect.poll(cells, { timeout: 20_000 }).toEqual(original);
    await page
      .locator('.jp-Notebook .jp-Cell')
      .nth(1)
      .locator('.jp-OutputArea-output', { hasText: '6' })
      .waitFor({ timeout: 10_000 });
    expect(
      await page
        .locator('.jp-Notebook .jp-Cell')
        .nth(1)
        .locator('.jp-OutputArea-output', { hasText: 'total is 60' })
        .count()
    ).toBe(0);
    // The file's bytes are back; the file the turn created is gone; the notebook on disk was never touched.
    expect(await fs.readFile(path.join(jupyter.workspace, 'notes.txt'), 'utf8')).toBe(NOTES);
    expect(await exists('report.md')).toBe(false);
    expect(await fs.readFile(path.join(jupyter.workspace, 'analysis.ipynb'), 'utf8')).toBe(
      `${JSON.stringify(NB, null, 1)}\n`
    );
    // The transcript says what was restored and what the kernel still holds.
    const note = page.locator('.jp-cellmate-notice .jp-cellmate-notice-text').last();
    await expect
      .poll(() => note.textContent(), { timeout: 10_000 })
      .toMatch(
        /^Restored .*analysis\.ipynb.*\. The kernel's state is not rewound: it still holds scale, total, set by the undone cells\./
      );
    // Nothing is left to rewind for that turn.
    await expect.poll(() => rewindButton.isVisible(), { timeout: 10_000 }).toBe(false);
    await screenshot(page, 'rewind-done');
  });

  it('Ctrl+Z after an agent edit and its run takes both back in one step, outputs included (never mixed)', async () => {
    const before = await cells();
    await page.locator('textarea.jp-cellmate-input').fill('change the rows');
    await pressSend(page);
    await approveOnce(page, 'notebook_edit', 90_000);
    await approveOnce(page, 'notebook_run', 90_000);
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 90_000 });
    const ran = await cells();
    expect(ran[0]).toMatchObject({
      source: 'rows = [4, 5]\nprint(len(rows), "rows")',
      outputs: [{ output_type: 'stream', name: 'stdout', text: '2 rows\n' }]
    });
    // The person undoes in the notebook (command mode `z`, JupyterLab's own undo): one step
    // takes back the edit and the run — every cell's source and outputs as they were, none of
    // the run's output left beside them. (The count the edit cleared stays empty: the kernel
    // wrote a count outside the undo history, and Yjs then keeps the newer map entry — the
    // rewind above restores counts too.)
    await page.locator('.jp-Notebook .jp-Cell').first().locator('.jp-InputPrompt').click();
    await page.keyboard.press('Escape');
    await page.keyboard.press('z');
    const withoutCounts = (list: Array<Record<string, unknown>>) =>
      list.map(({ execution_count: _count, ...rest }) => rest);
    await expect.poll(async () => withoutCounts(await cells()), { timeout: 10_000 }).toEqual(withoutCounts(before));
  });

  it('HARN-6: a file the person changed after the agent is called out in the preview and kept unless they choose to overwrite it', async () => {
    await page.locator('textarea.jp-cellmate-input').fill('note it down');
    await pressSend(page);
    await approveOnce(page, 'write', 90_000);
    await approveOnce(page, 'write', 90_000);
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 90_000 });
    // The person edits the agent's file afterwards.
    await fs.writeFile(path.join(jupyter.workspace, 'notes.txt'), 'the agent again\nand my own line\n');
    const message = page.locator('.jp-cellmate-user').last();
    const undo = message.locator('button.jp-cellmate-undo-turn');
    await undo.waitFor({ state: 'visible', timeout: 30_000 });
    await undo.click();
    const box = message.locator('.jp-cellmate-rewind[data-state="preview"]');
    await box.waitFor({ timeout: 30_000 });
    expect(await box.locator('.jp-cellmate-rewind-state').textContent()).toBe(
      "2 files to restore; 1 changed since the agent's edit (kept unless you choose to overwrite)."
    );
    expect(await box.locator('.jp-cellmate-rewind-file[data-action="conflict"]').textContent()).toBe(
      'notes.txt: it was changed after the agent changed it (by you, or something else). Restoring it would overwrite that change.'
    );
    expect(await box.locator('button.jp-cellmate-rewind-overwrite').isVisible()).toBe(true);
    await screenshot(page, 'rewind-conflict');
    await box.locator('button.jp-cellmate-rewind-restore', { hasText: 'Restore, keep my changes' }).click();
    await message.locator('.jp-cellmate-rewind[data-state="done"]').waitFor({ timeout: 30_000 });
    expect(await fs.readFile(path.join(jupyter.workspace, 'notes.txt'), 'utf8')).toBe(
      'the agent again\nand my own line\n'
    );
    expect(await exists('todo.txt')).toBe(false);
    expect(await message.locator('.jp-cellmate-rewind-state').textContent()).toMatch(
      /^Restored todo\.txt to before the agent's changes\. Left as they are: notes\.txt\./
    );
  });
});
