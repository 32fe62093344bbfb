// The provider stand-in bills and refuses as the real services do: its overflow errors,
// usage and prompt-cache figures reach the real AI SDK provider packages in their wire
// formats, so overflow detection and cache accounting can be tested against them.
import {
  APICallError,
  type LanguageModelV3,
  type LanguageModelV3CallOptions,
  type LanguageModelV3StreamPart
} from '@ai-sdk/provider';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { afterEach, describe, expect, it } from 'vitest';
import {
  countPromptTokens,
  startProviderStandIn,
  type OverflowStyle,
  type ProviderStandIn,
  type StandInOptions,
  type StandInResponder,
  type StandInStep,
  type WireProvider
} from '../helpers/provider-stand-in.js';
import { ANTHROPIC_LOOKBACK_BLOCKS, PromptAccounting } from '../helpers/stand-in-accounting.js';

let standIn: ProviderStandIn | undefined;
afterEach(async () => {
  await standIn?.close();
  standIn = undefined;
});

function modelFor(s: ProviderStandIn, includeUsage = false): LanguageModelV3 {
  if (s.provider === 'openai') return createOpenAI({ apiKey: 'sk-stand-in', fetch: s.fetch })('gpt-4.1');
  if (s.provider === 'anthropic')
    return createAnthropic({ apiKey: 'sk-ant-stand-in', fetch: s.fetch })('claude-sonnet-4-5');
  return createOpenAICompatible({
    name: 'stand-in',
    baseURL: s.settings.baseUrl!,
    apiKey: 'sk',
    includeUsage
  }).chatModel('stand-in-model');
}

const ephemeral = { anthropic: { cacheControl: { type: 'ephemeral' } } };
const TOOLS: LanguageModelV3CallOptions['tools'] = [
  {
    type: 'function',
    name: 'eval',
    description: 'Runs code.',
    inputSchema: { type: 'object', properties: { code: { type: 'string' } } }
  }
];
const table = (turn: number): string =>
  Array.from({ length: 60 }, (_, row) => `${turn}\t${row}\t${(row * 3.14159).toFixed(5)}\tvalue-${row}`).join('\n');

/** A conversation of `turns` user/assistant exchanges, the last user message a breakpoint (Anthropic). */
function prompt(
  turns: number,
  opts: { system?: string; breakpoints?: boolean } = {}
): LanguageModelV3CallOptions['prompt'] {
  const system = opts.system ?? `You are a careful analyst. ${'Keep answers short. '.repeat(300)}`;
  const out: LanguageModelV3CallOptions['prompt'] = [
    { role: 'system', content: system, ...(opts.breakpoints ? { providerOptions: ephemeral } : {}) }
  ];
  for (let t = 0; t < turns; t++) {
    const last = t === turns - 1;
    out.push({
      role: 'user',
      content: [{ type: 'text', text: `Turn ${t}:\n${table(t)}` }],
      ...(last && opts.breakpoints ? { providerOptions: ephemeral } : {})
    });
    if (!last) out.push({ role: 'assistant', content: [{ type: 'text', text: `Noted turn ${t}.` }] });
  }
  return out;
}

async function stream(
  model: LanguageModelV3,
  p: LanguageModelV3CallOptions['prompt'],
  tools = TOOLS
): Promise<LanguageModelV3StreamPart[]> {
  const { stream: s } = await model.doStream({ prompt: p, tools });
  const parts: LanguageModelV3StreamPart[] = [];
  for await (const part of s as unknown as AsyncIterable<LanguageModelV3StreamPart>) parts.push(part);
  return parts;
}

const finish = (parts: LanguageModelV3StreamPart[]) =>
  parts.find((p): p is Extract<LanguageModelV3StreamPart, { type: 'finish' }> => p.type === 'finish')!;

async function start(
  provider: WireProvider,
  steps: readonly StandInStep[] | StandInResponder,
  options?: StandInOptions
): Promise<ProviderStandIn> {
  standIn = await startProviderStandIn(provider, steps, options);
  return standIn;
}

describe.each<WireProvider>(['openai', 'anthropic', 'openai-compatible'])('stand-in on the %s wire', (provider) => {
  it("refuses a prompt past its window with the provider's overflow error; a refused request does not use up a step", async () => {
    const seen: number[] = [];
    const s = await start(
      provider,
      (_req, index) => {
        seen.push(index);
        return { text: `answer ${index}` };
      },
      { window: 1000 }
    );
    const model = modelFor(s, true);
    const error = await stream(model, prompt(3)).then(
      () => undefined,
      (e: unknown) => e
    );
    expect(APICallError.isInstance(error)).toBe(true);
    const e = error as APICallError;
    expect(e.statusCode).toBe(400);
    const tokens = s.requests[0]!.usage.promptTokens;
    expect(tokens).toBeGreaterThan(1000);
    expect(s.requests[0]!.overflow).toBe(true);
    if (provider === 'anthropic') {
      expect(JSON.parse(e.responseBody!)).toEqual({
        type: 'error',
        error: { type: 'invalid_request_error', message: `prompt is too long: ${tokens} tokens > 1000 maximum` }
      });
    } else {
      expect(JSON.parse(e.responseBody!).error).toEqual({
        message: `This model's maximum context length is 1000 tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded'
      });
    }
    // A shorter request fits; the window can be raised mid-chat.
    expect(
      (await stream(model, prompt(1, { system: 'Be brief.' }))).some(
        (p) => p.type === 'text-delta' && p.delta === 'answer 0'
      )
    ).toBe(true);
    s.setWindow(undefined);
    await stream(model, prompt(3));
    expect(seen).toEqual([0, 1]);
    expect(s.requests.map((r) => r.overflow)).toEqual([true, false, false]);
    expect(s.promptTokens()).toEqual([tokens, s.requests[1]!.usage.promptTokens, tokens]);
  });

  it('reports usage computed from the request body', async () => {
    const s = await start(provider, [
      { text: 'first' },
      { toolCalls: [{ name: 'eval', input: { code: 'df.shape' } }] }
    ]);
    const model = modelFor(s, true);
    const one = finish(await stream(model, prompt(2))).usage;
    const req = s.requests[0]!;
    expect(req.usage.promptTokens).toBe(countPromptTokens(provider, req.body));
    expect(one.inputTokens.total).toBe(req.usage.promptTokens);
    expect(one.outputTokens.total).toBe(req.usage.outputTokens);
    expect(one.inputTokens.cacheRead ?? 0).toBe(0);
    const two = finish(await stream(model, prompt(2))).usage;
    expect(two.inputTokens.total).toBe(s.requests[1]!.usage.promptTokens);
    // Without breakpoints Anthropic caches nothing; OpenAI's automatic cache serves the repeat.
    if (provider === 'anthropic') expect(two.inputTokens.cacheRead).toBe(0);
    else expect(two.inputTokens.cacheRead).toBe(Math.floor(req.usage.promptTokens / 128) * 128);
  });
});

describe('openai-compatible servers', () => {
  it.each<[OverflowStyle, number, RegExp]>([
    [
      'vllm',
      400,
      /^This model's maximum context length is 1000 tokens\. However, your request has \d+ input tokens\. Please reduce the length of the input messages\.$/
    ],
    ['llamacpp', 400, /^request \(\d+ tokens\) exceeds the available context size \(1000 tokens\), try increasing it$/],
    ['ollama', 500, /^the input length exceeds the context length$/]
  ])('words an overflow as %s does', async (style, status, message) => {
    const s = await start('openai-compatible', [{ text: 'never' }], { window: 1000, overflowStyle: style });
    const e = await stream(modelFor(s), prompt(3)).then(
      () => undefined,
      (x: unknown) => x as APICallError
    );
    expect(e?.statusCode).toBe(status);
    const body = JSON.parse(e!.responseBody!);
    expect(body.error.message).toMatch(message);
    if (style === 'llamacpp')
      expect(body.error).toMatchObject({
        type: 'exceed_context_size_error',
        n_prompt_tokens: s.requests[0]!.usage.promptTokens,
        n_ctx: 1000
      });
  });

  it('sends usage only when asked, if told to behave like the real servers', async () => {
    const s = await start('openai-compatible', [{ text: 'a' }, { text: 'b' }], { usageOnlyWhenAsked: true });
    expect(finish(await stream(modelFor(s, false), prompt(1))).usage.inputTokens.total).toBeUndefined();
    expect(finish(await stream(modelFor(s, true), prompt(1))).usage.inputTokens.total).toBe(
      s.requests[1]!.usage.promptTokens
    );
    expect(s.requests[1]!.body.stream_options).toEqual({ include_usage: true });
  });
});

describe('Anthropic prompt cache at cache_control breakpoints', () => {
  it('writes up to the last breakpoint, then reads the longest prefix an earlier request wrote', async () => {
    const s = await start('anthropic', () => ({ text: 'ok' }));
    const model = modelFor(s);
    const u1 = finish(await stream(model, prompt(3, { breakpoints: true }))).usage;
    const r1 = s.requests[0]!;
    expect(JSON.stringify(r1.body)).toContain('"cache_control":{"type":"ephemeral"}');
    expect(u1.inputTokens.cacheRead).toBe(0);
    // Everything up to the last user message (the last breakpoint) is written.
    expect(u1.inputTokens.cacheWrite).toBe(r1.usage.promptTokens);
    expect(u1.inputTokens.total).toBe(r1.usage.promptTokens);

    // Next turn: the old last message is no longer a breakpoint, the new one is; the lookback finds the old entry.
    const u2 = finish(await stream(model, prompt(5, { breakpoints: true }))).usage;
    const r2 = s.requests[1]!;
    expect(u2.inputTokens.cacheRead).toBe(r1.usage.promptTokens);
    expect(u2.inputTokens.cacheWrite).toBe(r2.usage.promptTokens - r1.usage.promptTokens);
    expect(u2.inputTokens.noCache).toBe(0);

    // A changed system prompt invalidates everything after it.
    const u3 = finish(
      await stream(model, prompt(5, { breakpoints: true, system: `Different. ${'Words. '.repeat(900)}` }))
    ).usage;
    expect(u3.inputTokens.cacheRead).toBe(0);
  });

  it('caches nothing shorter than 1,024 tokens, and only through breakpoints', async () => {
    const s = await start('anthropic', () => ({ text: 'ok' }));
    const model = modelFor(s);
    const short = [
      { role: 'system', content: 'Be brief.', providerOptions: ephemeral },
      { role: 'user', content: [{ type: 'text', text: 'hi' }], providerOptions: ephemeral }
    ] as LanguageModelV3CallOptions['prompt'];
    expect(finish(await stream(model, short)).usage.inputTokens.cacheWrite).toBe(0);
    expect(finish(await stream(model, short)).usage.inputTokens.cacheRead).toBe(0);
  });

  it('looks back at most 20 blocks before a breakpoint', () => {
    const acc = new PromptAccounting('anthropic');
    const big = 'x'.repeat(5000);
    const messages = (n: number, bp: number) =>
      Array.from({ length: n }, (_, i) => ({
        role: i % 2 ? 'assistant' : 'user',
        content: [{ type: 'text', text: `${i} ${big}`, ...(i === bp ? { cache_control: { type: 'ephemeral' } } : {}) }]
      }));
    const first = acc.bill({ messages: messages(2, 1) });
    expect(first.cacheWriteTokens).toBe(first.promptTokens);
    const within = new PromptAccounting('anthropic');
    within.bill({ messages: messages(2, 1) });
    expect(
      within.bill({ messages: messages(2 + ANTHROPIC_LOOKBACK_BLOCKS - 1, ANTHROPIC_LOOKBACK_BLOCKS) }).cachedTokens
    ).toBe(first.promptTokens);
    expect(
      acc.bill({ messages: messages(2 + ANTHROPIC_LOOKBACK_BLOCKS, ANTHROPIC_LOOKBACK_BLOCKS + 1) }).cachedTokens
    ).toBe(0);
  });
});

describe('OpenAI automatic prefix cache', () => {
  it('serves the prefix shared with an earlier request in 128-token steps from 1,024 tokens', () => {
    const acc = new PromptAccounting('openai');
    const item = (i: number, size: number) => ({
      role: 'user',
      content: [{ type: 'input_text', text: `${i} ${'y'.repeat(size)}` }]
    });
    const small = { input: [item(0, 1000)] };
    expect(acc.bill(small).cachedTokens).toBe(0);
    expect(acc.bill(small).cachedTokens).toBe(0); // under 1,024 tokens: never cached
    const base = [item(1, 3000), item(2, 3000)];
    acc.bill({ input: base });
    const longer = acc.bill({ input: [...base, item(3, 3000)] });
    const shared = new PromptAccounting('openai').promptTokens({ input: base });
    expect(longer.cachedTokens).toBe(Math.floor(shared / 128) * 128);
    expect(acc.bill({ input: [item(9, 3000), ...base] }).cachedTokens).toBe(0);
  });

  it('counts a PNG by its pixels, not its base64 length', () => {
    // 20,000 bytes: ~6,700 tokens if its base64 were counted as text.
    const png = Buffer.alloc(20_000);
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]).copy(png);
    png.writeUInt32BE(640, 16);
    png.writeUInt32BE(480, 20);
    const openai = new PromptAccounting('openai').promptTokens({
      input: [
        {
          role: 'user',
          content: [{ type: 'input_image', image_url: `data:image/png;base64,${png.toString('base64')}` }]
        }
      ]
    });
    // 640×480 is 2×1 tiles of 512 px: 85 + 2·170 = 425, plus the JSON around it.
    expect(openai).toBeGreaterThanOrEqual(425);
    expect(openai).toBeLessThan(450);
    const anthropic = new PromptAccounting('anthropic').promptTokens({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') } }
          ]
        }
      ]
    });
    // 640·480 / 750 = 410.
    expect(anthropic).toBeGreaterThanOrEqual(410);
    expect(anthropic).toBeLessThan(440);
  });
});
