/**
 * Debian's Chromium driven by playwright-core (a test tool's own browser download
 * cannot work here). Screenshots go to test/artifacts/ and are kept.
 */
import { chromium, type Browser, type Page } from 'playwright-core';
import fs from 'node:fs/promises';
import path from 'node:path';
import { artifactsDir } from './paths';

const CHROMIUM = process.env.CELLMATE_CHROMIUM ?? '/usr/bin/chromium';

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic'
    ]
  });
}

/** Saves a full-page PNG under test/artifacts/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await fs.mkdir(artifactsDir, { recursive: true });
  const file = path.join(artifactsDir, `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

/** Opens JupyterLab and waits until the application has started. */
export async function openLab(page: Page, labUrl: string): Promise<void> {
  await page.goto(labUrl);
  await page.waitForFunction(
    () => {
      const app = (window as unknown as { jupyterapp?: { started?: unknown; commands?: unknown } }).jupyterapp;
      return !!app && !!app.commands;
    },
    undefined,
    { timeout: 60_000 }
  );
  await page.evaluate(async () => {
    const app = (window as unknown as { jupyterapp: { started: Promise<void>; restored: Promise<void> } }).jupyterapp;
    await app.started;
    await app.restored;
  });
}

/** Opens the Cellmate pane (the palette's Open chat) and waits until it is connected to the companion. */
export async function openChat(page: Page, timeoutMs = 30_000): Promise<void> {
  await runCommand(page, 'cellmate:open-chat');
  await page.locator('.jp-cellmate-connection[data-state="connected"]').waitFor({ timeout: timeoutMs });
}

/**
 * What most browser tests start with, as a person would: a browser, JupyterLab open at
 * `labUrl`, and the Cellmate pane open and connected.
 */
export async function openPane(
  labUrl: string,
  viewport: { width: number; height: number } = { width: 1400, height: 900 }
): Promise<{ browser: Browser; page: Page }> {
  const browser = await launchBrowser();
  const page = await browser.newPage({ viewport });
  await openLab(page, labUrl);
  await openChat(page);
  return { browser, page };
}

/** Runs a JupyterLab command in the page. */
export async function runCommand(page: Page, id: string, args: Record<string, unknown> = {}): Promise<unknown> {
  return page.evaluate(
    async ([cmd, a]) => {
      const app = (
        window as unknown as {
          jupyterapp: { commands: { execute(id: string, args: unknown): Promise<unknown> } };
        }
      ).jupyterapp;
      const r = await app.commands.execute(cmd as string, a);
      // Results are often widgets: return nothing that cannot cross the boundary.
      return typeof r === 'object' ? null : r;
    },
    [id, args] as const
  );
}

/**
 * For `afterEach`: keeps a screenshot of what the page showed when the test just failed
 * (test/artifacts/failed-<test name>.png).
 */
export async function screenshotIfFailed(
  ctx: { task: { name: string; result?: { state?: string } } },
  page: Page | undefined
): Promise<void> {
  if (ctx.task.result?.state === 'fail' && page && !page.isClosed()) {
    await screenshot(page, `failed-${ctx.task.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`);
  }
}

/**
 * Presses Enter in the pane's composer (the text already typed) and waits until the turn
 * has started — or already ended: a fast scripted turn can set and clear `data-running`
 * between two polls, so waiting for `data-running="true"` alone can miss it. The panel's
 * `data-last-turn` (the id of the last turn that ended) tells the two apart. The default
 * wait is a turn's: before the server reports a turn started it loads the config and the
 * provider and expands the notebook context (a kernel round trip), which a loaded 2-core
 * machine can stretch past half a minute.
 */
export async function pressSend(page: Page, timeoutMs = 60_000): Promise<void> {
  // Until the settings and providers are known the pane cannot send (its Send button is
  // disabled and Enter keeps the text): wait for that, as a person would.
  await page.locator('button.jp-cellmate-send:not([disabled])').waitFor({ timeout: timeoutMs });
  const before = (await page.locator('#jp-cellmate-panel').getAttribute('data-last-turn')) ?? '';
  await page.locator('textarea.jp-cellmate-input').press('Enter');
  await page.waitForFunction(
    (prev) => {
      const el = document.querySelector<HTMLElement>('#jp-cellmate-panel');
      return !!el && (el.dataset.running === 'true' || (el.dataset.lastTurn ?? '') !== prev);
    },
    before,
    { timeout: timeoutMs }
  );
}

/** Sends `text` from the pane's composer and waits until that turn has ended (see {@link pressSend}). */
export async function sendAndWaitForTurn(page: Page, text: string, timeoutMs = 60_000): Promise<void> {
  await page.locator('textarea.jp-cellmate-input').fill(text);
  await pressSend(page);
  await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: timeoutMs });
}

/**
 * Waits for the pending approval card of `tool` and clicks "Approve once", as a person does
 * on the default policy; resolves once one more card of that tool says it was answered.
 */
export async function approveOnce(page: Page, tool: string, timeoutMs = 60_000): Promise<void> {
  const cards = `.jp-cellmate-question[data-type="approval"][data-tool="${tool}"]`;
  const pending = page.locator(`${cards}[data-state="pending"]`).first();
  await pending.waitFor({ timeout: timeoutMs });
  const answered = await page.locator(`${cards}[data-state="answered"]`).count();
  await pending.locator('.jp-cellmate-approve-once').click();
  await page.waitForFunction(
    ([selector, before]) => document.querySelectorAll(`${selector}[data-state="answered"]`).length > before,
    [cards, answered] as const,
    { timeout: timeoutMs }
  );
}

/**
 * The lowest WCAG contrast ratio between the text colour and the background of the elements
 * `selector` matches (computed styles, `rgb()` or `color(srgb …)` as Chromium gives them);
 * the background is the first non-transparent one up the tree.
 */
export async function minContrast(page: Page, selector: string): Promise<number> {
  return page.evaluate((sel) => {
    const parse = (value: string): [number, number, number, number] => {
      const srgb = /color\(srgb ([\d.e-]+) ([\d.e-]+) ([\d.e-]+)(?: \/ ([\d.]+))?\)/.exec(value);
      if (srgb)
        return [
          Number(srgb[1]) * 255,
          Number(srgb[2]) * 255,
          Number(srgb[3]) * 255,
          srgb[4] === undefined ? 1 : Number(srgb[4])
        ];
      const rgb = /rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)/.exec(value);
      if (!rgb) throw new Error(`unparsed colour ${value}`);
      return [Number(rgb[1]), Number(rgb[2]), Number(rgb[3]), rgb[4] === undefined ? 1 : Number(rgb[4])];
    };
    const luminance = ([r, g, b]: number[]): number => {
      const c = [r, g, b].map((v) => {
        const s = v / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
    };
    const background = (el: Element | null): [number, number, number, number] => {
      for (let e = el; e; e = e.parentElement) {
        const bg = parse(getComputedStyle(e).backgroundColor);
        if (bg[3] > 0) return bg;
      }
      return [255, 255, 255, 1];
    };
    const ratios = [...document.querySelectorAll(sel)].map((el) => {
      const fg = luminance(parse(getComputedStyle(el).color));
      const bg = luminance(background(el));
      return (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
    });
    if (ratios.length === 0) throw new Error(`nothing matches ${sel}`);
    return Math.min(...ratios);
  }, selector);
}

/** Switches JupyterLab's theme and waits until the new one is applied (its splash gone). */
export async function setTheme(page: Page, theme: 'JupyterLab Light' | 'JupyterLab Dark'): Promise<void> {
  await runCommand(page, 'apputils:change-theme', { theme });
  await page.locator(`body[data-jp-theme-name="${theme}"]`).waitFor({ state: 'attached', timeout: 30_000 });
  await page.locator('#jupyterlab-splash').waitFor({ state: 'detached', timeout: 30_000 });
}
