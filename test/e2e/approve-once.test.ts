/**
 * "Approve once" on a fresh policy, in Debian's Chromium against a real JupyterLab with the
 * scripted model: no policy rule is written; each write/exec call asks with a real approval
 * card, the test clicks "Approve once" as a person does, and the change lands on disk —
 * `notebook_edit` (cell source), `write`, `edit` and `shell`. Each card's tool call ends
 * "ok", not withheld or denied. The notebook_edit card shows the cell's diff (screenshots in
 * light and dark), raw arguments one click away; answered cards collapse to one line. The
 * card's timer waits while the person decides and shows that wait apart from run time.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { approveOnce, openPane, pressSend, screenshot, screenshotIfFailed, setTheme } from '../support/browser';
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
    { cell_type: 'code', execution_count: null, id: 'total', metadata: {}, outputs: [], source: ['total = sum(rows)'] }
  ],
  metadata: {
    kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' },
    language_info: { name: 'python' }
  },
  nbformat: 4,
  nbformat_minor: 5
};

const CALLS = [
  {
    toolName: 'notebook_edit',
    input: {
      path: 'analysis.ipynb',
      edits: [{ action: 'replace', cell_id: 'total', source: 'total = sum(rows) / len(rows)' }]
    }
  },
  { toolName: 'write', input: { path: 'notes/summary.md', content: '# Summary\n\nMean computed.\n' } },
  { toolName: 'edit', input: { path: 'config.py', old_string: 'DEBUG = True', new_string: 'DEBUG = False' } },
  { toolName: 'shell', input: { command: 'echo approved > shell-ran.txt' } }
];
const SCRIPT = { turns: [[...CALLS.map((c) => ({ toolCalls: [c] })), { text: 'All four changes are made.' }]] };

describe('"Approve once" on a fresh policy makes each write/exec tool do its work', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    jupyter = await startJupyter({
      files: {
        'analysis.ipynb': `${JSON.stringify(NB, null, 1)}\n`,
        'config.py': 'DEBUG = True\nNAME = "demo"\n',
        'scripts/approve.json': JSON.stringify(SCRIPT)
      },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/approve.json' },
      // No policy file from the machine's home: the tier defaults apply (write and exec ask).
      env: { CELLMATE_POLICY: '/nonexistent/cellmate-policy.json' }
    });
    ({ browser, page } = await openPane(jupyter.labUrl));
  });

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
  });

  const read = (name: string): Promise<string> => fs.readFile(path.join(jupyter.workspace, name), 'utf8');

  it('notebook_edit, write, edit and shell each ask once and, approved once, change the files', async () => {
    expect(
      await fs.stat(path.join(jupyter.workspace, '.cellmate', 'policy.json')).catch(() => undefined)
    ).toBeUndefined();
    await page.locator('textarea.jp-cellmate-input').fill('compute the mean, note it, turn off debug, mark the run');
    await pressSend(page);
    // The notebook_edit card shows the cell's change, not escaped JSON; raw arguments fold away.
    const nbCard = page.locator(
      '.jp-cellmate-question[data-type="approval"][data-tool="notebook_edit"][data-state="pending"]'
    );
    await nbCard.waitFor({ timeout: 60_000 });
    const preview = nbCard.locator('.jp-cellmate-question-preview');
    expect(await preview.locator('.jp-cellmate-diff-summary').textContent()).toBe(
      'notebook_edit · analysis.ipynb cell 2'
    );
    expect(await preview.locator('.jp-cellmate-diff-cell').allTextContents()).toEqual(['Cell 2 (id total)']);
    expect(await preview.locator('.jp-cellmate-diff-del').allTextContents()).toEqual(['-total = sum(rows)\n']);
    expect(await preview.locator('.jp-cellmate-diff-add').allTextContents()).toEqual([
      '+total = sum(rows) / len(rows)\n'
    ]);
    expect(await nbCard.locator('.jp-cellmate-question-raw .jp-cellmate-question-args').isVisible()).toBe(false);
    await nbCard.locator('.jp-cellmate-question-raw > summary').click();
    expect(await nbCard.locator('.jp-cellmate-question-args').textContent()).toContain('"cell_id": "total"');
    await nbCard.locator('.jp-cellmate-question-raw > summary').click();
    // While the card waits for the person, the tool's timer does not count: it says so.
    const nbTool = page.locator('.jp-cellmate-tool-card[data-tool-name="notebook_edit"]');
    expect(await nbTool.locator('.jp-cellmate-tool-duration').textContent()).toBe('waiting for you');
    await nbCard.scrollIntoViewIfNeeded();
    await screenshot(page, 'approval-notebook-edit-light');
    await setTheme(page, 'JupyterLab Dark');
    await screenshot(page, 'approval-notebook-edit-dark');
    await setTheme(page, 'JupyterLab Light');

    for (const call of CALLS) {
      await approveOnce(page, call.toolName);
      await page
        .locator(`.jp-cellmate-tool-card[data-tool-name="${call.toolName}"]:not([data-status="running"])`)
        .waitFor({ timeout: 60_000 });
      expect(
        await page.locator(`.jp-cellmate-tool-card[data-tool-name="${call.toolName}"]`).getAttribute('data-status')
      ).toBe('ok');
    }
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 60_000 });
    expect(await page.locator('.jp-cellmate-question[data-type="approval"]').count()).toBe(CALLS.length);
    // Its run time is shown apart from the seconds it waited for the person (screenshots, themes).
    const timing = (await nbTool.locator('.jp-cellmate-tool-duration').textContent()) ?? '';
    const [, run, waited] = /^([\d.]+ (?:ms|s)) · waited ([\d.]+) s for you$/.exec(timing) ?? [];
    expect(run, timing).toBeDefined();
    expect(Number(waited)).toBeGreaterThanOrEqual(1);
    // Each card says in words what "Always" would allow (no escaped glob).
    expect(
      await page.locator('.jp-cellmate-question[data-type="approval"] .jp-cellmate-question-pattern').allTextContents()
    ).toEqual([
      '"Always" allows: notebook_edit on analysis.ipynb',
      '"Always" allows: write on notes/summary.md',
      '"Always" allows: edit on config.py',
      '"Always" allows: shell: echo approved'
    ]);

    // Answered cards collapse to one line saying what was decided about what.
    const answered = page.locator('.jp-cellmate-question[data-type="approval"][data-state="answered"]');
    expect(await answered.locator('.jp-cellmate-question-status').allTextContents()).toEqual([
      'Approved once · notebook_edit · analysis.ipynb cell 2',
      'Approved once · write · notes/summary.md (new file)',
      'Approved once · edit · config.py',
      'Approved once · shell: echo approved'
    ]);
    expect(await answered.first().locator('.jp-cellmate-question-preview').isVisible()).toBe(false);
    expect((await answered.first().boundingBox())!.height).toBeLessThan(60);
    await screenshot(page, 'approval-cards-answered');

    const nb = JSON.parse(await read('analysis.ipynb')) as typeof NB;
    expect(nb.cells.map((c) => [c.source].flat().join(''))).toEqual([
      'rows = [1, 2, 3]\nprint(len(rows), "rows")',
      'total = sum(rows) / len(rows)'
    ]);
    // The untouched cell keeps its output.
    expect(nb.cells[0]!.outputs).toEqual(NB.cells[0]!.outputs);
    expect(await read('notes/summary.md')).toBe('# Summary\n\nMean computed.\n');
    expect(await read('config.py')).toBe('DEBUG = False\nNAME = "demo"\n');
    expect(await read('shell-ran.txt')).toBe('approved\n');
  });
});
