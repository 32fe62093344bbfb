/**
 * The hostile workspace (`server/test/security/hostile-workspace.ts`: planted executables in
 * the workspace and the folder above it, a deny-ruled file with an in-repo alias, extraPaths
 * outside, withheld values flowing into allowed names) as the Jupyter server's root, asked
 * through `<base_url>cellmate/mcp` of a real JupyterLab with the token — what any MCP client
 * the person configures would do. Nothing planted runs, nothing withheld is printed in the
 * answers or the companion's files, and hover on allowed code still answers.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ATTACK_CALLS, hostileWorkspace, type HostileWorkspace } from '../../server/test/security/hostile-workspace';
import { startJupyter, type Jupyter } from '../support/jupyter';
import { venvBin } from '../support/paths';

describe('HARN-12 LSP-4: the hostile workspace through /cellmate/mcp', () => {
  let jupyter: Jupyter;
  let home: string;
  let h: HostileWorkspace;

  beforeAll(async () => {
    home = await fs.mkdtemp(path.join(os.tmpdir(), 'cellmate-hostile-home-'));
    const PATH = [
      venvBin,
      ...(process.env.PATH ?? '').split(path.delimiter).filter((d) => !d.includes('node_modules'))
    ].join(path.delimiter);
    const cellmateHome = path.join(home, '.cellmate');
    jupyter = await startJupyter({
      path: PATH,
      env: {
        CELLMATE_HOME: cellmateHome,
        CELLMATE_POLICY: path.join(cellmateHome, 'policy.json'),
        CELLMATE_TRUSTED_WORKSPACES: ''
      }
    });
    // Servers start on the first lsp call, so planting after Jupyter started is planting before they run.
    h = await hostileWorkspace({ ws: await fs.realpath(jupyter.workspace), home });
  }, 120_000);

  afterAll(async () => {
    await jupyter?.stop();
    await fs.rm(home, { recursive: true, force: true });
  });

  it('every attack call answers without running anything planted or printing anything withheld', async () => {
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `token ${jupyter.token}`
    };
    const post = async (body: object): Promise<string> => {
      const r = await fetch(`${jupyter.url}/cellmate/mcp`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', ...body })
      });
      expect(r.status).toBe(200);
      return r.text();
    };
    await post({
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'attacker', version: '1' } }
    });
    for (const [i, c] of ATTACK_CALLS.entries()) {
      const text = await post({ id: 10 + i, method: 'tools/call', params: { name: 'lsp', arguments: c.args } });
      const answer =
        (JSON.parse(text) as { result?: { content: Array<{ text: string }> } }).result?.content[0]?.text ?? text;
      expect(h.leaks(text), `${JSON.stringify(c.args)} → ${answer}`).toEqual([]);
      if (c.shows) expect(answer, JSON.stringify(c.args)).toMatch(c.shows);
    }
    const audit = await fs.readFile(path.join(jupyter.workspace, '.cellmate', 'audit', 'mcp.jsonl'), 'utf8');
    expect(audit).toContain('"actor":"mcp"');
    expect(h.leaks(audit)).toEqual([]);
    expect(await h.ran()).toEqual([]);
  }, 300_000);
});
