/**
 * Issue #14 item 3 / acceptance 4: Cellmate's MCP server, driven by a client nobody here
 * wrote — the official Python MCP SDK (`mcp`, pinned in requirements-dev.txt) in the project
 * venv, `fixtures/mcp_client.py` — over stdio (`cellmate mcp`) and over the Jupyter route
 * `<base_url>cellmate/mcp` of a real JupyterLab (relayed to the companion's `mcp.sock`).
 * Both list exactly the stateless tools and call them through the one registry wrapper: the
 * workspace's policy applies (a denied folder stays denied, grep withholds it), confinement
 * refuses an escape, arguments are validated, eval is not exposed, the audit says actor
 * `mcp`. Without the token (or with a wrong one) the route answers 403.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startJupyter, type Jupyter } from '../support/jupyter';
import { connectRpc } from '../support/rpc';
import { repoRoot, venvBin } from '../support/paths';

const EXPOSED = ['ast_grep', 'code_graph', 'glob', 'grep', 'lsp', 'read'];
const client = path.join(repoRoot, 'test', 'e2e', 'fixtures', 'mcp_client.py');
const mainJs = path.join(repoRoot, 'server', 'dist', 'main.js');
const FILES = {
  'notes.md': 'hello needle\n',
  'secret/key.txt': 'needle in the secret\n',
  '.cellmate/policy.json': JSON.stringify({
    rules: [
      { tool: 'read', pattern: '/secret/**', action: 'deny' },
      { tool: 'grep', pattern: '/secret/**', action: 'deny' },
      { tool: 'glob', pattern: '*', action: 'ask' }
    ]
  })
};

type Report = Record<string, unknown> & { tools: string[]; readOnly: Record<string, boolean> };

function runClient(args: string[], env: NodeJS.ProcessEnv = process.env): Report {
  const run = spawnSync(path.join(venvBin, 'python'), [client, ...args], { encoding: 'utf8', timeout: 90_000, env });
  if (run.status !== 0) throw new Error(`mcp client exited ${run.status}:\n${run.stderr}`);
  return JSON.parse(run.stdout) as Report;
}

/** What the Python client must see over either transport. */
function expectReport(report: Report): void {
  expect(report.tools).toEqual(EXPOSED);
  expect(Object.values(report.readOnly).every(Boolean)).toBe(true);
  expect(report.read).toEqual({ isError: false, text: '     1\thello needle' });
  expect(report.grep).toMatchObject({ isError: false, text: expect.stringContaining('notes.md:1: hello needle') });
  expect((report.grep as { text: string }).text).not.toContain('secret');
  expect(report.denied).toMatchObject({
    isError: true,
    text: expect.stringMatching(/^Denied: read on "secret\/key.txt" is denied by the policy rule/)
  });
  // Nobody answers cards for an MCP client: ask is denied at once, even with a pane connected.
  expect(report.ask).toMatchObject({
    isError: true,
    text: expect.stringMatching(/^Not run: glob needs the user's approval .* nobody is connected to approve it/)
  });
  // Three denials in a row end a model's turn; an MCP client just gets each refusal, then goes on.
  expect(report.deniedAgain).toMatchObject({
    isError: true,
    text: expect.stringMatching(/^Denied: read on "secret\/key.txt"/)
  });
  expect(report.after).toEqual({ isError: false, text: '     1\thello needle' });
  expect(report.escape).toMatchObject({ isError: true, text: expect.stringMatching(/outside the workspace/) });
  expect(report.invalid).toMatchObject({ isError: true, text: expect.stringMatching(/^Invalid arguments for read/) });
  expect(report.eval).toMatchObject({ isError: true, text: expect.stringMatching(/does not expose "eval"/) });
}

async function auditOf(workspace: string): Promise<Array<{ actor: string; tool: string; decision: string }>> {
  const text = await fs.readFile(path.join(workspace, '.cellmate', 'audit', 'mcp.jsonl'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { actor: string; tool: string; decision: string });
}

async function writeFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await fs.writeFile(path.join(root, rel), content);
  }
}

describe('Cellmate as an MCP server, for the Python MCP SDK (issue #14)', () => {
  let jupyter: Jupyter;

  beforeAll(async () => {
    jupyter = await startJupyter({ files: FILES });
    await fs.writeFile(path.join(path.dirname(jupyter.workspace), 'outside.txt'), 'outside\n');
  });

  afterAll(async () => {
    await jupyter?.stop();
  });

  it('cellmate mcp (stdio): lists the stateless tools and calls them under the same policy, confinement and audit', async () => {
    const ws = path.join(await fs.mkdtemp(path.join(path.dirname(jupyter.workspace), 'stdio-')), 'ws');
    await writeFiles(ws, FILES);
    await fs.writeFile(path.join(path.dirname(ws), 'outside.txt'), 'outside\n');
    expectReport(runClient(['stdio', process.execPath, mainJs, ws], { ...process.env, HOME: path.dirname(ws) }));
    const audit = await auditOf(ws);
    expect(audit.every((e) => e.actor === 'mcp')).toBe(true);
    expect(audit.some((e) => e.tool === 'read' && e.decision === 'denied-by-rule')).toBe(true);
  });

  it('<base_url>cellmate/mcp with the token: the same tools and answers, audited as actor mcp in the companion', async () => {
    // A person's pane is attached: still no approval card waits for the MCP client.
    const pane = await connectRpc(jupyter.wsUrl, jupyter.token);
    try {
      expect(
        (await pane.request('cellmate/hello', { protocolVersion: 1, interactive: true })).interactiveConnections
      ).toBe(1);
      expectReport(runClient(['http', `${jupyter.url}/cellmate/mcp`, jupyter.token]));
    } finally {
      pane.close();
    }
    const audit = await auditOf(jupyter.workspace);
    expect(audit.every((e) => e.actor === 'mcp')).toBe(true);
    expect(audit.some((e) => e.tool === 'grep' && e.decision === 'allowed-by-default')).toBe(true);
  });

  it('without the token, or with a wrong one, the route answers 403 (never a login redirect)', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const none = await fetch(`${jupyter.url}/cellmate/mcp`, { method: 'POST', headers, body, redirect: 'manual' });
    expect(none.status).toBe(403);
    const wrong = await fetch(`${jupyter.url}/cellmate/mcp`, {
      method: 'POST',
      headers: { ...headers, authorization: 'token wrong' },
      body,
      redirect: 'manual'
    });
    expect(wrong.status).toBe(403);
    const get = await fetch(`${jupyter.url}/cellmate/mcp`, { redirect: 'manual' });
    expect(get.status).toBe(403);
    // The same request with the token is answered (so the 403s above are about the credentials).
    const ok = await fetch(`${jupyter.url}/cellmate/mcp`, {
      method: 'POST',
      headers: { ...headers, authorization: `token ${jupyter.token}` },
      body
    });
    expect(ok.status).toBe(200);
    expect(
      ((await ok.json()) as { result: { tools: Array<{ name: string }> } }).result.tools.map((t) => t.name).sort()
    ).toEqual(EXPOSED);
  });
});
