/**
 * SPEC EDIT-3 in Debian's Chromium against a real JupyterLab with the scripted model: an
 * `ast_edit` staged by the model shows its diff on the tool card (per file; per cell for a
 * notebook, collapsible) with Accept / Discard. Discard leaves every file untouched; Accept
 * (on a second staged edit) writes them all — the person resolves instead of the model —
 * and the notebook, open in JupyterLab by then, changes in its open document (outputs kept).
 * No policy rule is written: each `ast_edit` asks, and the test clicks "Approve once" on its
 * card as a person does, which must stage the rewrite in the notebook and both `.py` files.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import {
  approveOnce,
  minContrast,
  openPane,
  pressSend,
  runCommand,
  screenshot,
  screenshotIfFailed,
  setTheme
} from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';

const NB = {
  cells: [
    {
      cell_type: 'code',
      execution_count: 2,
      id: 'c1',
      metadata: { tags: ['keep'] },
      outputs: [{ output_type: 'stream', name: 'stdout', text: ['done\n'] }],
      source: ['r = fetch("a", 1)\n', 'print(r)']
    },
    { cell_type: 'code', execution_count: null, id: 'c2', metadata: {}, outputs: [], source: ['x = 1'] }
  ],
  metadata: {
    kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' },
    language_info: { name: 'python' }
  },
  nbformat: 4,
  nbformat_minor: 5
};
const FILES: Record<string, string> = {
  'src/a.py': 'def go(u):\n    return fetch(u, 5)\n',
  'src/b.py': 'import a\nfetch("x", 7)\n',
  'nb.ipynb': `${JSON.stringify(NB, null, 1)}\n`
};
const stage = [
  { toolCalls: [{ toolName: 'ast_edit', input: { pattern: 'fetch($U, $T)', rewrite: 'fetch($U, timeout=$T)' } }] },
  { text: 'Staged; review the diff.' }
];
const SCRIPT = { turns: [stage, stage] };

type App = {
  shell: {
    currentWidget: {
      content: { model: { sharedModel: { cells: Array<{ toJSON(): Record<string, unknown> }> } } };
    } | null;
  };
};

describe('the diff card of a staged edit (EDIT-3)', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    jupyter = await startJupyter({
      files: {
        ...FILES,
        'scripts/ast.json': JSON.stringify(SCRIPT)
      },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/ast.json' },
      // No policy file from the machine's home: the tier defaults apply (ast_edit → ask).
      env: { CELLMATE_POLICY: '/nonexistent/cellmate-policy.json' }
    });
    ({ browser, page } = await openPane(jupyter.labUrl));
  });

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
  });

  /** Sends `text`, answers the ast_edit's approval card with "Approve once" and waits for the turn to end. */
  const stageApprovedOnce = async (text: string): Promise<void> => {
    await page.locator('textarea.jp-cellmate-input').fill(text);
    await pressSend(page);
    await approveOnce(page, 'ast_edit');
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 60_000 });
  };

  const disk = async (): Promise<Record<string, string>> => {
    const out: Record<string, string> = {};
    for (const name of Object.keys(FILES)) out[name] = await fs.readFile(path.join(jupyter.workspace, name), 'utf8');
    return out;
  };

  it('shows the diff per file and per cell; Discard leaves the files untouched', async () => {
    await stageApprovedOnce('add timeouts');
    const card = page.locator('.jp-cellmate-tool-card[data-tool-name="ast_edit"]').last();
    expect(await card.getAttribute('data-status')).toBe('ok');
    const diff = card.locator('.jp-cellmate-diff');
    await diff.waitFor({ timeout: 10_000 });
    expect(await diff.locator('.jp-cellmate-diff-summary').textContent()).toBe(
      '(proposed) 3 replacements in 3 files (1 notebook)'
    );
    expect(await diff.locator('.jp-cellmate-diff-file > summary').allTextContents()).toEqual([
      'nb.ipynb',
      'src/a.py',
      'src/b.py'
    ]);
    const nbFile = diff.locator('.jp-cellmate-diff-file[data-path="nb.ipynb"]');
    expect(await nbFile.locator('.jp-cellmate-diff-cell').allTextContents()).toEqual(['Cell 1 (id c1)']);
    expect(await nbFile.locator('.jp-cellmate-diff-del').allTextContents()).toEqual(['-r = fetch("a", 1)\n']);
    expect(await nbFile.locator('.jp-cellmate-diff-add').allTextContents()).toEqual(['+r = fetch("a", timeout=1)\n']);
    expect(
      await diff.locator('.jp-cellmate-diff-file[data-path="src/a.py"] .jp-cellmate-diff-add').allTextContents()
    ).toEqual(['+    return fetch(u, timeout=5)\n']);
    // Collapsible: a file's diff folds.
    await diff.locator('.jp-cellmate-diff-file[data-path="src/a.py"] > summary').click();
    expect(await diff.locator('.jp-cellmate-diff-file[data-path="src/a.py"] .jp-cellmate-diff-hunks').isVisible()).toBe(
      false
    );
    await screenshot(page, 'structural-edit-diff');
    // Accept and Discard are JupyterLab's primary and secondary buttons (not grey look-alikes).
    const [acceptBg, discardBg, brand] = await diff.evaluate((node) => {
      const bg = (label: string): string =>
        getComputedStyle([...node.querySelectorAll('button')].find((b) => b.textContent === label)!).backgroundColor;
      const probe = document.createElement('div');
      probe.style.color = 'var(--jp-brand-color1)';
      document.body.appendChild(probe);
      const brandColour = getComputedStyle(probe).color;
      probe.remove();
      return [bg('Accept'), bg('Discard'), brandColour];
    });
    expect(acceptBg).toBe(brand);
    expect(discardBg).not.toBe(brand);
    // Added and removed lines keep a readable contrast (WCAG AA, 4.5:1) in light and dark themes.
    const checkTheme = async (name: 'light' | 'dark'): Promise<void> => {
      expect(await minContrast(page, '.jp-cellmate-diff-add')).toBeGreaterThanOrEqual(4.5);
      expect(await minContrast(page, '.jp-cellmate-diff-del')).toBeGreaterThanOrEqual(4.5);
      await screenshot(page, `structural-edit-diff-${name}`);
    };
    await checkTheme('light');
    await setTheme(page, 'JupyterLab Dark');
    await checkTheme('dark');
    await setTheme(page, 'JupyterLab Light');

    await diff.getByRole('button', { name: 'Discard' }).click();
    await page.locator('.jp-cellmate-diff[data-state="discarded"]').waitFor({ timeout: 10_000 });
    expect(await diff.locator('.jp-cellmate-diff-state').textContent()).toMatch(
      /^Discarded edit_[0-9a-f]+_1: nothing was written/
    );
    expect(await diff.getByRole('button').count()).toBe(0);
    expect(await disk()).toEqual(FILES);
  });

  it('Accept writes every file of the edit; the open notebook shows the change', async () => {
    await runCommand(page, 'docmanager:open', { path: 'nb.ipynb' });
    await page.locator('.jp-Notebook .jp-Cell').nth(1).waitFor({ timeout: 60_000 });
    await stageApprovedOnce('again');
    const diff = page.locator('.jp-cellmate-tool-card[data-tool-name="ast_edit"]').last().locator('.jp-cellmate-diff');
    await diff.waitFor({ timeout: 10_000 });
    await diff.getByRole('button', { name: 'Accept' }).click();
    await page.locator('.jp-cellmate-diff[data-state="accepted"]').waitFor({ timeout: 10_000 });
    expect(await diff.locator('.jp-cellmate-diff-state').textContent()).toMatch(
      /^Applied edit_[0-9a-f]+_2: 3 replacements in 3 files/
    );
    const after = await disk();
    expect(after['src/a.py']).toBe('def go(u):\n    return fetch(u, timeout=5)\n');
    expect(after['src/b.py']).toBe('import a\nfetch("x", timeout=7)\n');
    // The open notebook changed through its document (saved when the user saves), not on disk.
    const cells = await page.evaluate(() =>
      (window as unknown as { jupyterapp: App }).jupyterapp.shell.currentWidget!.content.model.sharedModel.cells.map(
        (c) => c.toJSON()
      )
    );
    expect(cells.map((c) => (Array.isArray(c.source) ? c.source.join('') : c.source))).toEqual([
      'r = fetch("a", timeout=1)\nprint(r)',
      'x = 1'
    ]);
    // The output stayed (the shared model joins multiline strings).
    expect(cells[0]!.outputs).toEqual([{ output_type: 'stream', name: 'stdout', text: 'done\n' }]);
    expect(after['nb.ipynb']).toBe(FILES['nb.ipynb']);
    await page
      .locator('.jp-Notebook .jp-Cell')
      .first()
      .locator('.jp-InputArea', { hasText: 'timeout=1' })
      .waitFor({ timeout: 10_000 });
    await screenshot(page, 'structural-edit-accepted');
    // Decided: the buttons are gone and the state line says what was written.
    expect(await diff.getByRole('button').count()).toBe(0);
  });
});
