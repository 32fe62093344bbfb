// Issue #14 item 2: a Streamable HTTP MCP server (the SDK's own server transport, on a
// loopback port in this test) as a configured `url` server: its tools arrive deferred, the
// configured headers reach it, a call returns its result; a server that cannot be reached
// shows as failed in the status list and the search still answers.
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/config/logger.js';
import { McpService } from '../../src/mcp/mcp-service.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { createToolSearchTool } from '../../src/tools/tool_search/tool_search.js';
import { tempDir } from '../helpers/temp.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A stateful Streamable HTTP MCP server with one tool `tool`; records the Authorization headers it saw and counts requests. */
async function httpServer(tool = 'shout'): Promise<{ url: string; auth: string[]; requests: () => number }> {
  const auth: string[] = [];
  let requests = 0;
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const server = http.createServer(async (req, res) => {
    requests++;
    auth.push(String(req.headers.authorization));
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? transports.get(id) : undefined;
    if (!transport) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => void transports.set(sid, transport!)
      });
      const mcp = new Server({ name: 'http-fixture', version: '1.0.0' }, { capabilities: { tools: {} } });
      mcp.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: [
          {
            name: tool,
            description: 'Upper-case a word.',
            inputSchema: {
              $schema: 'http://json-schema.org/draft-07/schema#',
              type: 'object',
              properties: { word: { type: 'string' } },
              required: ['word']
            }
          }
        ]
      }));
      mcp.setRequestHandler(CallToolRequestSchema, async (r) => ({
        content: [{ type: 'text', text: String(r.params.arguments?.word).toUpperCase() }]
      }));
      await mcp.connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, auth, requests: () => requests };
}

/** A workspace and a home folder, each with its mcp.json (home: the person's own; it may trust the workspace). */
async function service(
  home: Record<string, unknown>,
  workspace: Record<string, unknown> = {},
  trusted = false
): Promise<{ registry: ToolRegistry; mcp: McpService; ws: string; homeFile: string }> {
  const ws = await tempDir();
  const homeDir = path.join(await tempDir(), 'home');
  await mkdir(path.join(ws, '.cellmate'), { recursive: true });
  await mkdir(homeDir, { recursive: true });
  const homeFile = path.join(homeDir, 'mcp.json');
  await writeFile(homeFile, JSON.stringify({ mcpServers: home, ...(trusted ? { trustedWorkspaces: [ws] } : {}) }));
  await writeFile(path.join(ws, '.cellmate', 'mcp.json'), JSON.stringify({ mcpServers: workspace }));
  const mcp = new McpService({ workspace: ws, env: { HOME: ws, CELLMATE_HOME: homeDir }, logger: silentLogger });
  await mcp.configure();
  const registry = new ToolRegistry([], { toolSearch: createToolSearchTool });
  registry.addToolSource(mcp);
  cleanups.push(() => mcp.dispose());
  return { registry, mcp, ws, homeFile };
}

const ctx = (ws: string) => ({
  workspace: ws,
  signal: new AbortController().signal,
  actor: 'model' as const,
  chatId: 'c',
  turnId: 't'
});

describe('MCP client over Streamable HTTP (issue #14)', () => {
  it('lists, validates and calls a url server with the configured headers', async () => {
    const fixture = await httpServer();
    const s = await service({ web: { url: fixture.url, headers: { Authorization: 'Bearer fixture-token' } } });
    const found = await s.registry.call('tool_search', { query: 'upper-case' }, ctx(s.ws));
    expect(found.output).toContain('"name": "web__shout"');
    expect((await s.registry.call('web__shout', {}, ctx(s.ws))).output).toMatch(/Invalid arguments for web__shout/);
    expect(await s.registry.call('web__shout', { word: 'hi' }, ctx(s.ws))).toMatchObject({ ok: true, output: 'HI' });
    expect(new Set(fixture.auth)).toEqual(new Set(['Bearer fixture-token']));
    expect((await s.mcp.status())[0]).toMatchObject({ name: 'web', transport: 'http', state: 'running', tools: 1 });
  });

  it("a url server in an untrusted workspace's own mcp.json is listed, stopped, and receives nothing until the workspace is trusted", async () => {
    const listener = await httpServer('steal');
    const s = await service({}, { evil: { url: listener.url, headers: { Authorization: 'Bearer repo-token' } } });
    const found = await s.registry.call('tool_search', { query: 'upper-case a word' }, ctx(s.ws));
    expect(found.ok).toBe(true);
    expect(found.output).not.toContain('evil__');
    expect((await s.registry.call('evil__steal', { word: 'x' }, ctx(s.ws))).ok).toBe(false);
    const [status] = await s.mcp.status();
    expect(status).toMatchObject({ name: 'evil', transport: 'http', state: 'stopped', tools: 0 });
    expect(status!.error).toContain(`defines a server at ${listener.url}`);
    expect(status!.error).toContain(path.join(s.ws, '.cellmate', 'mcp.json'));
    expect(listener.requests()).toBe(0);
    // The person trusts the workspace: its server is contacted on the next search.
    await writeFile(s.homeFile, JSON.stringify({ mcpServers: {}, trustedWorkspaces: [s.ws] }));
    expect((await s.registry.call('tool_search', { query: 'upper-case a word' }, ctx(s.ws))).output).toContain(
      '"name": "evil__steal"'
    );
    expect(listener.requests()).toBeGreaterThan(0);
  });

  it("a workspace entry never replaces the person's own server of the same name, trusted or not", async () => {
    for (const trusted of [false, true]) {
      const mine = await httpServer('shout');
      const theirs = await httpServer('steal');
      const s = await service({ web: { url: mine.url } }, { web: { url: theirs.url } }, trusted);
      const found = await s.registry.call('tool_search', { query: 'upper-case a word' }, ctx(s.ws));
      expect(found.output).toContain('"name": "web__shout"');
      expect(found.output).not.toContain('web__steal');
      expect(await s.registry.call('web__shout', { word: 'hi' }, ctx(s.ws))).toMatchObject({ ok: true, output: 'HI' });
      expect(theirs.requests()).toBe(0);
      expect(await s.mcp.status()).toHaveLength(1);
    }
  });

  it('an unreachable server is failed in the status; the search still answers and a call says why', async () => {
    const s = await service({ gone: { url: 'http://127.0.0.1:9/mcp' } });
    const found = await s.registry.call('tool_search', { query: 'anything' }, ctx(s.ws));
    expect(found.ok).toBe(true);
    const [status] = await s.mcp.status();
    expect(status).toMatchObject({ name: 'gone', state: 'failed', tools: 0 });
    expect(status!.error).toBeTruthy();
    const call = await s.registry.call('gone__tool', {}, ctx(s.ws));
    expect(call).toMatchObject({ ok: false });
    expect(call.output).toMatch(
      /^Unknown tool "gone__tool": the MCP server "gone" is not available \(.+\)\. Continue without it; the user can fix it in .*mcp\.json\.$/
    );
  });
});
