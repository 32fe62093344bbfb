/**
 * Fix / Explain on a failing cell (issue #27 item 1), in Debian's Chromium against a real
 * JupyterLab and ipykernel with the scripted model, on the default policy. Cell 5 raises
 * `KeyError: 'revenue'` because cell 2 built the column as `revnue`.
 * 1. "Explain" under cell 5's traceback starts a read-only turn: the recorded request
 *    declares no tool that writes or runs, the scripted model's attempt to edit is refused,
 *    and the notebook (the document in the browser and the file) stays byte-identical.
 * 2. "Fix with Cellmate" under the same traceback starts a turn whose recorded request
 *    carries the traceback, where the failing line's names come from and the kernel's
 *    facts (the `revnue` column); the scripted turn inspects in the kernel, edits cell 2
 *    (its diff on the approval card, approved once as a person does), re-runs cells 2–5,
 *    and the notebook ends without an error.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { approveOnce, openPane, runCommand, screenshot, screenshotIfFailed, setTheme } from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';

const code = (id: string, source: string) => ({
  cell_type: 'code',
  id,
  metadata: {},
  source,
  outputs: [],
  execution_count: null
});
const NB = {
  cells: [
    code('load', 'import pandas as pd\nraw = pd.DataFrame({"units": [3, 5, 2], "price": [10.0, 4.5, 20.0]})'),
    code('build', 'sales = raw.copy()\nsales["revnue"] = sales["units"] * sales["price"]'),
    code('label', 'sales["month"] = ["jan", "feb", "mar"]'),
    code('rank', 'top = sales.sort_values("units", ascending=False)'),
    code('report', 'total = top["revenue"].sum()\nprint(f"total revenue {total:.1f}")')
  ],
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  nbformat: 4,
  nbformat_minor: 5
};
const FIXED_BUILD = 'sales = raw.copy()\nsales["revenue"] = sales["units"] * sales["price"]';

const SCRIPT = {
  turns: [
    // Explain: the model tries to edit anyway; the read-only turn has no such tool.
    [
      {
        toolCalls: [
          {
            toolName: 'notebook_edit',
            input: { path: 'sales.ipynb', edits: [{ action: 'replace', cell_id: 'build', source: FIXED_BUILD }] }
          }
        ]
      },
      { text: 'Cell 2 names the column `revnue`; cell 5 asks for `revenue`. Rename it in cell 2.' }
    ],
    // Fix: inspect, edit the cell where the cause lies, re-run from there.
    [
      {
        text: 'Let me check what cell 2 built.',
        toolCalls: [
          {
            toolName: 'eval',
            input: { description: 'Look at the columns cell 2 built', code: 'print(list(sales.columns))' }
          }
        ]
      },
      {
        toolCalls: [
          {
            toolName: 'notebook_edit',
            input: { path: 'sales.ipynb', edits: [{ action: 'replace', cell_id: 'build', source: FIXED_BUILD }] }
          }
        ]
      },
      { toolCalls: [{ toolName: 'notebook_run', input: { path: 'sales.ipynb', cell_ids: ['#2', '#3', '#4', '#5'] } }] },
      { text: 'The cause was in cell 2: it named the column `revnue`. Fixed there and re-ran cells 2–5.' }
    ]
  ]
};

type Prompt = { turn: number; step: number; tools: string[]; prompt: Array<{ role: string; content: unknown }> };
type NotebookApp = {
  shell: {
    currentWidget: {
      context: { save(): Promise<void> };
      content: {
        model: {
          sharedModel: {
            toJSON(): unknown;
            cells: Array<{
              getSource(): string;
              toJSON(): { outputs?: Array<{ output_type: string; text?: string | string[] }> };
            }>;
          };
        };
      };
      sessionContext: { session?: { kernel?: { status: string } } };
    } | null;
  };
};

describe('Fix / Explain on a failing cell (issue #27 item 1)', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;
  let log: string;

  beforeAll(async () => {
    log = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'cellmate-assist-log-')), 'prompts.jsonl');
    jupyter = await startJupyter({
      files: { 'sales.ipynb': JSON.stringify(NB, null, 1), 'scripts/assist.json': JSON.stringify(SCRIPT) },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/assist.json' },
      // The default policy: notebook_edit and notebook_run ask; the person approves each once.
      env: { CELLMATE_SCRIPT_LOG: log, CELLMATE_POLICY: '/nonexistent/cellmate-policy.json' }
    });
    ({ browser, page } = await openPane(jupyter.labUrl, { width: 1500, height: 950 }));
    await runCommand(page, 'docmanager:open', { path: 'sales.ipynb' });
    await page.waitForFunction(
      () =>
        (window as unknown as { jupyterapp: NotebookApp }).jupyterapp.shell.currentWidget?.sessionContext?.session
          ?.kernel?.status === 'idle',
      undefined,
      { timeout: 60_000 }
    );
    await runCommand(page, 'notebook:run-all-cells');
    await page
      .locator('.jp-Notebook .jp-Cell')
      .nth(4)
      .locator('.jp-OutputArea-output', { hasText: 'KeyError' })
      .waitFor({ timeout: 60_000 });
    // Saved with the error, so the file on disk is the baseline Explain must not change.
    await page.evaluate(() =>
      (window as unknown as { jupyterapp: NotebookApp }).jupyterapp.shell.currentWidget!.context.save()
    );
    await page
      .locator('.jp-cellmate-kernel-binding[data-origin="notebook"]', { hasText: 'sales.ipynb' })
      .waitFor({ timeout: 30_000 });
  }, 180_000);

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
  });

  const prompts = async (): Promise<Prompt[]> =>
    (await fs.readFile(log, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Prompt);
  const lastUserText = (p: Prompt): string => {
    const user = [...p.prompt].reverse().find((m) => m.role === 'user')!;
    return typeof user.content === 'string'
      ? user.content
      : (user.content as Array<{ type: string; text?: string }>).map((c) => c.text ?? '').join('');
  };
  const notebookJson = () =>
    page.evaluate(() =>
      JSON.stringify(
        (
          window as unknown as { jupyterapp: NotebookApp }
        ).jupyterapp.shell.currentWidget!.content.model.sharedModel.toJSON()
      )
    );
  const cells = () =>
    page.evaluate(() =>
      (
        window as unknown as { jupyterapp: NotebookApp }
      ).jupyterapp.shell.currentWidget!.content.model.sharedModel.cells.map((c) => ({
        source: c.getSource(),
        outputs: c.toJSON().outputs ?? []
      }))
    );
  const assistBar = (index: number) =>
    page.locator('.jp-Notebook .jp-Cell').nth(index).locator('.jp-cellmate-cell-assist');
  const waitIdle = () => page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 90_000 });
  /** Clicks a Fix / Explain button and waits until the turn it starts has begun (or already ended). */
  async function clickToStartTurn(button: 'fix' | 'explain'): Promise<void> {
    const before = (await page.locator('#jp-cellmate-panel').getAttribute('data-last-turn')) ?? '';
    await assistBar(4).locator(`.jp-cellmate-cell-assist-${button}`).click();
    await page.waitForFunction(
      (prev) => {
        const el = document.querySelector<HTMLElement>('#jp-cellmate-panel');
        return !!el && (el.dataset.running === 'true' || (el.dataset.lastTurn ?? '') !== prev);
      },
      before,
      { timeout: 60_000 }
    );
  }

  it('the Fix / Explain bar shows under the error output only', async () => {
    await assistBar(4).waitFor({ state: 'visible', timeout: 30_000 });
    expect(await assistBar(4).locator('button').allTextContents()).toEqual(['Fix with Cellmate', 'Explain']);
    for (const i of [0, 1, 2, 3]) expect(await assistBar(i).isVisible()).toBe(false);
    // Right under the traceback, not above the cell's input.
    const outputBox = (await page
      .locator('.jp-Notebook .jp-Cell')
      .nth(4)
      .locator('.jp-Cell-outputWrapper')
      .boundingBox())!;
    expect((await assistBar(4).boundingBox())!.y).toBeGreaterThanOrEqual(outputBox.y + outputBox.height - 1);
    // The commands are there for the palette, the context menu and the shortcuts too.
    expect(
      await page.evaluate(() => {
        const app = (window as unknown as { jupyterapp: { commands: { hasCommand(id: string): boolean } } }).jupyterapp;
        return ['cellmate:fix-cell', 'cellmate:explain-cell'].map((id) => app.commands.hasCommand(id));
      })
    ).toEqual([true, true]);
    // In the failing cell's toolbar and its right-click menu; not in a cell without an error.
    const cell5 = page.locator('.jp-Notebook .jp-Cell').nth(4);
    await cell5.locator('.jp-InputArea-editor').click({ button: 'right' });
    await page
      .locator('.lm-Menu .lm-Menu-item[data-command="cellmate:fix-cell"]')
      .waitFor({ state: 'visible', timeout: 10_000 });
    expect(await page.locator('.lm-Menu .lm-Menu-item[data-command="cellmate:explain-cell"]').isVisible()).toBe(true);
    await page.keyboard.press('Escape');
    await cell5
      .locator('.jp-cell-toolbar [data-command="cellmate:fix-cell"]')
      .waitFor({ state: 'visible', timeout: 10_000 });
    await page.locator('.jp-Notebook .jp-Cell').nth(3).locator('.jp-InputArea-editor').click({ button: 'right' });
    await page.locator('.lm-Menu').first().waitFor({ state: 'visible' });
    expect(await page.locator('.lm-Menu .lm-Menu-item[data-command="cellmate:fix-cell"]').isVisible()).toBe(false);
    await page.keyboard.press('Escape');
    await assistBar(4).scrollIntoViewIfNeeded();
    await screenshot(page, 'cell-assist-bar-light');
    await setTheme(page, 'JupyterLab Dark');
    await assistBar(4).scrollIntoViewIfNeeded();
    await screenshot(page, 'cell-assist-bar-dark');
    await setTheme(page, 'JupyterLab Light');
  });

  it('TIER-2/MODE-2: Explain answers read-only and leaves the notebook byte-identical', async () => {
    const file = await fs.readFile(path.join(jupyter.workspace, 'sales.ipynb'));
    const model = await notebookJson();
    await clickToStartTurn('explain');
    await waitIdle();
    const explain = (await prompts()).filter((p) => p.turn === 0);
    expect(explain.length).toBeGreaterThan(0);
    // The turn's system prompt offers no tool that writes or runs (the Fix turn's below does)…
    for (const p of explain) {
      const system = JSON.stringify(p.prompt.filter((m) => m.role === 'system'));
      for (const tool of ['notebook_edit', 'notebook_run', 'eval', 'apply_patch', 'shell', 'debug'])
        expect(system).not.toContain(tool);
    }
    expect(lastUserText(explain[0]!)).toContain(
      'Explain the error of cell [5] in sales.ipynb. Do not edit or run anything'
    );
    // …and the registry refused the edit the model tried anyway, as off this turn's surface.
    expect(JSON.stringify(explain[1]!.prompt.filter((m) => m.role === 'tool'))).toContain(
      'Refused: notebook_edit is a write-tier tool and the \\"explain\\" surface allows only read tools'
    );
    // The attempted edit was refused by the surface, not put to the person.
    expect(await page.locator('.jp-cellmate-question[data-type="approval"]').count()).toBe(0);
    expect(
      await page.locator('.jp-cellmate-tool-card[data-tool-name="notebook_edit"]').getAttribute('data-status')
    ).toBe('error');
    expect(await page.locator('.jp-cellmate-assistant').last().textContent()).toContain('Rename it in cell 2.');
    expect(await notebookJson()).toBe(model);
    expect((await fs.readFile(path.join(jupyter.workspace, 'sales.ipynb'))).equals(file)).toBe(true);
  });

  it('EVAL-2/EDIT-3: Fix finds the cause in cell 2, edits it with a cell diff, re-runs 2–5, and the notebook ends without errors', async () => {
    await clickToStartTurn('fix');
    // The request carries the traceback, where the names come from and the kernel's facts.
    await page
      .locator('.jp-cellmate-question[data-type="approval"][data-tool="notebook_edit"][data-state="pending"]')
      .waitFor({ timeout: 60_000 });
    const fix = (await prompts()).find((p) => p.turn === 1 && p.step === 0)!;
    const sent = lastUserText(fix);
    expect(sent).toContain('Fix the error of cell [5] in sales.ipynb. Find the root cause before editing');
    expect(sent).toContain("Its error: KeyError: 'revenue'");
    expect(sent).toMatch(
      /Traceback:[\s\S]*Cell In\[\d+\], line 1\n\s*----> 1 total = top\["revenue"\]\.sum\(\)[\s\S]*KeyError: 'revenue'/
    );
    expect(sent).toContain('The failing line is line 1 of cell [5]: total = top["revenue"].sum()');
    expect(sent).toContain('- sales: assigned in [2] (id build); changed in [3] (id label); built from raw');
    expect(sent).toMatch(
      /sales: pandas\.DataFrame 3×4\n\s+columns \(4\): units \(int64\), price \(float64\), revnue \(float64\), month/
    );
    expect(sent).toMatch(/top: pandas\.DataFrame 3×4/);
    expect(JSON.stringify(fix.prompt.filter((m) => m.role === 'system'))).toContain('notebook_edit');

    // Looking into the notebook's kernel is eval's default (it asks nothing); it saw the misspelt column.
    expect(await page.locator('.jp-cellmate-tool-card[data-tool-name="eval"]').getAttribute('data-status')).toBe('ok');
    expect(await page.locator('.jp-cellmate-tool-card[data-tool-name="eval"]').textContent()).toContain("'revnue'");

    // The edit is on cell 2, shown as that cell's diff on the card the person approves.
    const card = page.locator(
      '.jp-cellmate-question[data-type="approval"][data-tool="notebook_edit"][data-state="pending"]'
    );
    await card.waitFor({ timeout: 60_000 });
    expect(await card.locator('.jp-cellmate-diff-cell').allTextContents()).toEqual(['Cell 2 (id build)']);
    expect(await card.locator('.jp-cellmate-diff-del').allTextContents()).toEqual([
      '-sales["revnue"] = sales["units"] * sales["price"]\n'
    ]);
    expect(await card.locator('.jp-cellmate-diff-add').allTextContents()).toEqual([
      '+sales["revenue"] = sales["units"] * sales["price"]\n'
    ]);
    await card.scrollIntoViewIfNeeded();
    await screenshot(page, 'cell-assist-fix-diff');
    await approveOnce(page, 'notebook_edit');
    await approveOnce(page, 'notebook_run');
    await waitIdle();

    const after = await cells();
    expect(after.map((c) => c.source)).toEqual([
      NB.cells[0]!.source,
      FIXED_BUILD,
      NB.cells[2]!.source,
      NB.cells[3]!.source,
      NB.cells[4]!.source
    ]);
    expect(after.flatMap((c) => c.outputs).filter((o) => o.output_type === 'error')).toEqual([]);
    expect([after[4]!.outputs[0]?.text].flat().join('')).toBe('total revenue 92.5\n');
    expect(await assistBar(4).isVisible()).toBe(false);
    expect(
      await page.locator('.jp-cellmate-tool-card[data-tool-name="notebook_run"]').getAttribute('data-status')
    ).toBe('ok');
    await screenshot(page, 'cell-assist-fixed');
  });
});
