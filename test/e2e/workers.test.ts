/**
 * Background workers in the browser (issue #16 item 5, SPEC VIBE-2), real JupyterLab +
 * Chromium, scripted models: the chat's agent spawns two workers (`vibe_spawn`); the pane's
 * workers list shows them running with their tier and elapsed time; a worker's transcript
 * opens read-only; Kill stops one (state `killed`, on the server too) while the other runs
 * to `done`.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openChat, openLab, openPane, pressSend, screenshot, screenshotIfFailed } from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';

// The chat's agent spawns a slow worker and a quick one; each worker's tier runs its own script.
const PARENT = {
  steps: [
    {
      toolCalls: [
        { toolName: 'vibe_spawn', input: { brief: 'Think it over, slowly.', label: 'slow thinker', tier: 'good' } },
        { toolName: 'vibe_spawn', input: { brief: 'Answer quickly.', label: 'quick answer', tier: 'fast' } }
      ]
    },
    { text: 'Two workers are on it.' }
  ]
};
const SLOW = {
  steps: [
    {
      text: 'still thinking about this, one word at a time, until someone stops me or the words run out at last',
      chunkDelayMs: 1500
    }
  ]
};
const QUICK = { steps: [{ text: 'Quick answer: 42.', chunkDelayMs: 600 }] };

describe('background workers in the pane (issue #16 item 5)', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;
  const row = (label: string) =>
    page.locator('.jp-cellmate-workers .jp-cellmate-worker[data-worker-id]', { hasText: label });

  beforeAll(async () => {
    jupyter = await startJupyter({
      files: {
        'scripts/parent.json': JSON.stringify(PARENT),
        'scripts/slow.json': JSON.stringify(SLOW),
        'scripts/quick.json': JSON.stringify(QUICK)
      },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/parent.json' },
      serverConfig: {
        workers: {
          tiers: {
            good: { provider: 'scripted', model: 'good-model', scriptPath: 'scripts/slow.json' },
            fast: { provider: 'scripted', model: 'fast-model', scriptPath: 'scripts/quick.json' }
          }
        }
      },
      env: { CELLMATE_POLICY: '/nonexistent/cellmate-policy.json' }
    });
    ({ browser, page } = await openPane(jupyter.labUrl));
  });

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
  });

  it('the workers list shows both workers; a transcript opens read-only; Kill stops one, the other finishes', async () => {
    expect(await page.locator('.jp-cellmate-workers').isHidden()).toBe(true); // no workers yet
    await page.locator('textarea.jp-cellmate-input').fill('Split this between two workers');
    await pressSend(page);
    await page
      .locator('.jp-cellmate-item[data-kind="assistant"]', { hasText: 'Two workers are on it.' })
      .waitFor({ timeout: 60_000 });

    await row('slow thinker').waitFor({ timeout: 30_000 });
    await row('quick answer').waitFor();
    expect(await row('slow thinker').getAttribute('data-state')).toBe('running');
    expect(await row('slow thinker').locator('.jp-cellmate-worker-tier').textContent()).toBe('good');
    expect(await row('quick answer').locator('.jp-cellmate-worker-tier').textContent()).toBe('fast');
    // Elapsed time runs on in the pane while the worker runs.
    const elapsed = row('slow thinker').locator('.jp-cellmate-worker-elapsed');
    const first = await elapsed.textContent();
    // The same clock as a running tool card's (`0:07`).
    expect(first).toMatch(/^\d+:\d\d$/);
    await expect.poll(() => elapsed.textContent()).not.toBe(first);

    // The quick worker finishes on its own.
    await page
      .locator('.jp-cellmate-workers .jp-cellmate-worker[data-state="done"]', { hasText: 'quick answer' })
      .waitFor({ timeout: 30_000 });
    await screenshot(page, 'workers-list-running');

    // Its transcript, read-only: the labelled brief and its answer.
    await row('quick answer').locator('button.jp-cellmate-worker-open').click();
    const dialog = page.locator('.jp-Dialog .jp-cellmate-worker-transcript');
    await dialog.waitFor();
    expect(await dialog.locator('[data-kind="user"]').first().textContent()).toContain(
      '## Task (from the main agent)\nAnswer quickly.'
    );
    expect(await dialog.locator('[data-kind="assistant"]').last().textContent()).toBe('Quick answer: 42.');
    expect(await dialog.locator('textarea, input').count()).toBe(0); // nothing to type into: read-only
    await screenshot(page, 'workers-transcript');
    await page.locator('.jp-Dialog button.jp-mod-accept').click();
    await dialog.waitFor({ state: 'detached' });

    // Kill the slow one from the list.
    await row('slow thinker').locator('button.jp-cellmate-worker-kill').click();
    await page
      .locator('.jp-cellmate-workers .jp-cellmate-worker[data-state="killed"]', { hasText: 'slow thinker' })
      .waitFor({ timeout: 30_000 });
    expect(await row('slow thinker').locator('button.jp-cellmate-worker-kill').isDisabled()).toBe(true);
    expect(await row('quick answer').getAttribute('data-state')).toBe('done');
    await screenshot(page, 'workers-killed');

    // The server agrees, and a reload shows the same list (it comes from the companion, not the page).
    await openLab(page, jupyter.labUrl);
    await openChat(page);
    await page
      .locator('.jp-cellmate-workers .jp-cellmate-worker[data-state="killed"]', { hasText: 'slow thinker' })
      .waitFor({ timeout: 30_000 });
    expect(await row('quick answer').getAttribute('data-state')).toBe('done');
  });
});
