/**
 * An approval card with no diff to show reads as prose (HARN-6), in Debian's Chromium
 * against a real JupyterLab with the scripted model on the default policy (no rule written).
 * A `shell` command with quotes and two lines shows verbatim — not as a JSON string with
 * `\"` and `\n` — and an `ast_edit` over the whole workspace says so in words, not `.`; the
 * raw JSON folds away under "Raw arguments"; their tool cards list the arguments the same
 * way. The person approves the rewrite once (it is staged, and nothing is written until its
 * Accept) and denies the command, which leaves nothing behind.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { approveOnce, openPane, pressSend, screenshot, screenshotIfFailed, setTheme } from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';

const COMMAND = 'echo "it\'s done" > shell-ran.txt\nrm -rf src';
const SCRIPT = {
  turns: [
    [
      { toolCalls: [{ toolName: 'ast_edit', input: { pattern: 'fetch($U, $T)', rewrite: 'fetch($U, timeout=$T)' } }] },
      { toolCalls: [{ toolName: 'shell', input: { command: COMMAND } }] },
      { text: 'Staged the rewrite; the command was not run.' }
    ]
  ]
};
const SOURCE = 'def go(u):\n    return fetch(u, 5)\n';

describe('an approval card without a diff shows the call in words (HARN-6)', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    jupyter = await startJupyter({
      files: { 'src/a.py': SOURCE, 'scripts/fields.json': JSON.stringify(SCRIPT) },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/fields.json' },
      // No policy file from the machine's home: the tier defaults apply (ast_edit and shell ask).
      env: { CELLMATE_POLICY: '/nonexistent/cellmate-policy.json' }
    });
    ({ browser, page } = await openPane(jupyter.labUrl));
  });

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
  });

  const pending = (tool: string) =>
    page.locator(`.jp-cellmate-question[data-type="approval"][data-tool="${tool}"][data-state="pending"]`);
  /** The card's arguments as the person reads them: label → shown text. */
  const fields = (tool: string): Promise<Array<[string, string]>> =>
    pending(tool)
      .locator('dl.jp-cellmate-question-fields')
      .evaluate((dl) =>
        [...dl.querySelectorAll('dt')].map((dt) => [dt.textContent ?? '', dt.nextElementSibling?.textContent ?? ''])
      );

  it('HARN-6: ast_edit and shell cards show their arguments verbatim; approve once stages, deny runs nothing', async () => {
    await page.locator('textarea.jp-cellmate-input').fill('add timeouts to the fetch calls, then clean up');
    await pressSend(page);

    const ast = pending('ast_edit');
    await ast.waitFor({ timeout: 60_000 });
    expect(await ast.locator('.jp-cellmate-question-context').textContent()).toBe(
      'the whole workspace — write-tier tools ask by default'
    );
    expect(await fields('ast_edit')).toEqual([
      ['pattern', 'fetch($U, $T)'],
      ['rewrite', 'fetch($U, timeout=$T)']
    ]);
    expect(await ast.locator('.jp-cellmate-question-args').isVisible()).toBe(false);
    await ast.scrollIntoViewIfNeeded();
    await screenshot(page, 'approval-fields-ast-edit');
    await approveOnce(page, 'ast_edit');

    const shell = pending('shell');
    await shell.waitFor({ timeout: 60_000 });
    expect(await fields('shell')).toEqual([['command', COMMAND]]);
    const shown = await shell.locator('.jp-cellmate-question-fields').innerText();
    expect(shown).not.toContain('\\n');
    expect(shown).not.toContain('\\"');
    // The raw JSON is one click away, and it is the exact call.
    await shell.locator('.jp-cellmate-question-raw > summary').click();
    expect(
      JSON.parse((await shell.locator('.jp-cellmate-question-args').textContent())!.replace(/^shell /, ''))
    ).toEqual({
      command: COMMAND
    });
    await shell.locator('.jp-cellmate-question-raw > summary').click();
    await shell.scrollIntoViewIfNeeded();
    await screenshot(page, 'approval-fields-shell-light');
    await setTheme(page, 'JupyterLab Dark');
    await screenshot(page, 'approval-fields-shell-dark');
    await setTheme(page, 'JupyterLab Light');
    await shell.locator('.jp-cellmate-deny').click();
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 60_000 });

    // Approved once, the rewrite is staged on its card; nothing is written until Accept.
    const staged = page.locator('.jp-cellmate-tool-card[data-tool-name="ast_edit"]');
    expect(await staged.getAttribute('data-status')).toBe('ok');
    expect(await staged.innerText()).toContain('fetch(u, timeout=5)');
    expect(await fs.readFile(path.join(jupyter.workspace, 'src/a.py'), 'utf8')).toBe(SOURCE);
    // Denied, the command left nothing behind.
    const denied = page.locator('.jp-cellmate-tool-card[data-tool-name="shell"]');
    expect(await denied.getAttribute('data-status')).toBe('error');
    expect(await denied.innerText()).toContain('shell: denied');
    // The tool cards read the same way: arguments by name, the command verbatim.
    const toolFields = (card: typeof staged): Promise<Array<[string, string]>> =>
      card
        .locator('.jp-cellmate-tool-args dl.jp-cellmate-arg-fields')
        .evaluate((dl) =>
          [...dl.querySelectorAll('dt')].map((dt) => [dt.textContent ?? '', dt.nextElementSibling?.textContent ?? ''])
        );
    expect(await toolFields(staged)).toEqual([
      ['pattern', 'fetch($U, $T)'],
      ['rewrite', 'fetch($U, timeout=$T)']
    ]);
    expect(await toolFields(denied)).toEqual([['command', COMMAND]]);
    expect(await fs.stat(path.join(jupyter.workspace, 'shell-ran.txt')).catch(() => undefined)).toBeUndefined();
  });
});
