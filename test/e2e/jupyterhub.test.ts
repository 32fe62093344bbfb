/**
 * Cellmate under JupyterHub (issue #13 acceptance 2, SPEC §0): a real Hub with the Dummy
 * authenticator, configurable-http-proxy and local process spawner (test/support/hub.ts).
 * Two users log in through the Hub's login page in Chromium; each one's pane connects at
 * `/user/<name>/` behind the proxy, runs an `eval` in a private kernel, and lists only that
 * user's chats (each user's companion is its own process with its own workspace). A request
 * to one user's `/cellmate/ws` with the other user's Hub token is refused; with the owner's
 * it is accepted (so the refusal is about the token, not the route).
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, openChat, openLab, pressSend, screenshot } from '../support/browser';
import { startHub, type Hub } from '../support/hub';

const USERS = ['alice', 'bob'] as const;
type User = (typeof USERS)[number];

const script = (user: User) => ({
  turns: [
    [
      {
        toolCalls: [
          {
            toolName: 'eval',
            input: { description: `Greet ${user}`, code: `import os\nprint("hello ${user}", 6 * 7, os.getcwd())` }
          }
        ]
      },
      { text: `Done for ${user}.` }
    ]
  ]
});

/** The upgrade's HTTP status: 101 when the WebSocket opened, else the refusal's status. */
function upgradeStatus(url: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { Authorization: `token ${token}` } });
    ws.once('open', () => {
      ws.close();
      resolve(101);
    });
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('error', reject);
  });
}

describe('Cellmate under JupyterHub (issue #13)', () => {
  let hub: Hub;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  const pages = new Map<User, Page>();

  beforeAll(async () => {
    hub = await startHub({
      users: Object.fromEntries(
        USERS.map((u) => [u, { 'scripts/hello.json': JSON.stringify(script(u)), [`${u}-notes.md`]: `# ${u}\n` }])
      ),
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/hello.json' }
    });
    browser = await launchBrowser();
  }, 120_000);

  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => undefined);
    await browser?.close();
    await hub?.stop();
  });

  for (const user of USERS) {
    it(`${user} logs in; the pane connects at /user/${user}/ and an eval runs in ${user}'s workspace`, async () => {
      const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
      contexts.push(context);
      const page = await context.newPage();
      pages.set(user, page);
      await page.goto(`${hub.url}/hub/login`);
      await page.locator('#username_input').fill(user);
      await page.locator('#password_input').fill('any password');
      await page.locator('#login_submit').click();
      // The Hub spawns the server and redirects to it once it answers.
      await page.waitForURL(new RegExp(`/user/${user}/lab`), { timeout: 150_000 });
      await openLab(page, `${hub.url}/user/${user}/lab`);
      await openChat(page, 60_000);
      await page.locator('textarea.jp-cellmate-input').fill(`${user} asks for a greeting`);
      await pressSend(page);
      const card = page.locator('.jp-cellmate-tool-card[data-tool-name="eval"]').last();
      await card.locator('xpath=self::*[@data-status="ok"]').waitFor({ timeout: 120_000 });
      await page.locator('#jp-cellmate-panel[data-running="false"]').waitFor({ timeout: 30_000 });
      const text = (await card.textContent()) ?? '';
      expect(text).toContain(`hello ${user} 42`);
      expect(text).toContain(path.join(hub.home(user), 'work'));
      await screenshot(page, `jupyterhub-${user}`);
    }, 300_000);
  }

  it('each user lists only their own chats, stored in their own workspace', async () => {
    for (const user of USERS) {
      const page = pages.get(user)!;
      await openLab(page, `${hub.url}/user/${user}/lab`);
      await openChat(page, 60_000);
      const other = USERS.find((u) => u !== user)!;
      await page
        .locator('select.jp-cellmate-chat-select option', { hasText: `${user} asks for a greeting` })
        .waitFor({ state: 'attached', timeout: 30_000 });
      const titles = await page.locator('select.jp-cellmate-chat-select option').allInnerTexts();
      expect(titles.join('\n'), titles.join('\n')).toContain(`${user} asks for a greeting`);
      expect(titles.join('\n')).not.toContain(other);
      const chats = path.join(hub.home(user), 'work', '.cellmate', 'chats');
      expect(existsSync(chats) && readdirSync(chats).length > 0, chats).toBe(true);
    }
  }, 180_000);

  it("a user's /cellmate/ws refuses the other user's Hub token and accepts the owner's", async () => {
    const ws = (owner: User) => `${hub.url.replace(/^http/, 'ws')}/user/${owner}/cellmate/ws`;
    const [aliceToken, bobToken] = [await hub.userToken('alice'), await hub.userToken('bob')];
    expect(await upgradeStatus(ws('alice'), bobToken)).toBe(403);
    expect(await upgradeStatus(ws('bob'), aliceToken)).toBe(403);
    expect(await upgradeStatus(ws('alice'), aliceToken)).toBe(101);
    expect(await upgradeStatus(ws('bob'), bobToken)).toBe(101);
  }, 60_000);
});
