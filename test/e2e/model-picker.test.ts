/**
 * The header's model picker (issue #27), in Debian's Chromium against a real JupyterLab. The
 * model is a stand-in OpenAI-compatible server (`server/test/helpers/provider-stand-in.ts`)
 * that lists two models on `/v1/models` and records every request the real AI SDK provider
 * sends: which model answered is read from the wire, not from the pane.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startProviderStandIn, type ProviderStandIn } from '../../server/test/helpers/provider-stand-in';
import { openChat, openLab, openPane, screenshot, screenshotIfFailed, sendAndWaitForTurn } from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';

const MODELS = ['alpha-coder', 'beta-analyst'];

describe('model picker: per-chat model, main and fast tiers (issue #27)', () => {
  let standIn: ProviderStandIn;
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;

  const picker = () => page.locator('select.jp-cellmate-model-select');
  /** The models of the chat requests the stand-in answered (the `/v1/models` listing is not a request). */
  const requestedModels = () => standIn.requests.map((r) => r.body.model as string);

  beforeAll(async () => {
    standIn = await startProviderStandIn(
      'openai-compatible',
      (request) => ({ text: `Answered by ${String(request.body.model)}.` }),
      { models: MODELS }
    );
    jupyter = await startJupyter({
      env: standIn.env,
      cellmateSettings: { provider: 'openai-compatible', model: 'alpha-coder', baseUrl: standIn.settings.baseUrl }
    });
    ({ browser, page } = await openPane(jupyter.labUrl));
  });

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
    await standIn?.close();
  });

  it('the header shows the settings’ model and lists the server’s models', async () => {
    await expect
      .poll(() => picker().getAttribute('data-model'), { timeout: 20_000 })
      .toBe('openai-compatible/alpha-coder');
    expect(await picker().getAttribute('data-follows')).toBe('true');
    await expect
      .poll(() => picker().locator('option').allTextContents(), { timeout: 20_000 })
      .toEqual(expect.arrayContaining([expect.stringContaining('beta-analyst')]));
    expect(await picker().locator('option').first().textContent()).toBe('Model: alpha-coder · openai-compatible');
  });

  it('picking a model switches this chat: the next request goes to it, and it survives a reload', async () => {
    await sendAndWaitForTurn(page, 'Which model are you?');
    expect(requestedModels().at(-1)).toBe('alpha-coder');
    await expect
      .poll(() => page.locator('.jp-cellmate-item[data-kind="assistant"]').last().textContent())
      .toContain('Answered by alpha-coder.');

    // A person opens the picker and chooses the other model the server lists.
    await picker().selectOption({ label: 'beta-analyst · openai-compatible' });
    await expect
      .poll(() => picker().getAttribute('data-model'), { timeout: 10_000 })
      .toBe('openai-compatible/beta-analyst');
    expect(await picker().getAttribute('data-follows')).toBe('false');
    await sendAndWaitForTurn(page, 'And now?');
    expect(requestedModels().at(-1)).toBe('beta-analyst');
    await expect
      .poll(() => page.locator('.jp-cellmate-item[data-kind="assistant"]').last().textContent())
      .toContain('Answered by beta-analyst.');
    await screenshot(page, 'model-picker-switched');

    // The choice is the chat's: a reload brings it back, and the next request still goes to it.
    await openLab(page, jupyter.labUrl);
    await openChat(page);
    await expect
      .poll(() => picker().getAttribute('data-model'), { timeout: 20_000 })
      .toBe('openai-compatible/beta-analyst');
    expect(await picker().locator('option:checked').textContent()).toBe('Model: beta-analyst · openai-compatible');
    await sendAndWaitForTurn(page, 'Still you?');
    expect(requestedModels().at(-1)).toBe('beta-analyst');
  });

  it('a new chat follows the settings again; "Settings’ model" brings a chat back to them', async () => {
    const picked = await page.locator('select.jp-cellmate-chat-select').inputValue();
    await page.locator('.jp-cellmate-new-chat').click();
    await expect
      .poll(() => page.locator('select.jp-cellmate-chat-select').inputValue(), { timeout: 10_000 })
      .not.toBe(picked);
    await expect
      .poll(() => picker().getAttribute('data-model'), { timeout: 10_000 })
      .toBe('openai-compatible/alpha-coder');
    await sendAndWaitForTurn(page, 'Fresh chat.');
    expect(requestedModels().at(-1)).toBe('alpha-coder');

    // Back in the first chat, the person returns it to the settings' model.
    await page.locator('select.jp-cellmate-chat-select').selectOption(picked);
    await expect
      .poll(() => picker().getAttribute('data-model'), { timeout: 10_000 })
      .toBe('openai-compatible/beta-analyst');
    await picker().selectOption({ index: 0 });
    await expect.poll(() => picker().getAttribute('data-follows'), { timeout: 10_000 }).toBe('true');
    await sendAndWaitForTurn(page, 'Back to the default.');
    expect(requestedModels().at(-1)).toBe('alpha-coder');
  });
});
