/**
 * A long analysis chat in the pane (issue #24), in Debian's Chromium against a real
 * JupyterLab with the scripted provider, which reports usage as a provider bills it
 * (`reportUsage`: the request's characters / 4) and has no window of its own: the window comes from Settings,
 * typed there as a person would. Every turn evaluates a table in the kernel and reads a
 * notes file, so the conversation grows by about a thousand tokens a turn.
 *
 * The meter's own figures are its DOM hooks (`data-used`, `data-window`, `data-compact-at`,
 * `data-level`); a MutationObserver keeps every state it showed, since a state can last
 * less than a poll (red between a step past the compaction point and the compaction before
 * the next one).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import {
  openPane,
  pressSend,
  runCommand,
  screenshot,
  screenshotIfFailed,
  sendAndWaitForTurn,
  setTheme
} from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';
import { artifactsDir } from '../support/paths';

/** The window typed into Settings: small, so a handful of turns fill it. */
const WINDOW = 12_000;

/** A workspace file whose name is markup: the compaction summary lists the files a chat touched. */
const HOSTILE_FILE = 'kiln<img src=x onerror="window.__pwned=1">.md';

/** Forty rows of a firing log, then a pause that keeps the state after the step on screen for a moment. */
const TABLE = [
  'import random, time',
  'random.seed(7)',
  'print("firing  shelf  cone  peak_c  hold_min  glaze")',
  "for i in range(40): print(f\"{i:6d}  {random.choice(['north', 'south', 'east '])}  {random.randint(5, 10):4d}  {random.randint(1180, 1260):6d}  {random.randint(5, 40):8d}  {random.choice(['celadon', 'tenmoku', 'shino  '])}\")",
  'time.sleep(1.5)'
].join('\n');

const SCRIPT = {
  reportUsage: true,
  steps: [
    {
      text: 'Tabulating the firings and re-reading your notes.',
      toolCalls: [
        { toolName: 'eval', input: { description: 'Tabulate the firing log', code: TABLE } },
        { toolName: 'read', input: { path: 'notes.md' } },
        { toolName: 'read', input: { path: HOSTILE_FILE } }
      ]
    },
    { text: 'The table is above; the north shelf still runs hottest.' }
  ]
};

const NOTES = `# Firing notes\n\n${'The kiln reached 1240 °C on Tuesday; the glaze crawled on the north shelf.\n'.repeat(12)}`;

interface IMeterState {
  used: number;
  window: number | null;
  compactAt: number | null;
  level: string;
  text: string;
}

type MeterWindow = { __meterStates: IMeterState[] };

describe('context meter, usage and compaction in the pane (issue #24)', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;

  const panel = () => page.locator('#jp-cellmate-panel');
  const meter = () => page.locator('.jp-cellmate-context-meter');
  const cards = () => page.locator('.jp-cellmate-item[data-kind="compaction"]');

  async function meterNow(): Promise<IMeterState> {
    return meter().evaluate((el) => {
      const d = (el as HTMLElement).dataset;
      return {
        used: Number(d.used),
        window: d.window ? Number(d.window) : null,
        compactAt: d.compactAt ? Number(d.compactAt) : null,
        level: d.level ?? '',
        text: el.querySelector('.jp-cellmate-context-label')?.textContent ?? ''
      };
    });
  }

  /** Every state the meter showed since the last call (and forgets them). */
  async function meterHistory(): Promise<IMeterState[]> {
    return page.evaluate(() => {
      const w = window as unknown as MeterWindow;
      const seen = w.__meterStates;
      w.__meterStates = [];
      return seen;
    });
  }

  async function shootPane(name: string): Promise<void> {
    await fs.mkdir(artifactsDir, { recursive: true });
    await panel().screenshot({ path: path.join(artifactsDir, `${name}.png`) });
  }

  beforeAll(async () => {
    jupyter = await startJupyter({
      files: { 'notes.md': NOTES, [HOSTILE_FILE]: 'cone 9\n', 'scripts/long-chat.json': JSON.stringify(SCRIPT) },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/long-chat.json' }
    });
    ({ browser, page } = await openPane(jupyter.labUrl, { width: 1400, height: 1000 }));
    // Keep every state the meter shows: attributes can change and change back between two polls.
    await page.evaluate(() => {
      const w = window as unknown as MeterWindow;
      w.__meterStates = [];
      const record = (): void => {
        const el = document.querySelector<HTMLElement>('.jp-cellmate-context-meter');
        if (!el || el.hidden || !el.dataset.level) return;
        const d = el.dataset;
        const state = {
          used: Number(d.used),
          window: d.window ? Number(d.window) : null,
          compactAt: d.compactAt ? Number(d.compactAt) : null,
          level: d.level ?? '',
          text: el.querySelector('.jp-cellmate-context-label')?.textContent ?? ''
        };
        const last = w.__meterStates[w.__meterStates.length - 1];
        if (!last || JSON.stringify(last) !== JSON.stringify(state)) w.__meterStates.push(state);
      };
      new MutationObserver(record).observe(document.body, {
        subtree: true,
        childList: true,
        characterData: true,
        attributes: true
      });
    });
  });

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
  });

  it('CTX-1: without a known window the meter says so, and each turn ends with its usage line', async () => {
    await runCommand(page, 'cellmate:new-chat');
    await expect.poll(() => page.locator('.jp-cellmate-item').count()).toBe(0);
    // Nothing to show before the chat's first request.
    expect(await meter().isHidden()).toBe(true);

    await sendAndWaitForTurn(page, 'Tabulate the firing log for me.');
    const first = await meterNow();
    expect(first.level).toBe('unknown');
    expect(first.text).toMatch(/^[\d.]+k · window unknown$/);
    expect(first.window).toBeNull();
    expect(await meter().getAttribute('title')).toMatch(/compacted when the provider refuses/);

    const usage = page.locator('.jp-cellmate-item[data-kind="usage"]');
    await expect.poll(() => usage.count()).toBe(1);
    // The usage line ends the turn, after the answer.
    expect(await page.locator('.jp-cellmate-item').last().getAttribute('data-kind')).toBe('usage');
    expect(await usage.innerText()).toMatch(/^↑ [\d.]+k in · ↓ \d+ out · 2 requests$/);
  });

  it('CTX-1: a context window typed into Settings → Cellmate reaches the meter', async () => {
    await runCommand(page, 'settingeditor:open', { query: 'Cellmate' });
    const field = page.locator('[id="jp-SettingsEditor-jupyterlab-cellmate:plugin_contextWindow"]');
    await field.waitFor({ timeout: 30_000 });
    await field.fill(String(WINDOW));
    await field.press('Tab');
    // The form saves by itself; the next request carries the window.
    await expect
      .poll(
        async () => {
          const res = await fetch(`${jupyter.url}/lab/api/settings/jupyterlab-cellmate:plugin`, {
            headers: { Authorization: `token ${jupyter.token}` }
          });
          return ((await res.json()) as { settings?: { contextWindow?: number } }).settings?.contextWindow;
        },
        { timeout: 15_000 }
      )
      .toBe(WINDOW);

    await sendAndWaitForTurn(page, 'Again, with the newest firings.');
    const now = await meterNow();
    expect(now.window).toBe(WINDOW);
    expect(now.text).toMatch(/ \/ 12k$/);
    expect(now.compactAt).toBeGreaterThan(0);
    expect(now.compactAt).toBeLessThan(WINDOW);
    const tip = (await meter().getAttribute('title')) ?? '';
    expect(tip).toMatch(/Context window: 12.000 tokens \(from Settings\)/);
    expect(tip).toMatch(/Kept free for the answer/);
    expect(tip).toMatch(/This chat so far: [\d.]+k in/);
  });

  it('CTX-1, CTX-3: the meter grows with every turn, goes amber, and an automatic compaction card appears', async () => {
    const ends: IMeterState[] = [await meterNow()];
    await meterHistory();
    let turns = 0;
    let amberShot = false;
    while ((await cards().count()) === 0) {
      expect(turns, `no compaction after ${turns} turns; the meter ended at ${JSON.stringify(ends)}`).toBeLessThan(12);
      await sendAndWaitForTurn(page, `Turn ${turns + 3}: tabulate the firings again.`);
      turns++;
      if ((await cards().count()) === 0) {
        const now = await meterNow();
        // Each turn's last request carries everything before it, and one more table.
        expect(now.used).toBeGreaterThan(ends[ends.length - 1].used);
        ends.push(now);
        if (now.level === 'warn' && !amberShot) {
          amberShot = true;
          await shootPane('context-meter-amber-light');
        }
      }
    }
    const seen = await meterHistory();
    expect(turns).toBeGreaterThan(1);
    expect(seen.some((s) => s.level === 'warn')).toBe(true);

    const card = cards().first();
    expect(await card.getAttribute('data-trigger')).toBe('auto');
    const headline = await card.locator('.jp-cellmate-compaction-text').innerText();
    expect(headline).toMatch(
      /^Context compacted \(auto\) · \d+ old outputs? pruned( · \d+ messages? summarised)? · [\d.]+k → [\d.]+k? tokens$/
    );
    expect(await card.innerText()).toMatch(/full history stays in this transcript/);
    // The pane still shows every turn: compaction changes what the model is sent, not the transcript.
    expect(await page.locator('.jp-cellmate-item[data-kind="user"]').count()).toBe(turns + 2);
    expect(await page.locator('.jp-cellmate-item[data-kind="usage"]').count()).toBe(turns + 2);
    // After it the requests are below the compaction point again.
    const after = await meterNow();
    expect(after.used).toBeLessThan(after.compactAt!);
  });

  it('CTX-1, CTX-3: a pasted log past the compaction point turns the meter red until the next compaction', async () => {
    const before = await cards().count();
    const { compactAt } = await meterNow();
    // Nothing in the history can make room for the message itself: the request goes out past the point.
    const line = 'firing 1240 C north shelf glaze crawled; hold 25 min; cone 9 bent at 1238 C\n';
    const log = `Here is the full controller log, what do you make of it?\n\n${line.repeat(Math.ceil((compactAt! * 4) / line.length))}`;
    await meterHistory();
    await page.locator('textarea.jp-cellmate-input').fill(log);
    await pressSend(page);
    const red = page.locator('.jp-cellmate-context-meter[data-level="error"]');
    await red.waitFor({ timeout: 30_000 });
    const shown = await meterNow();
    expect(shown.used).toBeGreaterThanOrEqual(shown.compactAt!);
    await shootPane('context-meter-red-light');
    // The turn still runs (its table is being printed): Compact waits for it.
    expect(await panel().getAttribute('data-running')).toBe('true');
    expect(await page.locator('button.jp-cellmate-compact').isDisabled()).toBe(true);
    expect(
      await page.evaluate(() =>
        (
          window as unknown as { jupyterapp: { commands: { isEnabled(id: string): boolean } } }
        ).jupyterapp.commands.isEnabled('cellmate:compact-chat')
      )
    ).toBe(false);
    await panel().locator('xpath=self::*[@data-running="false"]').waitFor({ timeout: 60_000 });

    const seen = await meterHistory();
    const redAt = seen.findIndex((s) => s.level === 'error');
    expect(redAt).toBeGreaterThanOrEqual(0);
    // The next step compacted first: the meter came back below the point, with another card.
    expect(seen.slice(redAt + 1).some((s) => s.level !== 'error')).toBe(true);
    expect(await cards().count()).toBeGreaterThan(before);
    const last = await meterNow();
    expect(last.used).toBeLessThan(last.compactAt!);
  });

  it('CTX-3: Compact compacts on request, with a card of its own; the command is in the palette', async () => {
    await sendAndWaitForTurn(page, 'One more table, please.');
    const has = await page.evaluate(() => {
      const app = (
        window as unknown as {
          jupyterapp: { commands: { hasCommand(id: string): boolean; isEnabled(id: string): boolean } };
        }
      ).jupyterapp;
      return [app.commands.hasCommand('cellmate:compact-chat'), app.commands.isEnabled('cellmate:compact-chat')];
    });
    expect(has).toEqual([true, true]);
    const before = await cards().count();
    const used = (await meterNow()).used;

    const compact = page.locator('button.jp-cellmate-compact');
    expect(await compact.getAttribute('title')).toBe('Compact the conversation');
    await compact.click();
    const manual = page.locator('.jp-cellmate-item[data-kind="compaction"][data-trigger="manual"]');
    await manual.waitFor({ timeout: 30_000 });
    expect(await cards().count()).toBe(before + 1);
    expect(await manual.locator('.jp-cellmate-compaction-text').innerText()).toMatch(
      /^Context compacted \(on request\)/
    );
    await expect.poll(async () => (await meterNow()).used).toBeLessThan(used);
    await page.locator('button.jp-cellmate-compact:not([disabled])').waitFor();

    // The summary the model now reads opens from the card, as sanitized markdown: the
    // hostile file name it lists stays text.
    const summary = manual.locator('details.jp-cellmate-compaction-summary');
    expect(await summary.isVisible()).toBe(true);
    await summary.locator('summary').click();
    const body = summary.locator('.jp-cellmate-compaction-body');
    await body.filter({ hasText: /Files and notebooks touched/ }).waitFor({ timeout: 10_000 });
    expect(await body.innerText()).toContain('notes.md');
    expect(await body.innerText()).toContain('kiln');
    await page.waitForTimeout(300);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned)).toBeUndefined();
    expect(await body.locator('[onerror], script').count()).toBe(0);
    await manual.scrollIntoViewIfNeeded();
    await shootPane('context-meter-compacted-light');
    await screenshot(page, 'context-meter-compacted-light-full');
    await setTheme(page, 'JupyterLab Dark');
    await manual.scrollIntoViewIfNeeded();
    await shootPane('context-meter-compacted-dark');
  });

  it("CTX-1: in the dark theme the red meter is the theme's own error colour", async () => {
    // The last compaction brought the chat down; a red meter again needs another pasted log.
    const { compactAt } = await meterNow();
    const line = 'cone 10 down at 1285 C; reduction from 1050 C; shelf east; crawl on the lip\n';
    await page
      .locator('textarea.jp-cellmate-input')
      .fill(`And this one?\n\n${line.repeat(Math.ceil((compactAt! * 4) / line.length))}`);
    await pressSend(page);
    await page.locator('.jp-cellmate-context-meter[data-level="error"]').waitFor({ timeout: 30_000 });
    const colours = await meter().evaluate((el) => {
      // What the theme's --jp-error-color1 resolves to here.
      const probe = document.createElement('span');
      probe.style.color = 'var(--jp-error-color1)';
      el.appendChild(probe);
      const theme = getComputedStyle(probe).color;
      probe.remove();
      return {
        theme,
        label: getComputedStyle(el.querySelector('.jp-cellmate-context-label')!).color,
        fill: getComputedStyle(el.querySelector('.jp-cellmate-context-fill')!).backgroundColor
      };
    });
    expect(colours.theme).not.toBe('rgba(0, 0, 0, 0)');
    expect(colours.label).toBe(colours.theme);
    expect(colours.fill).toBe(colours.theme);
    await shootPane('context-meter-red-dark');
    await panel().locator('xpath=self::*[@data-running="false"]').waitFor({ timeout: 60_000 });
    await setTheme(page, 'JupyterLab Light');
  });
});
