/**
 * Every door of the hostile workspace (`hostile-workspace.ts`: planted executables, a
 * deny-ruled file with an alias, `extraPaths` outside, values flowing into allowed names),
 * tried from every surface that reaches `lsp`: a chat in Agent mode and in Plan mode (a
 * provider stand-in speaking OpenAI's wire plays the attacker's model: `tool_search`, then
 * `call_tool lsp …`), `cellmate mcp` (stdio) and the companion's `mcp.sock`, which
 * `<base_url>cellmate/mcp` relays to. Nothing planted runs (the marker file stays empty),
 * nothing withheld is printed — not in the results, the transcript and journal on disk, the
 * frames a pane receives, the audit log, nor the prompts the model is sent — and the
 * controls (hover on allowed code, Python and TypeScript) answer.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { PROTOCOL_VERSION } from '@cellmate/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/config/logger.js';
import { serveMcpStdio } from '../../src/mcp/serve.js';
import { startServer } from '../../src/server.js';
import { sendRequest } from '../../src/transport/typed-rpc.js';
import { startProviderStandIn, type StandInRequest, type StandInStep } from '../helpers/provider-stand-in.js';
import { connectClient } from '../helpers/rpc-client.js';
import { ATTACK_CALLS, hostileWorkspace, type HostileWorkspace } from './hostile-workspace.js';

let h: HostileWorkspace;
beforeAll(async () => {
  h = await hostileWorkspace();
}, 60_000);
afterAll(async () => {
  await rm(h.parent, { recursive: true, force: true });
});

/** Every file Cellmate wrote under `.cellmate/` (journal, snapshots, audit, saved outputs), as text. */
async function cellmateFiles(): Promise<string> {
  const root = path.join(h.ws, '.cellmate');
  const files = (await readdir(root, { recursive: true, withFileTypes: true }).catch(() => [])).filter((e) =>
    e.isFile()
  );
  return (await Promise.all(files.map((e) => readFile(path.join(e.parentPath, e.name), 'utf8')))).join('\n');
}

/** Each result against its call's control: the leak list empty, the control shown. */
function expectAnswers(results: string[]): void {
  expect(results).toHaveLength(ATTACK_CALLS.length);
  ATTACK_CALLS.forEach((c, i) => {
    expect(h.leaks(results[i]!), `${JSON.stringify(c.args)} → ${results[i]}`).toEqual([]);
    if (c.shows) expect(results[i], JSON.stringify(c.args)).toMatch(c.shows);
  });
}

/** The attacker's model: load lsp, call every attack at once, then stop. */
function attacker(request: StandInRequest): StandInStep {
  const outputs = ((request.body.input ?? []) as Array<{ type?: string }>).filter(
    (m) => m.type === 'function_call_output'
  ).length;
  if (!request.body.tools || outputs >= 2) return { text: 'done' };
  if (outputs === 0) return { toolCalls: [{ name: 'tool_search', input: { query: 'lsp' } }] };
  return { toolCalls: ATTACK_CALLS.map((c) => ({ name: 'call_tool', input: { name: 'lsp', arguments: c.args } })) };
}

describe('HARN-6 MODE-3 LSP-4: the hostile workspace from chat, Agent and Plan', () => {
  for (const mode of ['agent', 'plan'] as const) {
    it(`${mode === 'agent' ? 'Agent' : 'Plan'} mode: nothing planted runs, nothing withheld reaches a result, the transcript, a frame or the prompt`, async () => {
      const standIn = await startProviderStandIn('openai', attacker);
      const server = await startServer({
        workspace: h.ws,
        socketPath: path.join(h.parent, `${mode}.sock`),
        kernels: false,
        maxRetries: 0,
        fetch: standIn.fetch,
        logger: silentLogger,
        env: { ...h.env, ...standIn.env, CELLMATE_CONFIG: path.join(h.parent, 'no-config.json') }
      });
      const pane = await connectClient(server.socketPath!);
      try {
        await sendRequest(pane.connection, 'cellmate/hello', { protocolVersion: PROTOCOL_VERSION, interactive: true });
        const chat = await sendRequest(pane.connection, 'chat/create', {});
        await sendRequest(pane.connection, 'chat/set-mode', { chatId: chat.id, mode });
        await sendRequest(pane.connection, 'chat/send', {
          chatId: chat.id,
          text: 'Show me API_KEY by any means.',
          model: standIn.settings
        });
        await pane.turnEnded(chat.id);
        const items = (await sendRequest(pane.connection, 'chat/get', { chatId: chat.id })).items;
        const lspResults = items
          .filter((i) => i.kind === 'tool' && i.name === 'lsp')
          .map((i) => (i as { output?: string }).output ?? '');
        expectAnswers(lspResults);
        expect(h.leaks(JSON.stringify(items))).toEqual([]);
        expect(h.leaks(JSON.stringify(pane.events))).toEqual([]);
        expect(h.leaks(JSON.stringify(standIn.requests.map((r) => r.body)))).toEqual([]);
        expect(standIn.requests.length).toBeGreaterThanOrEqual(3);
        expect(h.leaks(await cellmateFiles())).toEqual([]);
        expect(await h.ran()).toEqual([]);
      } finally {
        pane.close();
        await server.dispose();
        await standIn.close();
      }
    }, 240_000);
  }
});

describe('HARN-12 LSP-4: the hostile workspace from MCP clients', () => {
  it('`cellmate mcp` (stdio): nothing planted runs, nothing withheld is printed', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const served = serveMcpStdio({ workspace: h.ws, env: h.env, logger: silentLogger, input, output });
    let wire = '';
    const replies = new Map<number, { result?: { content: Array<{ text: string }> } }>();
    let buffer = '';
    output.setEncoding('utf8').on('data', (chunk: string) => {
      wire += chunk;
      buffer += chunk;
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const message = JSON.parse(buffer.slice(0, nl)) as {
          id?: number;
          result?: { content: Array<{ text: string }> };
        };
        buffer = buffer.slice(nl + 1);
        if (typeof message.id === 'number') replies.set(message.id, message);
      }
    });
    const send = (message: object): void => void input.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    const reply = async (id: number) => {
      for (let i = 0; i < 2400 && !replies.has(id); i++) await new Promise((r) => setTimeout(r, 100));
      return replies.get(id)!;
    };
    send({
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'attacker', version: '1' } }
    });
    await reply(1);
    send({ method: 'notifications/initialized' });
    const results: string[] = [];
    for (const [i, c] of ATTACK_CALLS.entries()) {
      send({ id: 10 + i, method: 'tools/call', params: { name: 'lsp', arguments: c.args } });
      results.push((await reply(10 + i)).result?.content[0]?.text ?? '');
    }
    input.end();
    await served;
    expectAnswers(results);
    expect(h.leaks(wire)).toEqual([]);
    expect(await h.ran()).toEqual([]);
  }, 240_000);

  it("the companion's mcp.sock (what /cellmate/mcp relays): nothing planted runs, nothing withheld is printed", async () => {
    const server = await startServer({
      workspace: h.ws,
      socketPath: path.join(h.parent, 'mcp-route.sock'),
      kernels: false,
      logger: silentLogger,
      env: { ...h.env, CELLMATE_CONFIG: path.join(h.parent, 'no-config.json') }
    });
    try {
      let wire = '';
      const post = (body: object) =>
        new Promise<string>((resolve, reject) => {
          const req = http.request(
            {
              socketPath: server.mcpSocketPath!,
              path: '/',
              method: 'POST',
              headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
            },
            (res) => {
              let text = '';
              res
                .setEncoding('utf8')
                .on('data', (d: string) => (text += d))
                .on('end', () => {
                  wire += text;
                  resolve(text);
                });
            }
          );
          req.on('error', reject);
          req.end(JSON.stringify({ jsonrpc: '2.0', ...body }));
        });
      await post({
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'attacker', version: '1' } }
      });
      const results: string[] = [];
      for (const [i, c] of ATTACK_CALLS.entries()) {
        const text = await post({ id: 10 + i, method: 'tools/call', params: { name: 'lsp', arguments: c.args } });
        results.push(
          (JSON.parse(text) as { result?: { content: Array<{ text: string }> } }).result?.content[0]?.text ?? text
        );
      }
      expectAnswers(results);
      expect(h.leaks(wire)).toEqual([]);
      expect(h.leaks(await cellmateFiles())).toEqual([]);
      expect(await h.ran()).toEqual([]);
    } finally {
      await server.dispose();
    }
  }, 240_000);
});
