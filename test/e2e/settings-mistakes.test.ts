/**
 * Settings a person gets wrong, in Debian's Chromium against a real JupyterLab: a workspace
 * `.cellmate/mcp.json` with a trailing comma and a `.cellmate/policy.json` that is not JSON.
 * The MCP servers dialog names the broken file and what is wrong (not "no servers are
 * configured"); the next turn's chat shows a warning per file; and Cellmate keeps working —
 * the write still asks on the default policy and, approved, writes.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import {
  approveOnce,
  launchBrowser,
  openChat,
  openLab,
  pressSend,
  runCommand,
  screenshot,
  screenshotIfFailed
} from '../support/browser';
import { startJupyter, type Jupyter } from '../support/jupyter';

const SCRIPT = {
  steps: [
    { toolCalls: [{ toolName: 'write', input: { path: 'kiln.txt', content: 'cone 6\n' } }] },
    { text: 'Wrote kiln.txt.' }
  ]
};

describe('settings a person gets wrong', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    jupyter = await startJupyter({
      files: {
        'scripts/write.json': JSON.stringify(SCRIPT),
        '.cellmate/mcp.json': '{"mcpServers": {"fx": {"command": "node", "args": ["server.mjs"]},}}',
        '.cellmate/policy.json': "{rules: [{tool: 'shell', pattern: 'rm*', action: 'deny'}]}"
      },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/write.json' }
    });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await openLab(page, jupyter.labUrl);
    await openChat(page);
  });

  afterEach((ctx) => screenshotIfFailed(ctx, page));

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
  });

  it('HARN-12: the MCP servers dialog names a config file that does not parse and what is wrong', async () => {
    await runCommand(page, 'cellmate:show-mcp-servers');
    const problem = page.locator('.jp-Dialog ul.jp-cellmate-mcp-problems li');
    await problem.waitFor({ timeout: 30_000 });
    const text = await problem.innerText();
    expect(text).toContain(path.join(jupyter.workspace, '.cellmate', 'mcp.json'));
    expect(text).toMatch(/JSON/);
    expect(text).toContain('restart JupyterLab');
    expect(await page.locator('.jp-Dialog').innerText()).not.toContain('No MCP servers are configured');
    await screenshot(page, 'settings-mistakes-mcp-dialog');
    await page.keyboard.press('Escape');
    await page.locator('.jp-Dialog').waitFor({ state: 'detached' });
  });

  it('HARN-6 HARN-12: the next turn warns of each broken file in the chat, and the write still asks and writes', async () => {
    await page.locator('textarea.jp-cellmate-input').fill('Note the cone in kiln.txt');
    await pressSend(page);
    const warnings = page.locator('.jp-cellmate-notice[data-level="warning"]');
    await warnings.nth(1).waitFor({ timeout: 60_000 });
    const texts = await warnings.allInnerTexts();
    expect(texts.find((t) => t.includes(path.join('.cellmate', 'policy.json')))).toMatch(
      /is ignored: .*None of its rules apply until it is fixed/
    );
    expect(texts.find((t) => t.includes(path.join('.cellmate', 'mcp.json')))).toMatch(/restart JupyterLab/);
    await screenshot(page, 'settings-mistakes-chat-warnings');
    await approveOnce(page, 'write');
    await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 60_000 });
    expect(await fs.readFile(path.join(jupyter.workspace, 'kiln.txt'), 'utf8')).toBe('cone 6\n');
  });
});
