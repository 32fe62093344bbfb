/**
 * Slash commands and the instructions chip in the pane (issue #28), in Debian's Chromium
 * against a real JupyterLab with the scripted provider. A person types `/`, picks from the
 * completion list with the keyboard, and presses Enter: built-ins drive the pane, a custom
 * command from `.cellmate/commands/` sends its template, an unknown command is answered
 * with a notice and nothing is sent. Screenshots of the list in the light and dark themes go
 * to test/artifacts/.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import {
  minContrast,
  openPane,
  runCommand,
  screenshotIfFailed,
  sendAndWaitForTurn,
  setTheme
} from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';
import { artifactsDir } from '../support/paths';

const SCRIPT = { steps: [{ text: 'Noted.' }] };

describe('slash commands in the composer (issue #28)', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;

  const input = () => page.locator('textarea.jp-cellmate-input');
  const list = () => page.locator('ul.jp-cellmate-slash-commands');
  const options = () => list().locator('li.jp-cellmate-mention');
  const users = () => page.locator('.jp-cellmate-item[data-kind="user"]');

  /** Clicks into the composer and waits until it has the focus (a theme change or a new chat can take it). */
  async function focusComposer(): Promise<void> {
    await input().click();
    await page.waitForFunction(
      () => document.activeElement?.classList.contains('jp-cellmate-input') === true,
      undefined,
      { timeout: 10_000 }
    );
  }

  /** Types a command as a person does: the list opens, Enter takes the highlighted entry, Enter sends. */
  async function typeCommand(name: string): Promise<void> {
    await input().fill('');
    await focusComposer();
    await input().pressSequentially(`/${name}`);
    await expect.poll(() => options().first().getAttribute('data-name'), { timeout: 10_000 }).toBe(name);
    await input().press('Enter');
    expect(await input().inputValue()).toBe(`/${name} `);
    await input().press('Enter');
  }

  async function shootPane(name: string): Promise<void> {
    await fs.mkdir(artifactsDir, { recursive: true });
    await page.locator('#jp-cellmate-panel').screenshot({ path: path.join(artifactsDir, `${name}.png`) });
  }

  let home: string;

  beforeAll(async () => {
    // The person's Cellmate home, apart from the machine's: one skill of their own.
    home = await fs.mkdtemp(path.join(os.tmpdir(), 'cellmate-e2e-home-'));
    await fs.mkdir(path.join(home, 'skills', 'plot-style'), { recursive: true });
    await fs.writeFile(
      path.join(home, 'skills', 'plot-style', 'SKILL.md'),
      '---\nname: plot-style\ndescription: House style for matplotlib figures.\n---\nUse the team palette.\n'
    );
    jupyter = await startJupyter({
      env: { CELLMATE_HOME: home },
      files: {
        '.cellmate/skills/pdf-report/SKILL.md':
          '---\nname: pdf-report\ndescription: Build a PDF report.\n---\nExport with nbconvert.\n',
        'AGENTS.md': 'Data lives in data/raw. Use polars.\n',
        '.cellmate/commands/explain-df.md':
          '---\ndescription: Explain a DataFrame\n---\nDescribe the DataFrame $ARGUMENTS: its shape, dtypes and nulls.\n',
        'scripts/chat.json': JSON.stringify(SCRIPT)
      },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/chat.json' }
    });
    ({ browser, page } = await openPane(jupyter.labUrl, { width: 1400, height: 1000 }));
  });

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
    await fs.rm(home, { recursive: true, force: true });
  });

  it('typing / lists the commands (built-ins, then custom); light and dark', async () => {
    await runCommand(page, 'cellmate:new-chat');
    await expect.poll(() => page.locator('.jp-cellmate-item').count()).toBe(0);
    await page.waitForTimeout(500); // the new chat focuses the composer when it is ready
    // On a loaded machine the new chat can take the focus back after a first keystroke (closing the list): a person types again.
    for (let attempt = 1; ; attempt++) {
      await focusComposer();
      await input().fill('');
      await input().pressSequentially('/');
      const shown = await list()
        .waitFor({ state: 'visible', timeout: 5_000 })
        .then(
          () => true,
          () => false
        );
      if (shown || attempt === 3) break;
    }
    await list().waitFor({ state: 'visible', timeout: 5_000 });
    const names = await options().evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.name));
    expect(names).toEqual([
      'plan',
      'agent',
      'auto',
      'review',
      'compact',
      'clear',
      'export',
      'rewind',
      'model',
      'skills',
      'help',
      'explain-df'
    ]);
    expect(await options().last().innerText()).toContain('Explain a DataFrame');
    // The selected row and its detail stay readable (WCAG AA) in both themes.
    const selected =
      '.jp-cellmate-mention[aria-selected="true"] .jp-cellmate-mention-name, .jp-cellmate-mention[aria-selected="true"] .jp-cellmate-mention-detail';
    expect(await minContrast(page, selected)).toBeGreaterThanOrEqual(4.5);
    await shootPane('slash-commands-light');
    await input().press('Escape');
    await input().fill('');
    // Changing the theme takes the focus (the list closes on blur): open it again in the dark theme.
    await setTheme(page, 'JupyterLab Dark');
    await focusComposer();
    await input().pressSequentially('/');
    await list().waitFor({ state: 'visible', timeout: 10_000 });
    await page.waitForTimeout(300);
    expect(await list().isVisible()).toBe(true);
    expect(await minContrast(page, selected)).toBeGreaterThanOrEqual(4.5);
    await shootPane('slash-commands-dark');
    await input().press('Escape');
    await input().fill('');
    await setTheme(page, 'JupyterLab Light');
  });

  it('a command sent before its list arrives leaves no list over the emptied composer', async () => {
    const notices = page.locator('.jp-cellmate-item[data-kind="notice"]', { hasText: 'Commands:' });
    const before = await notices.count();
    await focusComposer();
    await input().fill('');
    // Typed and sent at once, as a fast typist does: the list's request (debounced) is still out.
    await input().pressSequentially('/help');
    await input().press('Enter');
    await expect.poll(() => notices.count()).toBe(before + 1);
    expect(await input().inputValue()).toBe('');
    // The list's reply lands after the composer cleared; past the debounce and a round trip it must not have opened.
    await page.waitForTimeout(2_000);
    expect(await list().isVisible()).toBe(false);
  });

  it('/plan chosen from the list switches the mode; /agent switches back; nothing is sent', async () => {
    await focusComposer();
    await input().pressSequentially('/pl');
    await expect
      .poll(() => options().evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.name)))
      .toEqual(['plan']);
    await input().press('Tab');
    expect(await input().inputValue()).toBe('/plan ');
    await input().press('Enter');
    await expect.poll(() => page.locator('select.jp-cellmate-mode-select').inputValue()).toBe('plan');
    // The selector shows the new mode as soon as the chat has it; the composer clears once the command returns.
    await expect.poll(() => input().inputValue()).toBe('');
    await typeCommand('agent');
    await expect.poll(() => page.locator('select.jp-cellmate-mode-select').inputValue()).toBe('agent');
    expect(await users().count()).toBe(0);
  });

  it('the header chip names the instruction files in effect after a turn', async () => {
    await sendAndWaitForTurn(page, 'Hello.');
    const chip = page.locator('.jp-cellmate-instructions-chip');
    await expect.poll(() => chip.getAttribute('data-count')).toBe('1');
    expect(await chip.innerText()).toBe('Instructions: AGENTS.md');
    await chip.click();
    expect(
      await page
        .locator('.jp-cellmate-instructions-list li')
        .evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.label))
    ).toEqual(['AGENTS.md']);
  });

  it('a custom command sends its template with the arguments; an unknown one is refused and kept', async () => {
    await sendAndWaitForTurn(page, '/explain-df sales');
    await expect
      .poll(() => users().last().innerText())
      .toContain('Describe the DataFrame sales: its shape, dtypes and nulls.');
    const before = await users().count();

    await input().fill('/frobnicate now'); // a space: no completion list
    await input().press('Enter');
    await page
      .locator('.jp-cellmate-item[data-kind="notice"]', { hasText: 'Unknown command /frobnicate: nothing was sent' })
      .waitFor({ timeout: 10_000 });
    expect(await users().count()).toBe(before);
    expect(await input().inputValue()).toBe('/frobnicate now');
    await input().fill('');
  });

  it('/export writes the chat as Markdown and a notebook in exports/', async () => {
    await typeCommand('export');
    const notice = page.locator('.jp-cellmate-item[data-kind="notice"]', { hasText: 'Exported to exports/' });
    await notice.waitFor({ timeout: 20_000 });
    const text = await notice.innerText();
    const [, md, nb] = /Exported to (exports\/\S+\.md) and (exports\/\S+\.ipynb)/.exec(text) ?? [];
    const root = jupyter.workspace;
    expect(await fs.readFile(path.join(root, md!), 'utf8')).toContain('Describe the DataFrame sales');
    expect(JSON.parse(await fs.readFile(path.join(root, nb!), 'utf8')).nbformat).toBe(4);
  });

  it("/skills lists the skills with their source; the workspace's is not offered (untrusted); the switch turns one off", async () => {
    await typeCommand('skills');
    const rows = page.locator('table.jp-cellmate-skills tbody tr');
    await rows.first().waitFor({ timeout: 10_000 });
    expect(
      await rows.evaluateAll((els) =>
        els.map((e) => [
          (e as HTMLElement).dataset.skill,
          (e as HTMLElement).dataset.source,
          (e as HTMLElement).dataset.state
        ])
      )
    ).toEqual([
      ['plot-style', 'home', 'offered'],
      ['pdf-report', 'cellmate', 'untrusted']
    ]);
    await fs.mkdir(artifactsDir, { recursive: true });
    await page.locator('.jp-Dialog-content').screenshot({ path: path.join(artifactsDir, 'skills-view-light.png') });
    await page.locator('tr[data-skill="plot-style"] input.jp-cellmate-skill-switch').click();
    await page.locator('tr[data-skill="plot-style"][data-state="off"]').waitFor({ timeout: 10_000 });
    const settings = JSON.parse(await fs.readFile(path.join(home, 'skills.json'), 'utf8')) as { disabled: string[] };
    expect(settings.disabled).toEqual([await fs.realpath(path.join(home, 'skills', 'plot-style'))]);
    await page.locator('.jp-Dialog').getByRole('button', { name: 'Close' }).click();
  });

  it('/compact compacts the conversation: a compaction card', async () => {
    await sendAndWaitForTurn(page, 'One more question about the raw data.');
    await typeCommand('compact');
    // The earlier turns are summarised by the (scripted) model; the card says what changed.
    await page.locator('.jp-cellmate-item[data-kind="compaction"]').waitFor({ timeout: 30_000 });
  });
});
