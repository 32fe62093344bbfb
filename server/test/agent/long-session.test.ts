import {
  PROTOCOL_VERSION,
  type ChatEvent,
  type CompactionItem,
  type ModelSettings,
  type ToolCallItem
} from '@cellmate/protocol';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sendRequest } from '../../src/transport/typed-rpc.js';
import { buildServer, startCompanion, type Companion } from '../helpers/companion.js';
import {
  startProviderStandIn,
  type ProviderStandIn,
  type StandInRequest,
  type StandInStep
} from '../helpers/provider-stand-in.js';
import { connectClient, type TestClient } from '../helpers/rpc-client.js';
import { tempDir } from '../helpers/temp.js';

// CTX-1..3, EVAL-3: a long analysis chat against a small-window model never dies at the window.

beforeAll(() => buildServer(), 120_000);

let companion: Companion | undefined;
let client: TestClient | undefined;
let standIn: ProviderStandIn | undefined;
afterEach(async () => {
  client?.close();
  await companion?.kill9();
  await standIn?.close();
  companion = client = standIn = undefined;
});

const python = path.resolve(import.meta.dirname, '../../../.venv/bin/python');

const SETUP = [
  'import pandas as pd',
  'df = pd.DataFrame({"city": ["Haifa", "Eilat", "Acre", "Safed"] * 50, "month": list(range(200)), "sales": [i * 7 % 1000 for i in range(200)], "returns": [i % 13 for i in range(200)]})',
  'print(df.shape)'
].join('\n');
/** About 6,000 characters of table, as an analysis turn prints. */
const TABLE = 'print(df.head(150).to_string())';

/** The text of an openai-compatible request's last message. */
function lastMessage(request: StandInRequest): { role: string; content: unknown } {
  return (request.body.messages as Array<{ role: string; content: unknown }>).at(-1)!;
}

/**
 * A model that runs one eval per turn: the code is the person's message when it starts with
 * `eval:`, else the table; after the result it answers in one line. Summary requests (no
 * tools declared) are answered with a short summary.
 */
function analyst(request: StandInRequest): StandInStep {
  if (!Array.isArray(request.body.tools) || request.body.tools.length === 0)
    return { text: 'Summary: the person is exploring the sales table df in the kernel.' };
  const last = lastMessage(request);
  if (last.role === 'tool') return { text: 'Done.' };
  const text = typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
  const code = text.startsWith('eval:') ? text.slice(5) : TABLE;
  return {
    toolCalls: [{ name: 'eval', input: { code, description: 'Run the analysis step in Python', language: 'python' } }]
  };
}

async function startChat(window: number): Promise<{ chatId: string; model: ModelSettings }> {
  const ws = await tempDir();
  standIn = await startProviderStandIn('openai-compatible', analyst, { window });
  companion = await startCompanion(ws, path.join(ws, 'companion.sock'), { CELLMATE_PYTHON: python, ...standIn.env });
  client = await connectClient(path.join(ws, 'companion.sock'));
  await sendRequest(client.connection, 'cellmate/hello', { protocolVersion: PROTOCOL_VERSION, interactive: true });
  const chat = await sendRequest(client.connection, 'chat/create', {});
  // The stand-in's window, told to Cellmate the way a person tells it for a local server.
  return { chatId: chat.id, model: { ...standIn.settings, contextWindow: window } };
}

async function turn(chatId: string, text: string, model: ModelSettings): Promise<ChatEvent> {
  const from = client!.events.length;
  await sendRequest(client!.connection, 'chat/send', { chatId, text, model });
  return client!.turnEnded(chatId, from);
}

function items<K extends string>(kind: K) {
  return client!.events
    .map((e) => e.event)
    .flatMap((e) => (e.type === 'item-added' || e.type === 'item-updated' ? [e.item] : []))
    .filter((i): i is Extract<typeof i, { kind: K }> => i.kind === kind);
}

describe('a long analysis chat against a 16k-window model (CTX-1, CTX-3)', () => {
  it('runs 60 eval turns without an error or an over-window request, and the kernel state outlives the compacted history', async () => {
    const window = 16_000;
    const { chatId, model } = await startChat(window);
    expect(await turn(chatId, `eval:${SETUP}`, model)).toMatchObject({ reason: 'stop' });
    for (let i = 0; i < 58; i++)
      expect(await turn(chatId, `Show me the table again (${i})`, model)).toMatchObject({ reason: 'stop' });
    expect(await turn(chatId, 'eval:print(df.shape)', model)).toMatchObject({ reason: 'stop' });

    // No request was refused, and every one fitted the window.
    expect(standIn!.requests.filter((r) => r.overflow)).toEqual([]);
    expect(Math.max(...standIn!.promptTokens())).toBeLessThanOrEqual(window);
    const compactions = items('compaction') as CompactionItem[];
    expect(compactions.length).toBeGreaterThan(0);
    expect(compactions.some((c) => c.summarizedMessages > 0)).toBe(true);
    // The last eval ran in the same kernel: df still exists.
    const last = (items('tool') as ToolCallItem[]).filter((t) => t.status !== 'running').at(-1)!;
    expect(last.status).toBe('ok');
    expect(last.output).toContain('(200, 4)');
    // The summary the model read names df with its columns, from the kernel itself.
    const summarised = standIn!.requests.filter((r) =>
      JSON.stringify(r.body.messages).includes('Context compacted by Cellmate')
    );
    expect(summarised.length).toBeGreaterThan(0);
    expect(JSON.stringify(summarised.at(-1)!.body.messages)).toMatch(
      /df: pandas\.DataFrame 200×4; columns \(4\): city, month, sales, returns/
    );
    // Usage was counted and shown: a usage item per turn, the meter's figures on the chat.
    expect(items('usage').length).toBe(60);
    const chat = await sendRequest(client!.connection, 'chat/get', { chatId, limit: 10_000 });
    expect(chat.context).toMatchObject({ window, windowSource: 'settings', estimated: false });
    expect(chat.context!.usedTokens).toBeLessThanOrEqual(window);
    // The journal keeps everything: the pane still shows every turn.
    expect(chat.items.filter((i) => i.kind === 'user').length).toBe(60);
  }, 300_000);

  it('recovers from a provider overflow (the window shrinks mid-chat) with one compaction and one retry', async () => {
    const { chatId, model } = await startChat(64_000);
    expect(await turn(chatId, `eval:${SETUP}`, model)).toMatchObject({ reason: 'stop' });
    for (let i = 0; i < 5; i++) expect(await turn(chatId, `Table ${i}`, model)).toMatchObject({ reason: 'stop' });
    // The server now serves a smaller window than the one Cellmate was told.
    standIn!.setWindow(6_000);
    const before = standIn!.requests.length;
    expect(await turn(chatId, 'eval:print(df.shape)', model)).toMatchObject({ reason: 'stop' });
    const refused = standIn!.requests.slice(before).filter((r) => r.overflow);
    expect(refused).toHaveLength(1);
    const overflowCards = (items('compaction') as CompactionItem[]).filter((c) => c.trigger === 'overflow');
    expect(overflowCards).toHaveLength(1);
    const last = (items('tool') as ToolCallItem[]).filter((t) => t.status !== 'running').at(-1)!;
    expect(last.output).toContain('(200, 4)');
  }, 180_000);
});
