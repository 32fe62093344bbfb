/**
 * Security of the walking skeleton (issue #2): the companion server opens no TCP port,
 * the bridge route and the status route sit behind Jupyter's own authentication, API
 * keys never leave the server, and `read` refuses paths outside the workspace — checked
 * through the whole stack (WebSocket → Jupyter → Unix socket → companion → registry).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { ToolCallItem } from '@cellmate/protocol';
import { connectRpc } from '../support/rpc';
import { startJupyter, type Jupyter } from '../support/jupyter';
import { listeningTcpSockets, unixSocketCount } from '../support/proc';

const FAKE_KEY = 'sk-cellmate-test-NEVER-SHOW-ME-4242';

const ESCAPES = ['../outside.txt', '/etc/passwd', 'link-out/passwd', 'notes/../../outside.txt'];

const SCRIPT = {
  steps: [{ toolCalls: ESCAPES.map((p) => ({ toolName: 'read', input: { path: p } })) }, { text: 'All refused.' }]
};

describe('security (issue #2)', () => {
  let jupyter: Jupyter;

  beforeAll(async () => {
    jupyter = await startJupyter({
      env: { OPENAI_API_KEY: FAKE_KEY },
      files: { 'notes/ok.md': 'inside\n', 'scripts/escape.json': JSON.stringify(SCRIPT) }
    });
    await fs.writeFile(path.join(path.dirname(jupyter.workspace), 'outside.txt'), 'secret outside\n');
    await fs.symlink('/etc', path.join(jupyter.workspace, 'link-out'));
  });

  afterAll(async () => {
    await jupyter?.stop();
  });

  it('the companion server process holds no listening TCP socket (only its Unix socket)', async () => {
    const { pid } = await jupyter.status();
    expect(pid).toBeGreaterThan(0);
    // The check must be able to see sockets at all: the companion listens on a Unix socket.
    expect(unixSocketCount(pid!)).toBeGreaterThan(0);
    expect(listeningTcpSockets(pid!)).toEqual([]);
  });

  it('refuses the WebSocket route and the status route without credentials', async () => {
    await expect(connectRpc(jupyter.wsUrl)).rejects.toThrow(/HTTP 40[13]/);
    await expect(connectRpc(jupyter.wsUrl, 'wrong-token')).rejects.toThrow(/HTTP 40[13]/);
    const res = await fetch(`${jupyter.url}/cellmate/status`);
    expect([401, 403]).toContain(res.status);
  });

  it('tells the browser whether a key is set, never the key', async () => {
    const rpc = await connectRpc(jupyter.wsUrl, jupyter.token);
    try {
      const hello = await rpc.request('cellmate/hello', { protocolVersion: 1 });
      const openai = hello.providers.find((p) => p.kind === 'openai');
      expect(openai?.keyConfigured).toBe(true);
      const anthropic = hello.providers.find((p) => p.kind === 'anthropic');
      expect(anthropic?.keyConfigured).toBe(false);
      const providers = await rpc.request('config/providers', {});
      expect(JSON.stringify([hello, providers])).not.toContain(FAKE_KEY);
      expect(JSON.stringify([hello, providers])).not.toContain('NEVER-SHOW');
    } finally {
      rpc.close();
    }
  });

  it('read refuses ../, absolute paths outside and a symlink out of the workspace, with a clear error', async () => {
    const rpc = await connectRpc(jupyter.wsUrl, jupyter.token);
    try {
      const chat = await rpc.request('chat/create', {});
      await rpc.request('chat/send', {
        chatId: chat.id,
        text: 'try to escape',
        model: { provider: 'scripted', model: 'script', scriptPath: 'scripts/escape.json' }
      });
      await rpc.waitForEvent(chat.id, (e) => e.type === 'turn-ended');
      const done = await rpc.request('chat/get', { chatId: chat.id });
      const calls = done.items.filter((i): i is ToolCallItem => i.kind === 'tool');
      expect(calls.map((c) => (c.args as { path: string }).path)).toEqual(ESCAPES);
      for (const call of calls) {
        expect(call.status).toBe('error');
        expect(call.output).toMatch(/outside the workspace/i);
        expect(call.output).not.toContain('secret outside');
        expect(call.output).not.toContain('root:x:0');
      }
      expect(done.items.at(-1)).toMatchObject({ kind: 'assistant', text: 'All refused.' });
    } finally {
      rpc.close();
    }
  });
});
