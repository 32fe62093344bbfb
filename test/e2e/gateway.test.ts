/**
 * Notebook kernels on a remote gateway (issue #13 acceptance 4, SPEC §0): a real Jupyter
 * Kernel Gateway (jupyter_kernel_gateway, pinned in requirements-dev.txt) on loopback with
 * an auth token, and JupyterLab started with `--gateway-url` and the client's token. The
 * notebook's kernel is started by the gateway (its process is the gateway's child, its id is
 * in the gateway's /api/kernels); the agent's `eval` reaches it through Jupyter Server and
 * shares the notebook's variables. Private kernels stay local (README "Install").
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import {
  launchBrowser,
  openChat,
  openLab,
  runCommand,
  screenshot,
  screenshotIfFailed,
  sendAndWaitForTurn
} from '../support/browser';
import { freePort, startJupyter, type Jupyter } from '../support/jupyter';
import { venvBin } from '../support/paths';

const NOTEBOOK = JSON.stringify({
  cells: [{ cell_type: 'code', id: 'set', metadata: {}, source: 'shared = 41', outputs: [], execution_count: null }],
  metadata: { kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' } },
  nbformat: 4,
  nbformat_minor: 5
});
const SCRIPT = {
  turns: [
    [
      {
        toolCalls: [
          {
            toolName: 'eval',
            input: {
              description: 'Read the notebook variable',
              code: 'import os\nprint("shared + 1 =", shared + 1, "parent", os.getppid())'
            }
          }
        ]
      },
      { text: 'The notebook kernel answered.' }
    ]
  ]
};

type App = {
  shell: { currentWidget: { sessionContext: { session?: { kernel?: { id: string; status: string } } } } | null };
};

describe('a notebook kernel on a Kernel Gateway (issue #13)', () => {
  let gateway: ChildProcess;
  let gatewayDir: string;
  let gatewayUrl: string;
  const gatewayToken = randomBytes(16).toString('hex');
  const gatewayLog: string[] = [];
  let jupyter: Jupyter;
  let browser: Browser;
  let page: Page;
  const gatewayApi = (p: string) => fetch(`${gatewayUrl}${p}`, { headers: { Authorization: `token ${gatewayToken}` } });

  beforeAll(async () => {
    gatewayDir = await fs.mkdtemp(path.join(os.tmpdir(), 'cellmate-gateway-'));
    const port = await freePort();
    gatewayUrl = `http://127.0.0.1:${port}`;
    gateway = spawn(
      path.join(venvBin, 'jupyter'),
      [
        'kernelgateway',
        '--KernelGatewayApp.ip=127.0.0.1',
        `--KernelGatewayApp.port=${port}`,
        // The client sends `Authorization: token <auth_token>` (GatewayClient.auth_token below).
        `--KernelGatewayApp.auth_token=${gatewayToken}`,
        // Jupyter Server lists the gateway's kernels (GET /api/kernels): off by default (403).
        '--JupyterWebsocketPersonality.list_kernels=True'
      ],
      {
        cwd: gatewayDir,
        env: {
          ...process.env,
          PATH: `${venvBin}:${process.env.PATH ?? ''}`,
          JUPYTER_RUNTIME_DIR: path.join(gatewayDir, 'runtime')
        },
        stdio: ['ignore', 'pipe', 'pipe']
      }
    );
    for (const stream of [gateway.stdout!, gateway.stderr!]) {
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => gatewayLog.push(...chunk.split('\n').filter(Boolean)));
    }
    const deadline = Date.now() + 90_000;
    for (;;) {
      if (gateway.exitCode !== null)
        throw new Error(`the kernel gateway exited with ${gateway.exitCode}:\n${gatewayLog.slice(-30).join('\n')}`);
      if (
        await gatewayApi('/api/kernelspecs').then(
          (r) => r.ok,
          () => false
        )
      )
        break;
      if (Date.now() > deadline)
        throw new Error(`the kernel gateway did not answer within 90 s:\n${gatewayLog.slice(-30).join('\n')}`);
      await new Promise((r) => setTimeout(r, 300));
    }
    jupyter = await startJupyter({
      files: { 'analysis.ipynb': NOTEBOOK, 'scripts/gateway.json': JSON.stringify(SCRIPT) },
      cellmateSettings: { provider: 'scripted', model: 'script', scriptPath: 'scripts/gateway.json' },
      args: [
        `--gateway-url=${gatewayUrl}`,
        `--GatewayClient.auth_token=${gatewayToken}`,
        '--GatewayClient.request_timeout=120'
      ]
    });
    browser = await launchBrowser();
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await openLab(page, jupyter.labUrl);
  }, 240_000);

  afterEach((ctx) => (page ? screenshotIfFailed(ctx, page) : undefined));

  afterAll(async () => {
    await browser?.close();
    await jupyter?.stop();
    if (gateway && gateway.exitCode === null) {
      gateway.kill('SIGTERM');
      await new Promise((r) => gateway.once('exit', r));
    }
    if (gatewayDir) await fs.rm(gatewayDir, { recursive: true, force: true });
  });

  it("the notebook's kernel runs on the gateway, and the agent's eval in it sees the notebook's variables", async () => {
    await runCommand(page, 'docmanager:open', { path: 'analysis.ipynb' });
    await page.waitForFunction(
      () =>
        (window as unknown as { jupyterapp: App }).jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel
          ?.status === 'idle',
      undefined,
      { timeout: 120_000 }
    );
    const kernelId = await page.evaluate(
      () =>
        (window as unknown as { jupyterapp: App }).jupyterapp.shell.currentWidget!.sessionContext.session!.kernel!.id
    );
    const onGateway = (await (await gatewayApi('/api/kernels')).json()) as Array<{ id: string }>;
    expect(onGateway.map((k) => k.id)).toContain(kernelId);

    await runCommand(page, 'notebook:run-cell');
    await page
      .locator('.jp-Notebook .jp-Cell')
      .first()
      .locator('.jp-InputPrompt', { hasText: '[1]' })
      .waitFor({ timeout: 60_000 });
    await openChat(page);
    await page
      .locator('.jp-cellmate-kernel-binding[data-origin="notebook"]', { hasText: 'analysis.ipynb' })
      .waitFor({ timeout: 30_000 });
    await sendAndWaitForTurn(page, 'What is shared + 1?', 120_000);
    const card = page.locator('.jp-cellmate-tool-card[data-tool-name="eval"]').last();
    await card.locator('xpath=self::*[@data-status="ok"]').waitFor({ timeout: 30_000 });
    const text = (await card.textContent()) ?? '';
    expect(text).toContain('shared + 1 = 42');
    // The kernel process is the gateway's child, not Jupyter's or the companion's.
    expect(text).toContain(`parent ${gateway.pid}`);
    await screenshot(page, 'gateway-notebook-eval');
  }, 300_000);
});
