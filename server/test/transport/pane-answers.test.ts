/**
 * Answers come from the person's pane. A real companion on its Unix socket; the person's
 * pane (an interactive client) starts a turn whose `write` asks for approval. A second
 * connection — what a kernel cell that read Jupyter's token could open — says it is
 * interactive too, sees the card, and tries to approve it: refused, the card stays pending.
 * The pane reloads (a new connection presenting the secret the server gave it) and is still
 * the pane that may answer. A connection that never said interactive is refused as before.
 */
import { PROTOCOL_VERSION, type ChatEvent, type QuestionItem } from '@cellmate/protocol';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/config/logger.js';
import { startServer, type ServerHandle } from '../../src/server.js';
import { sendRequest } from '../../src/transport/typed-rpc.js';
import { connectClient, type TestClient } from '../helpers/rpc-client.js';
import { tempDir } from '../helpers/temp.js';

const open: Array<{ server: ServerHandle; clients: TestClient[] }> = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    o.clients.forEach((c) => c.close());
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

/**
 * A real companion whose scripted turn writes `x.txt` (so it waits on an approval card), and
 * `connect`, which opens a connection and says hello with the given fields.
 */
async function companionWithWriteTurn(ws: string, extraEnv: Record<string, string> = {}) {
  await writeFile(
    path.join(ws, 'script.json'),
    JSON.stringify({
      steps: [
        { toolCalls: [{ toolName: 'write', input: { path: 'x.txt', content: 'x' } }], chunkDelayMs: 0 },
        { text: 'done', chunkDelayMs: 0 }
      ]
    })
  );
  const env = {
    PATH: process.env.PATH,
    HOME: ws,
    ...extraEnv,
    CELLMATE_CONFIG: path.join(ws, 'none.json'),
    CELLMATE_POLICY: path.join(ws, 'no-policy.json')
  };
  const server = await startServer({
    workspace: ws,
    socketPath: path.join(ws, 's.sock'),
    env,
    logger: silentLogger,
    kernels: false
  });
  const o = { server, clients: [] as TestClient[] };
  open.push(o);
  const connect = async (hello: Record<string, unknown>) => {
    const c = await connectClient(server.socketPath!);
    o.clients.push(c);
    return {
      c,
      hello: await sendRequest(c.connection, 'cellmate/hello', { protocolVersion: PROTOCOL_VERSION, ...hello })
    };
  };
  return { connect };
}

/** Creates a chat on `client`, sends the scripted write turn, and waits for its approval card. */
async function startWriteTurn(client: TestClient) {
  const chat = await sendRequest(client.connection, 'chat/create', {});
  await sendRequest(client.connection, 'chat/send', {
    chatId: chat.id,
    text: 'write it',
    model: { provider: 'scripted', model: 's', scriptPath: 'script.json' }
  });
  const card = await until('the approval card', () =>
    client.events
      .map((e) => e.event)
      .find(
        (e): e is Extract<ChatEvent, { type: 'item-added' }> & { item: QuestionItem } =>
          e.type === 'item-added' && e.item.kind === 'question'
      )
  );
  return { chat, card };
}

describe('card answers are taken only from the pane that owns the chat', () => {
  it("another interactive connection cannot approve the pane's card; the reloaded pane can", async () => {
    const ws = await tempDir();
    const { connect } = await companionWithWriteTurn(ws);

    const pane = await connect({ interactive: true });
    expect(pane.hello.paneSecret).toMatch(/^[\w-]{40,}$/);
    const { chat, card } = await startWriteTurn(pane.c);
    const approve = {
      chatId: chat.id,
      questionId: card.item.questionId,
      answer: { action: 'answer' as const, selected: [0] }
    };

    // A connection with the same access that never said interactive, and one that says so.
    const headless = await connect({});
    await expect(sendRequest(headless.c.connection, 'chat/answer', approve)).rejects.toThrow(
      /did not say `interactive: true`/
    );
    const rogue = await connect({ interactive: true });
    expect(rogue.hello.paneSecret).not.toBe(pane.hello.paneSecret);
    await expect(sendRequest(rogue.c.connection, 'chat/answer', approve)).rejects.toThrow(
      "Only the Cellmate pane that started this chat's work can answer a question or approval card"
    );
    // Nor with a made-up secret.
    const forged = await connect({ interactive: true, paneSecret: 'guessed-secret-0000000000000000000000000000' });
    await expect(sendRequest(forged.c.connection, 'chat/answer', approve)).rejects.toThrow(
      /Only the Cellmate pane that started/
    );
    expect(existsSync(path.join(ws, 'x.txt'))).toBe(false);

    // The pane reloads: a new connection with its secret is the same pane, and approves.
    pane.c.close();
    const reloaded = await connect({ interactive: true, paneSecret: pane.hello.paneSecret });
    expect(reloaded.hello.paneSecret).toBe(pane.hello.paneSecret);
    expect(await sendRequest(reloaded.c.connection, 'chat/answer', approve)).toEqual({ state: 'answered' });
    await reloaded.c.turnEnded(chat.id);
    expect(existsSync(path.join(ws, 'x.txt'))).toBe(true);
  }, 60_000);

  it('SKILL-2: a skill switch needs a pane the server named, and not while a turn another pane started runs', async () => {
    const ws = await tempDir();
    const home = path.join(ws, 'home');
    await mkdir(path.join(home, 'skills', 'plot-style'), { recursive: true });
    await writeFile(
      path.join(home, 'skills', 'plot-style', 'SKILL.md'),
      '---\nname: plot-style\ndescription: Plots in the house style.\n---\nUse the palette.\n'
    );
    const { connect } = await companionWithWriteTurn(ws, { CELLMATE_HOME: home });
    const pane = await connect({ interactive: true });
    const [skill] = await sendRequest(pane.c.connection, 'skills/list', {});
    expect(skill!.name).toBe('plot-style');
    const off = { folder: skill!.folder, enabled: false };

    // The person's turn runs (its write waits on the card): what a cell of that turn could open is refused.
    const { chat, card } = await startWriteTurn(pane.c);
    const headless = await connect({});
    await expect(sendRequest(headless.c.connection, 'skills/set-enabled', off)).rejects.toThrow(
      /is not a pane the server named/
    );
    const rogue = await connect({ interactive: true });
    await expect(sendRequest(rogue.c.connection, 'skills/set-enabled', off)).rejects.toThrow(
      `while a turn started from another Cellmate pane is running (chat ${chat.id})`
    );
    const forged = await connect({ interactive: true, paneSecret: 'guessed-secret-0000000000000000000000000000' });
    await expect(sendRequest(forged.c.connection, 'skills/set-enabled', off)).rejects.toThrow(
      /another Cellmate pane is running/
    );
    await expect(readFile(path.join(home, 'skills.json'), 'utf8')).rejects.toThrow();

    // The pane itself (also after a reload, by its secret) may.
    pane.c.close();
    const reloaded = await connect({ interactive: true, paneSecret: pane.hello.paneSecret });
    const after = await sendRequest(reloaded.c.connection, 'skills/set-enabled', off);
    expect(after.find((s) => s.name === 'plot-style')!.state).toBe('off');
    expect(JSON.parse(await readFile(path.join(home, 'skills.json'), 'utf8'))).toEqual({ disabled: [skill!.folder] });
    await sendRequest(reloaded.c.connection, 'chat/answer', {
      chatId: chat.id,
      questionId: card.item.questionId,
      answer: { action: 'answer' as const, selected: [0] }
    });
    await reloaded.c.turnEnded(chat.id);
  }, 60_000);
});
