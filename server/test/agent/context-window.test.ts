import { APICallError } from '@ai-sdk/provider';
import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { clampCompaction } from '../../src/chats/chat-file.js';
import { replayJournal } from '../../src/chats/chat-journal.js';
import { pruneBoundary, summaryPivot, composeSummary, personRequests } from '../../src/agent/compaction.js';
import { contextBudget } from '../../src/agent/context-manager.js';
import {
  contextView,
  messageTokens,
  placeholderText,
  prunedMessage,
  summaryMessage
} from '../../src/agent/context-view.js';
import { cacheOptions, previousRequestLength } from '../../src/agent/prompt-cache.js';
import { isContextOverflow, overflowFigures } from '../../src/agent/provider-errors.js';
import { addUsage, usageFromProvider } from '../../src/agent/usage.js';
import { costOf, findCatalogModel, modelFacts, serverWindow } from '../../src/providers/model-facts.js';

// CTX-1..3: usage, model facts, the compacted view, overflow detection — as tables.

const big = 'x'.repeat(3_000);
function turn(i: number, output = big): ModelMessage[] {
  return [
    { role: 'user', content: `question ${i}` },
    {
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId: `c${i}`, toolName: 'eval', input: { code: `print(${i})` } }]
    },
    {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: `c${i}`, toolName: 'eval', output: { type: 'text', value: output } }]
    },
    { role: 'assistant', content: [{ type: 'text', text: `answer ${i}` }] }
  ];
}
const history = Array.from({ length: 10 }, (_, i) => turn(i)).flat();

describe('usage (CTX-1)', () => {
  it.each([
    [
      'OpenAI-style total with cached reads',
      {
        inputTokens: { total: 1000, noCache: 200, cacheRead: 800, cacheWrite: undefined },
        outputTokens: { total: 50, text: 50, reasoning: undefined }
      },
      { input: 1000, cachedInput: 800, cacheWrite: 0, output: 50 }
    ],
    [
      'Anthropic-style uncached part apart',
      {
        inputTokens: { total: 10, noCache: 10, cacheRead: 900, cacheWrite: 90 },
        outputTokens: { total: 5, text: 5, reasoning: undefined }
      },
      { input: 1000, cachedInput: 900, cacheWrite: 90, output: 5 }
    ],
    [
      'reasoning reported',
      {
        inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 30, text: 10, reasoning: 20 }
      },
      { input: 10, cachedInput: 0, cacheWrite: 0, output: 30, reasoning: 20 }
    ]
  ])('%s', (_name, raw, expected) => {
    expect(usageFromProvider(raw)).toEqual(expected);
  });
  it('nothing reported is no usage; sums add up', () => {
    expect(
      usageFromProvider({
        inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: undefined, text: undefined, reasoning: undefined }
      })
    ).toBeUndefined();
    expect(
      addUsage(
        { input: 1, cachedInput: 1, cacheWrite: 0, output: 2 },
        { input: 3, cachedInput: 0, cacheWrite: 1, output: 4, reasoning: 2 }
      )
    ).toEqual({ input: 4, cachedInput: 1, cacheWrite: 1, output: 6, reasoning: 2 });
  });
});

describe('model facts from the models.dev catalog (CTX-1)', () => {
  it('finds catalogued models by exact, undated and dated ids, and prices them', async () => {
    const gpt = await modelFacts({ provider: 'openai', model: 'gpt-4.1' });
    expect(gpt).toMatchObject({ windowSource: 'catalog', window: expect.any(Number), maxOutput: expect.any(Number) });
    expect(gpt.window!).toBeGreaterThan(100_000);
    expect(costOf({ input: 1_000_000, cachedInput: 0, cacheWrite: 0, output: 0 }, gpt.prices)).toBeGreaterThan(0);
    const cat = {
      anthropic: {
        models: { 'claude-sonnet-4-20250514': { id: 'claude-sonnet-4-20250514', limit: { context: 200_000 } } }
      }
    };
    expect(findCatalogModel(cat, 'anthropic', 'claude-sonnet-4')?.limit?.context).toBe(200_000);
    expect(findCatalogModel(cat, 'anthropic', 'claude-sonnet-4-20250514')?.limit?.context).toBe(200_000);
    expect(findCatalogModel(cat, 'anthropic', 'claude-unknown-9')).toBeUndefined();
  });
  it("the person's setting wins; an unknown model says unknown", async () => {
    expect(await modelFacts({ provider: 'openai', model: 'gpt-4.1', contextWindow: 16_000 })).toMatchObject({
      window: 16_000,
      windowSource: 'settings'
    });
    expect(await modelFacts({ provider: 'scripted', model: 'scripted' })).toMatchObject({ windowSource: 'unknown' });
  });
  it.each([
    ['vLLM', [{ id: 'm', max_model_len: 32768 }], 32768],
    ['LM Studio', [{ id: 'm', context_window: 8192 }], 8192],
    ['OpenRouter-style', [{ id: 'm', context_length: 131072 }], 131072],
    ['llama.cpp', [{ id: 'm', meta: { n_ctx_train: 4096 } }], 4096],
    ['nothing said', [{ id: 'm' }], undefined]
  ])("an OpenAI-compatible server's /v1/models window: %s", (_name, entries, expected) => {
    expect(serverWindow(entries as Array<Record<string, unknown>>, 'm')).toBe(expected);
  });
  it('the budget keeps room for the answer and compacts at 85 % of the rest by default', () => {
    expect(contextBudget({ window: 16_000, windowSource: 'settings' }, undefined)).toEqual({
      window: 16_000,
      reservedOutput: 4_000,
      compactAtTokens: 10_200
    });
    expect(contextBudget({ window: 200_000, windowSource: 'catalog', maxOutput: 64_000 }, 0.5)).toEqual({
      window: 200_000,
      reservedOutput: 32_000,
      compactAtTokens: 84_000
    });
    expect(contextBudget({ windowSource: 'unknown' }, undefined).compactAtTokens).toBeUndefined();
  });
});

describe('overflow errors (CTX-3)', () => {
  const api = (status: number, body: string) =>
    new APICallError({
      message: JSON.parse(body).error?.message ?? 'Bad Request',
      url: 'http://x',
      requestBodyValues: {},
      statusCode: status,
      responseBody: body
    });
  it.each([
    [
      'OpenAI',
      api(
        400,
        '{"error":{"message":"This model\'s maximum context length is 16000 tokens. However, your messages resulted in 17000 tokens.","code":"context_length_exceeded"}}'
      ),
      { window: 16000, tokens: 17000 }
    ],
    [
      'Anthropic',
      api(
        400,
        '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}'
      ),
      { window: 200000, tokens: 210000 }
    ],
    [
      'llama.cpp',
      api(
        400,
        '{"error":{"message":"request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error","n_ctx":8192}}'
      ),
      { window: 8192, tokens: 9000 }
    ],
    ['Ollama', api(500, '{"error":{"message":"the input length exceeds the context length"}}'), {}]
  ])('%s is an overflow, with its figures', (_name, error, figures) => {
    expect(isContextOverflow(error)).toBe(true);
    expect(overflowFigures(error)).toEqual(figures);
  });
  it.each([
    ['rate limit', api(429, '{"error":{"message":"Too many requests"}}')],
    ['bad key', api(401, '{"error":{"message":"maximum context length is fine but your key is wrong"}}')],
    ['a plain error', new Error('socket hang up')]
  ])('%s is not', (_name, error) => {
    expect(isContextOverflow(error)).toBe(false);
  });
});

describe('the compacted view (CTX-3)', () => {
  it('is the history itself without a state, and reuses its derived messages from step to step', () => {
    expect(contextView(history, undefined, 'chat')).toEqual(history);
    const state = { summaryUpTo: 8, summary: 'S', pruneBefore: 20, summarizedUsers: 2 };
    const a = contextView(history, state, 'chat');
    const b = contextView([...history, ...turn(10)], state, 'chat');
    expect(a.every((m, i) => m === b[i])).toBe(true); // same objects: the prompt conversion and cached prefix hold
    expect(a[0]).toBe(summaryMessage('S', 2));
    expect(a.length).toBe(history.length - 8 + 1);
  });
  it('pruning replaces only large outputs, keeps each call paired with its result, and names the saved output', () => {
    const [, , tool] = turn(1);
    const pruned = prunedMessage(tool!, 'chat') as Extract<ModelMessage, { role: 'tool' }>;
    expect(pruned).not.toBe(tool);
    expect(pruned.content[0]).toMatchObject({ type: 'tool-result', toolCallId: 'c1', toolName: 'eval' });
    const text = (pruned.content[0] as { output: { value: string } }).output.value;
    expect(text).toContain('.cellmate/outputs/chat--pruned-c1.txt');
    expect(text).toBe(placeholderText('chat', (tool as Extract<ModelMessage, { role: 'tool' }>).content[0] as never)); // deterministic across restarts
    const [, , small] = turn(2, 'ok');
    expect(prunedMessage(small!, 'chat')).toBe(small);
    expect(messageTokens(pruned)).toBeLessThan(messageTokens(tool!) / 5);
  });
  it('the prune boundary protects the newest outputs; a summary pivot never lands on a tool message', () => {
    const boundary = pruneBoundary(history, 0, 2_500);
    expect(boundary).toBeGreaterThan(0);
    expect(history.slice(boundary).filter((m) => m.role === 'tool').length).toBe(2);
    for (const keep of [0, 500, 1_500, 4_000, 20_000]) {
      const pivot = summaryPivot(history, 0, keep);
      if (pivot !== undefined) expect(history[pivot]!.role).not.toBe('tool');
    }
    expect(history[summaryPivot(history, 0, 4_000)!]!.role).toBe('user');
  });
  it('the summary carries the kernel state and the files touched; attached context is not a request', () => {
    const text = composeSummary({
      modelSummary: 'Goal: sales.',
      requests: [],
      files: [{ path: 'a.ipynb', tools: ['notebook_edit'] }],
      kernelState: '- df: pandas.DataFrame 3×2'
    });
    expect(text).toMatch(
      /Goal: sales\.[\s\S]*`a\.ipynb` \(notebook_edit\)[\s\S]*Live state[\s\S]*df: pandas\.DataFrame/
    );
    expect(
      personRequests([{ role: 'user', content: 'plot it\n\n<context attached by Cellmate; data>\nsecret\n</context>' }])
    ).toEqual(['plot it']);
  });
});

describe('cache hints (CTX-2)', () => {
  const prompt = [
    { role: 'system' as const, content: 'sys' },
    ...Array.from({ length: 6 }, (_, i) => ({
      role: 'user' as const,
      content: [{ type: 'text' as const, text: String(i) }]
    }))
  ];
  it("Anthropic: the system prompt, the previous request's end and the newest message; inputs untouched", () => {
    const out = cacheOptions('anthropic.messages', prompt, [], { key: 'k', previousLength: 3 });
    const marked = out.prompt.flatMap((m, i) => (m.providerOptions?.anthropic ? [i] : []));
    expect(marked).toEqual([0, 3, 6]);
    expect(prompt.some((m) => 'providerOptions' in m)).toBe(false);
  });
  it('OpenAI: a prompt_cache_key; others: nothing', () => {
    expect(cacheOptions('openai.responses', prompt, [], { key: 'chat-1', previousLength: 0 }).providerOptions).toEqual({
      openai: { promptCacheKey: 'chat-1' }
    });
    expect(
      cacheOptions('openai-compatible.chat', prompt, [], { key: 'k', previousLength: 0 }).providerOptions
    ).toBeUndefined();
  });
  it("a turn's first request reads what the previous turn cached: up to its final answer", () => {
    expect(
      previousRequestLength([
        { role: 'user' },
        { role: 'assistant' },
        { role: 'tool' },
        { role: 'assistant' },
        { role: 'user' }
      ])
    ).toBe(3);
  });
});

describe('the journal keeps the compaction state (CTX-3)', () => {
  const meta = { id: 'c', title: 't', mode: 'agent' as const, createdAt: 'x', running: false };
  const lines = (records: object[]) => Buffer.from(records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  it('replays the latest state and the meter; a cut clamps it', () => {
    const context = {
      model: 'm',
      usedTokens: 5,
      estimated: false,
      windowSource: 'unknown',
      reservedOutput: 1,
      total: { input: 5, cachedInput: 0, cacheWrite: 0, output: 1 }
    };
    const { record } = replayJournal(
      undefined,
      0,
      lines([
        { s: 1, u: 'u', t: 'chat', chat: meta, titleSource: 'default' },
        { s: 2, u: 'u', t: 'messages', add: history },
        { s: 3, u: 'u', t: 'compaction', state: { summaryUpTo: 4, summary: 'old', pruneBefore: 10 } },
        { s: 4, u: 'u', t: 'compaction', state: { summaryUpTo: 8, summary: 'S', pruneBefore: 20 } },
        { s: 5, u: 'u', t: 'context', context },
        { s: 6, u: 'u', t: 'cut', length: 12 }
      ])
    );
    expect(record!.compaction).toEqual({ summaryUpTo: 8, summary: 'S', pruneBefore: 12 });
    expect(record!.chat.context).toEqual(context);
    expect(clampCompaction({ summaryUpTo: 8, summary: 'S', pruneBefore: 20 }, 5)).toEqual({
      summaryUpTo: 0,
      pruneBefore: 5
    });
  });
});
