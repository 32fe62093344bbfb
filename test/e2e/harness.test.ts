/**
 * The harness end to end (issue #4) in Debian's Chromium against a real JupyterLab: a
 * scripted model's `write` asks for approval (HARN-6) → an approval card appears and is
 * approved → an `ask_user` card (ASK-2) is answered with key 2 → the turn continues and
 * ends. With the pane closed (no interactive connection), `ask_user` fails at once
 * (ASK-3, fail-closed). The metrics command shows the calls (HARN-7).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ToolCallItem } from '@cellmate/protocol';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  launchBrowser,
  openChat,
  openLab,
  pressSend,
  runCommand,
  screenshot,
  screenshotIfFailed
} from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';
import { connectRpc } from '../support/rpc';

const ASK = {
  toolName: 'ask_user',
  input: {
    question: 'Which chart should the summary use?',
    options: [{ label: 'Bar chart' }, { label: 'Line chart', description: 'monthly trend' }],
    allow_free_text: false
  }
};

const SCRIPT = {
  turns: [
    [
      {
        text: 'I will write the summary first.',
        toolCalls: [{ toolName: 'write', input: { path: 'summary.md', content: '# Summary\n\nSales rose.\n' } }]
      },
      { toolCalls: [ASK] },
      { text: 'Done: the summary is written and I will use your chart choice.' }
    ],
    [{ toolCalls: [ASK] }, { text: 'Nobody answered, so I assumed a bar chart.' }]
  ]
};
const MODEL = { provider: 'scripted' as const, model: 'script', scriptPath: 'scripts/harness.json' };

describe('approval and ask_user cards (issue #4)', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    jupyter = await startJupyter({
      files: { 'scripts/harness.json': JSON.stringify(SCRIPT), 'README.md': '# Harness test\n' },
      cellmateSettings: MODEL,
      // No policy file from the machine's home: tier defaults apply (write → ask).
      env: { CELLMATE_POLICY: '/nonexistent/cellmate-policy.json' }
    });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await openLab(page, jupyter.labUrl);
  });

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
  });

  it('an approval card and an ask_user card appear, are answered, and the turn continues (HARN-6, ASK-2)', async () => {
    await openChat(page);
    await page.locator('textarea.jp-cellmate-input').fill('Summarise the sales data');
    await pressSend(page);

    const approval = page.locator(
      '.jp-cellmate-item[data-kind="question"] .jp-cellmate-question[data-type="approval"]'
    );
    await approval.locator('xpath=self::*[@data-state="pending"]').waitFor({ timeout: 30_000 });
    expect(await approval.innerText()).toContain('summary.md');
    await screenshot(page, 'harness-approval-card');
    await approval.locator('.jp-cellmate-approve-once').click();
    await approval.locator('xpath=self::*[@data-state="answered"]').waitFor({ timeout: 30_000 });
    await page.locator('.jp-cellmate-tool-card[data-tool-name="write"][data-status="ok"]').waitFor({ timeout: 30_000 });

    const ask = page.locator('.jp-cellmate-question[data-type="ask"]');
    await ask.locator('xpath=self::*[@data-state="pending"]').waitFor({ timeout: 30_000 });
    expect(await ask.locator('.jp-cellmate-question-option').allInnerTexts()).toEqual([
      expect.stringContaining('Bar chart'),
      expect.stringContaining('Line chart')
    ]);
    await screenshot(page, 'harness-ask-card');
    await ask.press('2'); // keys 1–9 pick; single-select without free text submits at once
    await ask.locator('xpath=self::*[@data-state="answered"]').waitFor({ timeout: 30_000 });
    expect(await ask.locator('.jp-cellmate-question-option[aria-pressed="true"]').innerText()).toContain('Line chart');

    await page
      .locator('.jp-cellmate-item[data-kind="assistant"]')
      .filter({ hasText: 'summary is written' })
      .waitFor({ timeout: 30_000 });
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 30_000 });
    const askCard = page.locator('.jp-cellmate-tool-card[data-tool-name="ask_user"][data-status="ok"]');
    await askCard.locator('summary').click();
    expect(await askCard.innerText()).toContain('The user chose: 2. Line chart');
    expect(await readFile(path.join(jupyter.workspace, 'summary.md'), 'utf8')).toBe('# Summary\n\nSales rose.\n');
    await screenshot(page, 'harness-turn-done');
  });

  it('shows per-tool metrics from the audit log (HARN-7)', async () => {
    await runCommand(page, 'cellmate:show-metrics');
    const table = page.locator('.jp-cellmate-metrics');
    await table.waitFor({ timeout: 30_000 });
    await table.locator('tr[data-tool="write"]').waitFor({ timeout: 30_000 });
    expect(await table.locator('tr[data-tool="write"]').innerText()).toMatch(/write\s+1\s+100%/);
    // The write waited for the person's "Approve once": that wait has its own column, not the run time's.
    expect(await table.locator('th').allInnerTexts()).toEqual([
      'Tool',
      'Calls',
      'Success',
      'Mean run time',
      'Waited for you',
      'Errors',
      'Denied',
      'Withheld',
      'Auto-allowed',
      'Auto asked',
      'Auto timed out'
    ]);
    expect(await table.locator('tr[data-tool="write"] td').nth(4).innerText()).toMatch(/^1 call, mean [\d.]+ (ms|s)$/);
    // ask_user asked no approval (answering it is its own run): nothing in that column.
    expect(await table.locator('tr[data-tool="ask_user"] td').nth(4).innerText()).toBe('—');
    await screenshot(page, 'harness-metrics');
    await page.keyboard.press('Escape');
  });

  it('with the pane closed, ask_user fails at once (ASK-3)', async () => {
    const chatId = await page.evaluate(
      () => document.querySelector<HTMLSelectElement>('select.jp-cellmate-chat-select')?.value ?? ''
    );
    expect(chatId).not.toBe('');
    await page.close();
    const rpc = await connectRpc(jupyter.wsUrl, jupyter.token);
    try {
      // Wait until the closed page's connection is gone (no interactive connection left).
      for (;;) {
        const hello = await rpc.request('cellmate/hello', { protocolVersion: 1 });
        if (hello.interactiveConnections === 0) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      await rpc.request('chat/send', { chatId, text: 'Make the chart', model: MODEL });
      await rpc.waitForEvent(chatId, (e) => e.type === 'turn-ended', 60_000);
      const events = rpc.events(chatId);
      expect(events.some((e) => e.type === 'item-added' && e.item.kind === 'question')).toBe(false);
      const asked = events
        .filter((e) => e.type === 'item-updated' && e.item.kind === 'tool' && e.item.name === 'ask_user')
        .map((e) => (e as { item: ToolCallItem }).item);
      expect(asked).toHaveLength(1);
      expect(asked[0]!.status).toBe('error');
      expect(asked[0]!.output).toMatch(/^Nobody is connected to answer \(the Cellmate pane is closed\)/);
    } finally {
      rpc.close();
    }
  });
});
