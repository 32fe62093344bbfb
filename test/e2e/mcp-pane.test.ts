/**
 * Issue #14 item 2 through the whole stack: a workspace `.cellmate/mcp.json` configures the
 * 150-tool fixture MCP server (stdio, the SDK's server side); a scripted turn searches for a
 * tool, which starts the server lazily, and calls it; the approval card in the pane shows
 * the tool's description on first use; approved, the result reaches the transcript. The
 * palette's MCP servers dialog lists the server running, its tools, and the name it refused.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
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
import { repoRoot } from '../support/paths';

const fixture = path.join(repoRoot, 'server', 'test', 'mcp', 'fixtures', 'fixture-server.mjs');
const SCRIPT = {
  turns: [
    [
      { toolCalls: [{ toolName: 'tool_search', input: { query: 'weather forecast' } }] },
      { toolCalls: [{ toolName: 'fx__weather_forecast', input: { city: 'Lisbon', days: 2 } }] },
      { text: 'Sunny in Lisbon.' }
    ]
  ]
};

describe('an MCP server in the pane (issue #14)', () => {
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    // Its own CELLMATE_HOME: approved MCP descriptions are kept there, and this run starts from none.
    const home = await fs.mkdtemp(path.join(os.tmpdir(), 'cellmate-mcp-home-'));
    // This person trusts their workspaces to start the commands their own mcp.json defines.
    await fs.writeFile(path.join(home, 'mcp.json'), JSON.stringify({ trustedWorkspaces: true, mcpServers: {} }));
    jupyter = await startJupyter({
      files: {
        'scripts/mcp.json': JSON.stringify(SCRIPT),
        '.cellmate/mcp.json': JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [fixture] } } })
      },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/mcp.json' },
      env: { CELLMATE_POLICY: '/nonexistent/cellmate-policy.json', CELLMATE_HOME: home }
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

  it('lists the server as not started before any turn', async () => {
    await openChat(page);
    await runCommand(page, 'cellmate:show-mcp-servers');
    await page
      .locator('table.jp-cellmate-mcp-servers tr[data-server="fx"][data-state="not-started"]')
      .waitFor({ timeout: 30_000 });
    await page.keyboard.press('Escape');
  });

  it('a turn finds and calls an MCP tool; the approval card shows its description first', async () => {
    await page.locator('textarea.jp-cellmate-input').fill('What is the weather in Lisbon?');
    await pressSend(page);
    const approval = page.locator(
      '.jp-cellmate-item[data-kind="question"] .jp-cellmate-question[data-type="approval"]'
    );
    await approval.locator('xpath=self::*[@data-state="pending"]').waitFor({ timeout: 60_000 });
    const text = await approval.innerText();
    expect(text).toContain('fx__weather_forecast');
    expect(text).toContain('Forecast the weather for a city');
    await screenshot(page, 'mcp-approval-card');
    await approval.locator('.jp-cellmate-approve-once').click();
    await page
      .locator('.jp-cellmate-tool-card[data-tool-name="fx__weather_forecast"][data-status="ok"]')
      .waitFor({ timeout: 30_000 });
    await page
      .locator('.jp-cellmate-item[data-kind="assistant"]')
      .filter({ hasText: 'Sunny in Lisbon.' })
      .waitFor({ timeout: 30_000 });
  });

  it('the MCP servers dialog shows it running with its tools and the name it refused', async () => {
    await runCommand(page, 'cellmate:show-mcp-servers');
    const row = page.locator('table.jp-cellmate-mcp-servers tr[data-server="fx"][data-state="running"]');
    await row.waitFor({ timeout: 30_000 });
    const cells = await row.locator('td').allInnerTexts();
    expect(cells.slice(0, 5)).toEqual(['fx', 'stdio', 'running', '0', '149']);
    expect(cells[5]).toContain('"echo_text" is not available');
    await screenshot(page, 'mcp-servers-dialog');
    await page.keyboard.press('Escape');
  });
});
