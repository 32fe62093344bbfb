/**
 * The diff card's Accept / Discard (`edit/resolve`, SPEC EDIT-3) is the model's own
 * `resolve` call made by the person: it goes through the registry as actor `user`, so the
 * policy's deny rules hold for the click, and the audit log records who resolved it. The
 * click itself is the approval a write-tier `ask` seeks (nobody is asked again). The staging
 * `ast_edit` asks on the default policy; the connected person answers its card "Approve once".
 */
import { PROTOCOL_VERSION, type ToolCallItem } from '@cellmate/protocol';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/config/logger.js';
import { startServer, type ServerHandle } from '../../src/server.js';
import { sendRequest } from '../../src/transport/typed-rpc.js';
import { connectClient, type TestClient } from '../helpers/rpc-client.js';
import { tempDir } from '../helpers/temp.js';

let handle: ServerHandle | undefined;
let client: TestClient | undefined;
afterEach(async () => {
  client?.close();
  await handle?.dispose();
  handle = client = undefined;
});

/** A companion whose policy denies resolve on `locked/`; a person's pane is attached and answers cards. */
async function companion(): Promise<{ ws: string; client: TestClient }> {
  const ws = await tempDir();
  await mkdir(path.join(ws, 'locked'));
  await mkdir(path.join(ws, '.cellmate', 'scripts'), { recursive: true });
  await writeFile(path.join(ws, 'a.py'), 'old(1)\n');
  await writeFile(path.join(ws, 'locked', 'b.py'), 'old(2)\n');
  await writeFile(
    path.join(ws, '.cellmate', 'policy.json'),
    JSON.stringify({ rules: [{ tool: 'resolve', pattern: 'locked/', action: 'deny' }] })
  );
  const env = {
    PATH: process.env.PATH,
    HOME: ws,
    CELLMATE_CONFIG: path.join(ws, 'none.json'),
    CELLMATE_POLICY: path.join(ws, 'no-home-policy.json'),
    CELLMATE_TRUSTED_WORKSPACES: ws
  };
  handle = await startServer({
    workspace: ws,
    socketPath: path.join(ws, 's.sock'),
    env,
    logger: silentLogger,
    kernels: false
  });
  client = await connectClient(handle.socketPath!);
  // The person's pane: only a pane may resolve a diff card (and only the one whose chat it is).
  await sendRequest(client.connection, 'cellmate/hello', { protocolVersion: PROTOCOL_VERSION, interactive: true });
  // The person answers every approval card "Approve once", as from the pane.
  const c = client;
  c.onEvent(({ chatId, event }) => {
    if (
      event.type === 'item-added' &&
      event.item.kind === 'question' &&
      event.item.type === 'approval' &&
      event.item.state === 'pending'
    ) {
      void sendRequest(c.connection, 'chat/answer', {
        chatId,
        questionId: event.item.questionId,
        answer: { action: 'answer', selected: [0] }
      });
    }
  });
  return { ws, client };
}

/** A turn whose scripted model stages `ast_edit old($X) → new($X)` under `where`; returns the chat and edit id. */
async function stage(ws: string, c: TestClient, where: string): Promise<{ chatId: string; editId: string }> {
  const script = `.cellmate/scripts/${where.replace(/\W/g, '_')}.json`;
  await writeFile(
    path.join(ws, script),
    JSON.stringify({
      turns: [
        [
          {
            toolCalls: [
              {
                toolName: 'ast_edit',
                input: { pattern: 'old($X)', rewrite: 'new($X)', path: where, language: 'python' }
              }
            ]
          },
          { text: 'staged' }
        ]
      ]
    })
  );
  const chat = await sendRequest(c.connection, 'chat/create', { title: where });
  const from = c.events.length;
  await sendRequest(c.connection, 'chat/send', {
    chatId: chat.id,
    text: 'go',
    model: { provider: 'scripted', model: 'scripted', scriptPath: script }
  });
  await c.turnEnded(chat.id, from);
  const items = (await sendRequest(c.connection, 'chat/get', { chatId: chat.id })).items;
  expect(
    items.filter((i) => i.kind === 'question').map((q) => (q.kind === 'question' ? [q.approval?.tool, q.state] : []))
  ).toEqual([['ast_edit', 'answered']]);
  const item = items.find((i): i is ToolCallItem => i.kind === 'tool')!;
  expect(item.status, item.output).toBe('ok');
  return { chatId: chat.id, editId: /edit_[0-9a-f]+_\d+/.exec(item.output ?? '')![0] };
}

async function auditOf(ws: string, chatId: string): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(path.join(ws, '.cellmate', 'audit', `${chatId}.jsonl`), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('the diff card resolves through the registry (EDIT-3, HARN-6/7)', () => {
  it('Accept writes the files without asking anyone, and the audit log says the user resolved it', async () => {
    const { ws, client: c } = await companion();
    const { chatId, editId } = await stage(ws, c, 'a.py');
    const r = await sendRequest(c.connection, 'edit/resolve', { chatId, editId, action: 'accept' });
    expect(r.state).toBe('accepted');
    expect(await readFile(path.join(ws, 'a.py'), 'utf8')).toBe('new(1)\n');
    // Polled: the audit line is appended after the answer is sent.
    let rows: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 50 && !rows.some((e) => e.tool === 'resolve'); i++) {
      rows = await auditOf(ws, chatId);
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(rows.find((e) => e.tool === 'resolve')).toMatchObject({
      actor: 'user',
      decision: 'approved-by-action',
      status: 'ok'
    });
  });

  it('a deny rule holds for the click: nothing is written and the card gets the registry message', async () => {
    const { ws, client: c } = await companion();
    const { chatId, editId } = await stage(ws, c, 'locked');
    await expect(sendRequest(c.connection, 'edit/resolve', { chatId, editId, action: 'accept' })).rejects.toThrow(
      /^Denied: resolve on "locked\/b\.py" is denied by the policy rule/
    );
    expect(await readFile(path.join(ws, 'locked', 'b.py'), 'utf8')).toBe('old(2)\n');
  });

  it('another chat cannot resolve the edit', async () => {
    const { ws, client: c } = await companion();
    const { editId } = await stage(ws, c, 'a.py');
    const other = await sendRequest(c.connection, 'chat/create', { title: 'other' });
    await expect(
      sendRequest(c.connection, 'edit/resolve', { chatId: other.id, editId, action: 'accept' })
    ).rejects.toThrow(/belongs to another chat/);
    expect(await readFile(path.join(ws, 'a.py'), 'utf8')).toBe('old(1)\n');
  });
});
