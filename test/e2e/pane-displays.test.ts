/**
 * Tool cards by display kind (issue #9): the card draws `item.display` with the renderer of
 * its `kind` — `eval` (kernel badge, rich outputs untrusted), `text` (plain text: markup in
 * it is shown, never parsed), an unknown kind from a newer server (its JSON as text) and a
 * kind-less eval display from a chat file written before kinds existed (as eval). Real
 * JupyterLab, Debian's Chromium, a chat file in the workspace (no model involved).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openChat, openLab, screenshot, screenshotIfFailed } from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';

const T = '2026-01-01T00:00:00.000Z';
const HOSTILE = '<img src=x onerror="window.__pwned=1"><b>bold?</b>';
const tool = (id: string, name: string, display: unknown) => ({
  kind: 'tool',
  id,
  time: T,
  turnId: 't1',
  callId: `call-${id}`,
  name,
  args: {},
  actor: 'model',
  status: 'ok',
  durationMs: 5,
  output: `${name} output`,
  title: name,
  display
});
const kernel = { id: 'private-1', name: 'python3', language: 'python', origin: 'private' };
const CHAT = {
  version: 1,
  titleSource: 'user',
  messages: [],
  chat: {
    id: 'displays',
    title: 'Displays',
    mode: 'agent',
    createdAt: T,
    updatedAt: T,
    running: false,
    items: [
      { kind: 'user', id: 'u1', time: T, turnId: 't1', text: 'show me' },
      tool('eval-new', 'eval', { kind: 'eval', kernel, rewrites: [], outputs: [{ 'text/plain': 'new eval out' }] }),
      tool('eval-legacy', 'eval', {
        kernel,
        rewrites: ['%pip → pip'],
        outputs: [{ 'text/html': `<i>legacy html</i>${HOSTILE}` }]
      }),
      tool('text', 'lint', { kind: 'text', label: 'stderr', text: HOSTILE }),
      tool('future', 'debug', { kind: 'debug-state', frames: [{ name: 'main', line: 3 }] })
    ]
  }
};

describe('tool cards by display kind (issue #9)', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    jupyter = await startJupyter({
      files: { '.cellmate/chats/displays.json': JSON.stringify(CHAT) },
      cellmateSettings: { provider: 'scripted', model: 'script' }
    });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
    await openLab(page, jupyter.labUrl);
  });

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
  });

  const item = (id: string) => page.locator(`.jp-cellmate-item[data-item-id="${id}"]`);

  it('renders each display with the renderer of its kind; text is never parsed as HTML', async () => {
    await openChat(page);
    await page.locator('select.jp-cellmate-chat-select').selectOption('displays');
    await item('future').waitFor({ timeout: 15_000 });
    // A card with HTML output opens by itself (openByDefault); the test opens the others.
    expect(await item('eval-legacy').locator('details.jp-cellmate-tool-card').getAttribute('open')).not.toBeNull();
    expect(await item('text').locator('details.jp-cellmate-tool-card').getAttribute('open')).toBeNull();
    await page.evaluate(() =>
      document.querySelectorAll<HTMLDetailsElement>('details.jp-cellmate-tool-card').forEach((d) => (d.open = true))
    );

    // eval, tagged and kind-less: kernel badge and rich outputs through rendermime.
    for (const id of ['eval-new', 'eval-legacy']) {
      expect(await item(id).locator('.jp-cellmate-tool-kernel').innerText()).toMatch(/python3 · private/);
      await item(id).locator('.jp-cellmate-eval-output .jp-cellmate-eval-mime').first().waitFor({ timeout: 10_000 });
    }
    expect(await item('eval-new').locator('.jp-cellmate-eval-output').innerText()).toContain('new eval out');
    await item('eval-legacy')
      .locator('.jp-cellmate-eval-mime[data-mime-type="text/html"] i', { hasText: 'legacy html' })
      .waitFor({ timeout: 10_000 });
    expect(await item('eval-legacy').locator('ul.jp-cellmate-eval-rewrites').innerText()).toContain('%pip → pip');

    // text: shown literally.
    const text = item('text').locator('.jp-cellmate-display-text[data-display-kind="text"]');
    expect(await text.locator('pre').innerText()).toBe(HOSTILE);
    expect(await text.locator('.jp-cellmate-tool-heading').textContent()).toBe('stderr');
    expect(await item('text').locator('.jp-cellmate-tool-display img, .jp-cellmate-tool-display b').count()).toBe(0);
    expect(await item('text').locator('.jp-cellmate-tool-kernel').innerText()).toBe('');

    // A kind this pane does not know: its JSON as text, not dropped and not an eval view.
    const future = item('future').locator('.jp-cellmate-display-text[data-display-kind="debug-state"]');
    expect(await future.innerText()).toContain('"frames"');
    expect(await item('future').locator('.jp-cellmate-eval-output').count()).toBe(0);

    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await screenshot(page, 'pane-displays-by-kind');
  });
});
