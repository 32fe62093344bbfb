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
import { ToolRegistry } from '../../src/tools/registry.js';
import { tempDir } from '../helpers/temp.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A stateful Streamable HTTP MCP server with one tool; records the Authorization headers it saw. */
async function httpServer(): Promise<{ url: string; auth: string[] }> {
  const auth: string[] = [];
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const server = http.createServer(async (req, res) => {
    auth.push(String(req.headers.authorization));
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? transports.get(id) : undefined;
    if (!transport) {
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => void transports.set(sid, transport!) });
      const mcp = new Server({ name: 'http-fixture', version: '1.0.0' }, { capabilities: { tools: {} } });
      mcp.setRequestHandler(ListToolsRequestSchema, async () => ({
        tools: [{ name: 'shout', description: 'Upper-case a word.', inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { word: { type: 'string' } }, required: ['word'] } }]
      }));
      mcp.setRequestHandler(CallToolRequestSchema, async (r) => ({ content: [{ type: 'text', text: String(r.params.arguments?.word).toUpperCase() }] }));
      await mcp.connect(transport);
    }
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, auth };
}

async function service(servers: Record<string, unknown>): Promise<{ registry: ToolRegistry; mcp: McpService; ws: string }> {
  const ws = await tempDir();
  await mkdir(path.join(ws, '.cellmate'), { recursive: true });
  await writeFile(path.join(ws, '.cellmate', 'mcp.json'), JSON.stringify({ mcpServers: servers }));
  const mcp = new McpService({ workspace: ws, env: { HOME: ws, CELLMATE_HOME: path.join(ws, 'home') }, logger: silentLogger });
  await mcp.configure();
  const registry = new ToolRegistry([]);
  registry.addToolSource(mcp);
  cleanups.push(() => mcp.dispose());
  return { registry, mcp, ws };
}

const ctx = (ws: string) => ({ workspace: ws, signal: new AbortController().signal, actor: 'model' as const, chatId: 'c', turnId: 't' });

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

  it('an unreachable server is failed in the status; the search still answers and a call says why', async () => {
    const s = await service({ gone: { url: 'http://127.0.0.1:9/mcp' } });
    const found = await s.registry.call('tool_search', { query: 'anything' }, ctx(s.ws));
    expect(found.ok).toBe(true);
    const [status] = await s.mcp.status();
    expect(status).toMatchObject({ name: 'gone', state: 'failed', tools: 0 });
    expect(status!.error).toBeTruthy();
    const call = await s.registry.call('gone__tool', {}, ctx(s.ws));
    expect(call).toMatchObject({ ok: false });
    expect(call.output).toMatch(/^Unknown tool "gone__tool": the MCP server "gone" is not available \(.+\)\. Continue without it; the user can fix it in .*mcp\.json\.$/);
  });
});
