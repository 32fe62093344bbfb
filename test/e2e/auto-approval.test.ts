/**
 * Auto approval in the pane (SIDE-1…3), in Debian's Chromium against a real JupyterLab with
 * the scripted model as main model and stand-in reviewer, on the default policy (no rule
 * written): the person switches Auto on in the composer; a routine write shows "checking…"
 * on its card while the reviewer judges, then folds to "Auto-approved: …" with no approval
 * card; a shell command the reviewer will not clear falls back to the person's card, which
 * the test clicks as a person does. `/auto` switches it off again; Tool Metrics counts both.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { approveOnce, openPane, pressSend, runCommand, screenshot, screenshotIfFailed } from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';

const SCRIPT = {
  turns: [
    [
      {
        toolCalls: [
          { toolName: 'write', input: { path: 'notes/summary.md', content: '# Summary\n\nMean computed.\n' } }
        ]
      },
      { toolCalls: [{ toolName: 'shell', input: { command: 'echo ran > shell-ran.txt' } }] },
      { text: 'The note is written and the command ran.' }
    ]
  ],
  sidecar: [
    // Slow enough for a person (and the test) to see "checking…".
    { tool: 'write', subject: 'notes/', verdict: 'allow', reason: 'routine note inside the project', delayMs: 1500 },
    { tool: 'shell', verdict: 'ask', reason: 'runs a command that writes a file' }
  ]
};

describe('SIDE-1…3 Auto approval in the pane', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    jupyter = await startJupyter({
      files: { 'scripts/auto.json': JSON.stringify(SCRIPT) },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/auto.json' },
      env: { CELLMATE_POLICY: '/nonexistent/cellmate-policy.json' }
    });
    ({ browser, page } = await openPane(jupyter.labUrl));
  });

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
  });

  it('the Auto switch; a checking… card that becomes Auto-approved; a call that falls back to the person; /auto switches it off', async () => {
    const toggle = page.locator('.jp-cellmate-composer .jp-cellmate-auto-toggle');
    expect(await toggle.isChecked()).toBe(false); // off by default
    await page.locator('.jp-cellmate-composer .jp-cellmate-auto').click();
    expect(await toggle.isChecked()).toBe(true);

    // "checking…" lasts as long as the reviewer (1.5 s): on a loaded machine it can pass between
    // two looks, so the page keeps every state the write card's review line shows.
    await page.evaluate(() => {
      const w = window as unknown as { __reviewStates: string[] };
      w.__reviewStates = [];
      new MutationObserver(() => {
        const card = document.querySelector<HTMLElement>('.jp-cellmate-tool-card[data-tool-name="write"]');
        if (!card) return;
        const state = `${card.dataset.review ?? ''}: ${card.querySelector('.jp-cellmate-tool-review')?.textContent ?? ''}`;
        if (w.__reviewStates.at(-1) !== state) w.__reviewStates.push(state);
      }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
    });
    const reviewStates = () => page.evaluate(() => (window as unknown as { __reviewStates: string[] }).__reviewStates);
    await page.locator('textarea.jp-cellmate-input').fill('note the mean, then mark the run');
    await pressSend(page);

    const write = page.locator('.jp-cellmate-tool-card[data-tool-name="write"]');
    await expect.poll(reviewStates, { timeout: 60_000 }).toContain('checking: checking…');
    await screenshot(page, 'auto-checking');
    await write.locator('xpath=self::*[@data-review="auto-approved"]').waitFor({ timeout: 30_000 });
    const states = await reviewStates();
    expect(states.indexOf('checking: checking…')).toBeLessThan(
      states.indexOf('auto-approved: Auto-approved: routine note inside the project')
    );
    expect(await write.locator('.jp-cellmate-tool-review').textContent()).toBe(
      'Auto-approved: routine note inside the project'
    );
    await page.locator('.jp-cellmate-tool-card[data-tool-name="write"][data-status="ok"]').waitFor({ timeout: 30_000 });
    expect(await write.evaluate((node) => (node as HTMLDetailsElement).open)).toBe(false); // folded to its one line
    expect(await page.locator('.jp-cellmate-question[data-type="approval"][data-tool="write"]').count()).toBe(0);
    expect(await fs.readFile(path.join(jupyter.workspace, 'notes/summary.md'), 'utf8')).toBe(
      '# Summary\n\nMean computed.\n'
    );

    // The reviewer would not clear the shell command: the person's card, and the card says why.
    const shell = page.locator('.jp-cellmate-tool-card[data-tool-name="shell"]');
    await page
      .locator('.jp-cellmate-question[data-type="approval"][data-tool="shell"][data-state="pending"]')
      .waitFor({ timeout: 60_000 });
    expect(await shell.getAttribute('data-review')).toBe('asked');
    expect(await shell.locator('.jp-cellmate-tool-review').textContent()).toBe(
      'Asked you: runs a command that writes a file'
    );
    await screenshot(page, 'auto-fallback-card');
    await approveOnce(page, 'shell');
    await page.locator('.jp-cellmate-tool-card[data-tool-name="shell"][data-status="ok"]').waitFor({ timeout: 60_000 });
    expect(await fs.readFile(path.join(jupyter.workspace, 'shell-ran.txt'), 'utf8')).toBe('ran\n');
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 60_000 });

    // Typed as a person does: the command list opens, Enter takes `/auto`, Enter runs it (no turn starts).
    const input = page.locator('textarea.jp-cellmate-input');
    await input.fill('');
    await input.click();
    await input.pressSequentially('/auto');
    await expect
      .poll(
        () => page.locator('ul.jp-cellmate-slash-commands li.jp-cellmate-mention').first().getAttribute('data-name'),
        { timeout: 10_000 }
      )
      .toBe('auto');
    await input.press('Enter');
    expect(await input.inputValue()).toBe('/auto ');
    await input.press('Enter');
    await page.locator('.jp-cellmate-composer[data-auto="false"]').waitFor({ timeout: 10_000 });
    expect(await toggle.isChecked()).toBe(false);

    // Tool Metrics: the write the reviewer cleared, the shell command it handed over.
    await runCommand(page, 'cellmate:show-metrics');
    const table = page.locator('.jp-cellmate-metrics');
    await table.locator('tr[data-tool="shell"]').waitFor({ timeout: 30_000 });
    const headers = await table.locator('th').allTextContents();
    const cell = async (tool: string, header: string) =>
      (await table.locator(`tr[data-tool="${tool}"] td`).allTextContents())[headers.indexOf(header)];
    expect([
      await cell('write', 'Auto-allowed'),
      await cell('write', 'Auto asked'),
      await cell('shell', 'Auto asked'),
      await cell('shell', 'Auto timed out')
    ]).toEqual(['1', '0', '1', '0']);
    await screenshot(page, 'auto-metrics');
    await page.keyboard.press('Escape');
  });
});
