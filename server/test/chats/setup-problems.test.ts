/**
 * A settings file the person got wrong is said in the chat, and Cellmate keeps working. A real
 * companion on its socket, with a workspace policy file that is not JSON and a home MCP config
 * whose `mcpServers` is not an object: the first turn of a chat carries one warning per file
 * (the file, what is wrong, what to write); the write still asks and, approved, writes; the
 * next turn of the same chat does not repeat them; once the policy file is fixed, a new chat
 * hears only of the MCP config.
 */
import { PROTOCOL_VERSION, type ChatEvent, type NoticeItem, type QuestionItem } from '@cellmate/protocol';
import { readFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/config/logger.js';
import { startServer, type ServerHandle } from '../../src/server.js';
import { sendRequest } from '../../src/transport/typed-rpc.js';
import { connectClient, type TestClient } from '../helpers/rpc-client.js';
import { tempDir } from '../helpers/temp.js';

const open: Array<{ server: ServerHandle; client?: TestClient }> = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    o.client?.close();
    await o.server.dispose();
  }
});

async function until<T>(what: string, probe: () => T | undefined): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const v = probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('setup problems in the chat', () => {
  it('HARN-6/HARN-12: a malformed policy file and MCP config each give a warning in the chat; turns still run', async () => {
    const ws = await tempDir();
    const home = path.join(ws, 'home');
    await mkdir(path.join(ws, '.cellmate'), { recursive: true });
    await mkdir(home, { recursive: true });
    const policyFile = path.join(ws, '.cellmate', 'policy.json');
    // A trailing comma, as a person writes it.
    await writeFile(policyFile, '{"rules": [{"tool": "*", "pattern": ".env", "action": "deny"},]}');
    const mcpFile = path.join(home, 'mcp.json');
    await writeFile(mcpFile, '{"mcpServers": [{"command": "node"}]}');
    const step = (toolCalls: unknown[]) => ({ toolCalls, chunkDelayMs: 0 });
    await writeFile(
      path.join(ws, 'script.json'),
      JSON.stringify({
        turns: [
          [step([{ toolName: 'write', input: { path: 'x.txt', content: 'x' } }]), { text: 'done', chunkDelayMs: 0 }],
          [{ text: 'again', chunkDelayMs: 0 }]
        ]
      })
    );
    await writeFile(path.join(ws, 'hello.json'), JSON.stringify({ steps: [{ text: 'hello', chunkDelayMs: 0 }] }));
    const server = await startServer({
      workspace: ws,
      socketPath: path.join(ws, 's.sock'),
      env: {
        PATH: process.env.PATH,
        HOME: ws,
        CELLMATE_HOME: home,
        CELLMATE_CONFIG: path.join(ws, 'none.json'),
        CELLMATE_POLICY: path.join(ws, 'no-policy.json')
      },
      logger: silentLogger,
      kernels: false
    });
    const o: { server: ServerHandle; client?: TestClient } = { server };
    open.push(o);
    const c = await connectClient(server.socketPath!);
    o.client = c;
    await sendRequest(c.connection, 'cellmate/hello', { protocolVersion: PROTOCOL_VERSION, interactive: true });
    const model = { provider: 'scripted' as const, model: 's', scriptPath: 'script.json' };
    const notices = (chatId: string) =>
      c.events
        .filter((e) => e.chatId === chatId)
        .map((e) => e.event)
        .flatMap((e) => (e.type === 'item-added' && e.item.kind === 'notice' ? [e.item as NoticeItem] : []));

    const chat = await sendRequest(c.connection, 'chat/create', {});
    await sendRequest(c.connection, 'chat/send', { chatId: chat.id, text: 'write it', model });
    const card = await until('the approval card', () =>
      c.events
        .map((e) => e.event)
        .find(
          (e): e is Extract<ChatEvent, { type: 'item-added' }> & { item: QuestionItem } =>
            e.type === 'item-added' && e.item.kind === 'question'
        )
    );
    const first = notices(chat.id);
    expect(first.map((n) => n.level)).toEqual(['warning', 'warning']);
    const [policy, mcp] = first.map((n) => n.text);
    expect(policy).toContain(policyFile);
    expect(policy).toMatch(/ignored: .*JSON.*None of its rules apply until it is fixed/);
    expect(policy).toContain('{"rules": [{"tool": "shell"');
    expect(mcp).toContain(mcpFile);
    expect(mcp).toMatch(/mcpServers.*restart JupyterLab/);

    await sendRequest(c.connection, 'chat/answer', {
      chatId: chat.id,
      questionId: card.item.questionId,
      answer: { action: 'answer', selected: [0] }
    });
    await c.turnEnded(chat.id);
    expect(await readFile(path.join(ws, 'x.txt'), 'utf8')).toBe('x');

    let mark = c.events.length;
    await sendRequest(c.connection, 'chat/send', { chatId: chat.id, text: 'again', model });
    await c.turnEnded(chat.id, mark);
    expect(notices(chat.id)).toHaveLength(2);

    await writeFile(policyFile, '{"rules": [{"tool": "*", "pattern": ".env", "action": "deny"}]}');
    const other = await sendRequest(c.connection, 'chat/create', {});
    mark = c.events.length;
    await sendRequest(c.connection, 'chat/send', {
      chatId: other.id,
      text: 'hello',
      model: { ...model, scriptPath: 'hello.json' }
    });
    await c.turnEnded(other.id, mark);
    expect(notices(other.id).map((n) => n.text)).toEqual([mcp]);
  }, 60_000);
});
