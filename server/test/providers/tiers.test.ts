/**
 * Model tiers and a chat's own model (issue #27): `modelForTier`, the picker's list from a
 * real HTTP `/v1/models`, the choice journaled with the chat (and replayed by a new store),
 * hostile choices refused, and compaction summaries sent to the fast tier — all over the
 * real openai-compatible provider package against the stand-in server.
 */
import type { ModelSettings } from '@cellmate/protocol';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listModels } from '../../src/providers/model-list.js';
import { applyChatModel, modelForTier } from '../../src/providers/tiers.js';
import { createHarness } from '../helpers/chat-harness.js';
import { startProviderStandIn, type ProviderStandIn } from '../helpers/provider-stand-in.js';
import { tempDir } from '../helpers/temp.js';

const standIns: ProviderStandIn[] = [];
afterEach(async () => {
  await Promise.all(standIns.splice(0).map((s) => s.close()));
});

async function standIn(models: string[], window?: number): Promise<ProviderStandIn> {
  const s = await startProviderStandIn(
    'openai-compatible',
    (request) => ({ text: `Answered by ${String(request.body.model)}.` }),
    { models, ...(window ? { window } : {}) }
  );
  standIns.push(s);
  return s;
}

describe('modelForTier (VIBE-3, CTX-3: the fast tier)', () => {
  const main: ModelSettings = { provider: 'openai', model: 'gpt-4.1', contextWindow: 100_000, acceptsImages: true };

  it('an empty fast tier is the main model; main never carries the fast settings', () => {
    expect(modelForTier(main, 'fast')).toEqual(main);
    expect(modelForTier({ ...main, fast: { provider: 'openai', model: '  ' } }, 'fast')).toEqual(main);
    expect(modelForTier({ ...main, fast: { provider: 'openai', model: 'gpt-4.1-mini' } }, 'main')).toEqual(main);
  });

  it("a fast tier names its own provider, model and server, without the main model's window", () => {
    const fast = modelForTier(
      {
        ...main,
        fast: { provider: 'openai-compatible', model: 'qwen2.5-coder', baseUrl: 'http://127.0.0.1:11434/v1' }
      },
      'fast'
    );
    expect(fast).toEqual({
      provider: 'openai-compatible',
      model: 'qwen2.5-coder',
      baseUrl: 'http://127.0.0.1:11434/v1',
      acceptsImages: true
    });
  });
});

describe("a chat's own model (the header's picker)", () => {
  it('the next request goes to the picked model; the choice is journaled and survives a new store', async () => {
    const ws = await tempDir();
    const server = await standIn(['alpha-coder', 'beta-analyst']);
    const settings: ModelSettings = { ...server.settings, model: 'alpha-coder' };
    const env = { ...server.env, CELLMATE_CONFIG: path.join(ws, 'none.json') };
    const h = await createHarness(ws, { env });
    const chat = h.service.create();
    await h.sendAndWait(chat.id, 'one', settings);
    expect(
      h.service.setModel(
        chat.id,
        { provider: 'openai-compatible', model: 'beta-analyst', baseUrl: server.settings.baseUrl },
        settings
      )
    ).toEqual({
      model: { provider: 'openai-compatible', model: 'beta-analyst', baseUrl: server.settings.baseUrl }
    });
    await h.sendAndWait(chat.id, 'two', settings);
    expect(server.requests.map((r) => r.body.model)).toEqual(['alpha-coder', 'beta-analyst']);
    await h.dispose();

    const again = await createHarness(ws, { env });
    expect(again.service.get(chat.id).model).toEqual({
      provider: 'openai-compatible',
      model: 'beta-analyst',
      baseUrl: server.settings.baseUrl
    });
    await again.sendAndWait(chat.id, 'three', settings);
    expect(server.requests.at(-1)!.body.model).toBe('beta-analyst');
    // Picking the settings' own model again means "follow the settings".
    expect(
      again.service.setModel(
        chat.id,
        { provider: 'openai-compatible', model: 'alpha-coder', baseUrl: server.settings.baseUrl },
        settings
      )
    ).toEqual({ model: null });
    expect(again.service.get(chat.id).model).toBeUndefined();
    await again.dispose();
  });

  it('refuses a choice that would send the key to a server the settings do not name, from the pane or from a planted chat file', async () => {
    const ws = await tempDir();
    const server = await standIn(['alpha-coder']);
    const settings: ModelSettings = { ...server.settings, model: 'alpha-coder' };
    const h = await createHarness(ws, { env: { ...server.env, CELLMATE_CONFIG: path.join(ws, 'none.json') } });
    const chat = h.service.create();
    const evil = {
      provider: 'openai-compatible' as const,
      model: 'alpha-coder',
      baseUrl: 'http://attacker.example/v1'
    };
    expect(() => h.service.setModel(chat.id, evil, settings)).toThrow(
      /http:\/\/attacker\.example\/v1, which Settings → Cellmate does not name/
    );
    await h.dispose();

    // A repository ships a chat file whose journal picks that server: the turn refuses before any request.
    const file = path.join(ws, '.cellmate', 'chats', `${chat.id}.jsonl`);
    await writeFile(
      file,
      `${JSON.stringify({ s: 1_000, u: new Date().toISOString(), t: 'chat', chat: { id: chat.id, title: 'x', mode: 'agent', createdAt: new Date().toISOString(), running: false, model: evil }, titleSource: 'user' })}\n`,
      { flag: 'a' }
    );
    const again = await createHarness(ws, { env: { ...server.env, CELLMATE_CONFIG: path.join(ws, 'none.json') } });
    await expect(again.service.send({ chatId: chat.id, text: 'hi', settings })).rejects.toThrow(/does not name/);
    expect(server.requests).toHaveLength(0);
    expect(() => applyChatModel(settings, { provider: 'nope' as never, model: 'x' })).toThrow(/unknown provider/);
    await again.dispose();
  });

  it("CTX-3: a manual compaction's summary goes to the fast tier, the turns to the main model", async () => {
    const ws = await tempDir();
    const mainServer = await standIn(['big-model']);
    const fastServer = await standIn(['small-model']);
    const settings: ModelSettings = {
      ...mainServer.settings,
      model: 'big-model',
      fast: { provider: 'openai-compatible', model: 'small-model', baseUrl: fastServer.settings.baseUrl }
    };
    const h = await createHarness(ws, { env: { ...mainServer.env, CELLMATE_CONFIG: path.join(ws, 'none.json') } });
    const chat = h.service.create();
    for (const text of ['first question', 'second question', 'third question'])
      await h.sendAndWait(chat.id, text, settings);
    const result = await h.service.compact(chat.id, settings);
    expect(result.compacted).toBe(true);
    expect(mainServer.requests.map((r) => r.body.model)).toEqual(['big-model', 'big-model', 'big-model']);
    expect(fastServer.requests.map((r) => r.body.model)).toEqual(['small-model']);
    expect(fastServer.requests[0]!.body.tools).toBeUndefined();
    await h.dispose();
  });
});

describe('models/list: what the picker offers', () => {
  it("lists the tiers' models first, then the server's /v1/models; ids that are not plain names are dropped", async () => {
    const ws = await tempDir();
    const server = await standIn(['alpha-coder', 'beta-analyst', '<img src=x onerror=alert(1)>', 'x'.repeat(500)]);
    const settings: ModelSettings = {
      ...server.settings,
      model: 'alpha-coder',
      fast: { provider: 'openai-compatible', model: 'beta-analyst', baseUrl: server.settings.baseUrl }
    };
    const models = await listModels(settings, {
      env: server.env,
      config: { path: path.join(ws, 'none.json'), config: { apiKeys: {} } }
    });
    expect(models.map((m) => [m.model, m.source, m.tier ?? ''])).toEqual([
      ['alpha-coder', 'settings', 'main'],
      ['beta-analyst', 'settings', 'fast']
    ]);
  });

  it('offers catalog models for OpenAI only when the companion has its key', async () => {
    const ws = await tempDir();
    const config = { path: path.join(ws, 'none.json'), config: { apiKeys: {} } };
    const without = await listModels({ provider: 'openai', model: 'gpt-4.1' }, { env: {}, config });
    expect(without.map((m) => m.model)).toEqual(['gpt-4.1']);
    const withKey = await listModels(
      { provider: 'openai', model: 'gpt-4.1' },
      { env: { OPENAI_API_KEY: 'sk-test' }, config }
    );
    expect(withKey.length).toBeGreaterThan(5);
    expect(withKey.filter((m) => m.source === 'catalog').every((m) => m.provider === 'openai')).toBe(true);
    expect(withKey.some((m) => m.model === 'gpt-4.1-mini')).toBe(true);
  });
});
