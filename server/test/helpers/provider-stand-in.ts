/**
 * A local HTTP stand-in for a real model provider: it speaks the streaming SSE format of
 * OpenAI's Responses API, Anthropic's Messages API or an OpenAI-compatible
 * chat-completions server, answers each request with the next scripted step (or what a
 * responder function returns), and records every request body — what the real AI SDK
 * provider package actually sent. The provider packages do the HTTP themselves: OpenAI and
 * Anthropic through a `fetch` that only rewrites their public origin to this server,
 * openai-compatible through its base URL.
 *
 * Like the real services it bills every answer (usage computed from the request body, see
 * stand-in-accounting.ts), simulates their prompt caches (Anthropic's at `cache_control`
 * breakpoints, OpenAI's automatic prefix cache) and, given a `window`, refuses a request
 * whose prompt is longer with the provider's own overflow error.
 * Used by the wire tests, `npm run bench -- catalog` and `npm run bench -- long`.
 */
import type { ModelSettings } from '@cellmate/protocol';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PromptAccounting, type StandInUsage, type Tokenizer } from './stand-in-accounting.js';

export type { StandInUsage, Tokenizer } from './stand-in-accounting.js';

/** The providers with a real HTTP wire. */
export type WireProvider = 'openai' | 'anthropic' | 'openai-compatible';

/** One scripted model step: text, then tool calls (each `input` sent as JSON text). */
export interface StandInStep {
  text?: string;
  toolCalls?: Array<{ name: string; input: unknown }>;
}

/** One request the provider package sent. */
export interface StandInRequest {
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** What the stand-in billed (for a refused request: what it would have, nothing cached). */
  usage: StandInUsage & { outputTokens: number };
  /** Refused with the provider's context-overflow error. */
  overflow: boolean;
  /** With `delayMs`: the client went away before the answer was sent (an abort reached the server). */
  aborted?: boolean;
  /** When the answer was sent (epoch ms, fractional), once it was. */
  answeredAt?: number;
}

/**
 * Answers a request. `index` counts the requests answered before it (refused ones do not
 * count), so a retried step gets the same index. A request that declares no tools is a
 * summary request: answer it with text.
 */
export type StandInResponder = (request: StandInRequest, index: number) => StandInStep;

/** How an OpenAI-compatible server words a context overflow. */
export type OverflowStyle = 'openai' | 'vllm' | 'llamacpp' | 'ollama';

export interface StandInOptions {
  /** Context window in prompt tokens; longer requests get the overflow error. Unlimited if absent. */
  window?: number;
  /** openai-compatible only: whose overflow error to answer with (default `openai`). */
  overflowStyle?: OverflowStyle;
  /**
   * openai-compatible only: send the usage chunk only when the request asks for it with
   * `stream_options.include_usage`, as vLLM, llama.cpp and Ollama do. Off by default: the AI
   * SDK's openai-compatible provider asks only when created with `includeUsage: true`.
   */
  usageOnlyWhenAsked?: boolean;
  /** Counts a block's text (default: characters / 4, rounded up). */
  tokenizer?: Tokenizer;
  /** openai-compatible only: the model ids `/v1/models` lists (default: `stand-in-model`). */
  models?: readonly string[];
  /** Waits this long before answering, as a model computing does; a client that leaves meanwhile is recorded as `aborted`. */
  delayMs?: number;
}

/** A running stand-in. */
export interface ProviderStandIn {
  provider: WireProvider;
  requests: StandInRequest[];
  /** Model settings that reach this server. */
  settings: ModelSettings;
  /** Environment with a dummy API key for the provider. */
  env: Record<string, string>;
  /** For OpenAI/Anthropic: the global fetch with the provider's public origin pointed here. */
  fetch: typeof globalThis.fetch;
  /** Changes the context window from the next request on (`undefined`: unlimited). */
  setWindow(window: number | undefined): void;
  /** Prompt tokens of each request so far, refused ones included. */
  promptTokens(): number[];
  close(): Promise<void>;
}

const ORIGINS: Record<WireProvider, string | undefined> = {
  openai: 'https://api.openai.com',
  anthropic: 'https://api.anthropic.com',
  'openai-compatible': undefined
};

/**
 * Starts a stand-in on 127.0.0.1. With an array, the n-th answered request gets `steps[n]`
 * (read as requests come: push to extend); with a function, what it returns.
 */
export async function startProviderStandIn(
  provider: WireProvider,
  steps: readonly StandInStep[] | StandInResponder,
  options: StandInOptions = {}
): Promise<ProviderStandIn> {
  const requests: StandInRequest[] = [];
  const accounting = new PromptAccounting(provider, options.tokenizer);
  let window = options.window;
  let answered = 0;
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      if (req.method === 'GET' && req.url?.endsWith('/models')) {
        // An OpenAI-compatible server's model list, with its window as vLLM words it (max_model_len); not a model request.
        const data = (options.models ?? ['stand-in-model']).map((id) => ({
          id,
          object: 'model',
          ...(window !== undefined ? { max_model_len: window } : {})
        }));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data }));
        return;
      }
      const body = JSON.parse(raw || '{}') as Record<string, unknown>;
      const { accepted, ...billed } = accounting.bill(body, (tokens) => window === undefined || tokens <= window);
      const overflow = !accepted;
      const usage = { ...billed, outputTokens: 0 };
      const request: StandInRequest = { url: req.url ?? '', headers: req.headers, body, usage, overflow };
      requests.push(request);
      if (overflow) {
        const { status, error } = overflowError(
          provider,
          options.overflowStyle ?? 'openai',
          usage.promptTokens,
          window!
        );
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(error));
        return;
      }
      if (options.delayMs) {
        res.on('close', () => {
          if (!res.writableFinished) request.aborted = true;
        });
        setTimeout(() => {
          if (!request.aborted) answer(request, body, usage, res);
        }, options.delayMs);
        return;
      }
      answer(request, body, usage, res);
    });
  });
  const answer = (
    request: StandInRequest,
    body: Record<string, unknown>,
    usage: StandInRequest['usage'],
    res: http.ServerResponse
  ): void => {
    const index = answered++;
    const step = typeof steps === 'function' ? steps(request, index) : steps[index];
    if (!step) {
      res
        .writeHead(500, { 'content-type': 'application/json' })
        .end('{"error":{"message":"the stand-in has no more scripted steps"}}');
      return;
    }
    usage.outputTokens = Math.max(
      1,
      Math.ceil(
        ((step.text ?? '').length +
          (step.toolCalls ?? []).reduce((n, c) => n + c.name.length + JSON.stringify(c.input).length, 0)) /
          4
      )
    );
    const withUsage =
      provider !== 'openai-compatible' ||
      !options.usageOnlyWhenAsked ||
      (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    request.answeredAt = performance.timeOrigin + performance.now();
    for (const frame of FRAMES[provider](step, index, withUsage ? usage : undefined)) res.write(frame);
    res.end();
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const local = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const origin = ORIGINS[provider];
  const redirected: typeof globalThis.fetch = (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (url.startsWith(local)) return globalThis.fetch(input, init);
    if (!origin || !url.startsWith(origin)) throw new Error(`the stand-in for ${provider} got a request for ${url}`);
    return globalThis.fetch(local + url.slice(origin.length), init);
  };
  const settings: ModelSettings =
    provider === 'openai-compatible'
      ? { provider, model: 'stand-in-model', baseUrl: `${local}/v1` }
      : { provider, model: provider === 'openai' ? 'gpt-4.1' : 'claude-sonnet-4-5' };
  const env: Record<string, string> = {
    openai: { OPENAI_API_KEY: 'sk-stand-in' },
    anthropic: { ANTHROPIC_API_KEY: 'sk-ant-stand-in' },
    'openai-compatible': { CELLMATE_OPENAI_COMPATIBLE_API_KEY: 'sk-stand-in' }
  }[provider];
  return {
    provider,
    requests,
    settings,
    env,
    fetch: redirected,
    setWindow: (n) => {
      window = n;
    },
    promptTokens: () => requests.map((r) => r.usage.promptTokens),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      })
  };
}

/** Prompt tokens of a request body as the stand-in counts them (no cache involved). */
export function countPromptTokens(
  provider: WireProvider,
  body: Record<string, unknown>,
  tokenizer?: Tokenizer
): number {
  return new PromptAccounting(provider, tokenizer).promptTokens(body);
}

/**
 * The provider's own answer to a prompt longer than its window: status and JSON body as
 * the service sends them. Ollama's runner refuses with a 500 (its OpenAI layer calls it an
 * `api_error`), so a client that only looks at 400s misses it.
 */
export function overflowError(
  provider: WireProvider,
  style: OverflowStyle,
  tokens: number,
  window: number
): { status: number; error: unknown } {
  if (provider === 'anthropic') {
    return {
      status: 400,
      error: {
        type: 'error',
        error: { type: 'invalid_request_error', message: `prompt is too long: ${tokens} tokens > ${window} maximum` }
      }
    };
  }
  const which = provider === 'openai' ? 'openai' : style;
  switch (which) {
    case 'vllm':
      return {
        status: 400,
        error: {
          error: {
            message: `This model's maximum context length is ${window} tokens. However, your request has ${tokens} input tokens. Please reduce the length of the input messages.`,
            type: 'BadRequestError',
            param: null,
            code: 400
          }
        }
      };
    case 'llamacpp':
      return {
        status: 400,
        error: {
          error: {
            code: 400,
            message: `request (${tokens} tokens) exceeds the available context size (${window} tokens), try increasing it`,
            type: 'exceed_context_size_error',
            n_prompt_tokens: tokens,
            n_ctx: window
          }
        }
      };
    case 'ollama':
      return {
        status: 500,
        error: {
          error: { message: 'the input length exceeds the context length', type: 'api_error', param: null, code: null }
        }
      };
    default:
      return {
        status: 400,
        error: {
          error: {
            message: `This model's maximum context length is ${window} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
            type: 'invalid_request_error',
            param: 'messages',
            code: 'context_length_exceeded'
          }
        }
      };
  }
}

/** The tools a request declared, normalised to name/description/schema (any provider's body). */
export function declaredTools(
  provider: WireProvider,
  body: Record<string, unknown>
): Array<{ name: string; description: string; parameters: unknown }> {
  const tools = (body.tools ?? []) as Array<Record<string, unknown>>;
  return tools.map((t) => {
    if (provider === 'anthropic')
      return { name: String(t.name), description: String(t.description), parameters: t.input_schema };
    if (provider === 'openai')
      return { name: String(t.name), description: String(t.description), parameters: t.parameters };
    const f = t.function as Record<string, unknown>;
    return { name: String(f.name), description: String(f.description), parameters: f.parameters };
  });
}

/** The system prompt text a request carried. */
export function systemPrompt(provider: WireProvider, body: Record<string, unknown>): string {
  if (provider === 'anthropic') {
    const system = body.system as string | Array<{ text: string }> | undefined;
    return typeof system === 'string' ? system : (system ?? []).map((s) => s.text).join('\n');
  }
  const messages = (provider === 'openai' ? body.input : body.messages) as Array<{ role: string; content: unknown }>;
  return messages
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
    .join('\n');
}

const data = (value: unknown): string => `data: ${JSON.stringify(value)}\n\n`;

type Billed = StandInRequest['usage'];

const FRAMES: Record<WireProvider, (step: StandInStep, index: number, usage: Billed | undefined) => string[]> = {
  openai(step, n, usage) {
    const frames = [
      data({ type: 'response.created', response: { id: `resp_${n}`, created_at: 1_700_000_000, model: 'gpt-4.1' } })
    ];
    let out = 0;
    if (step.text) {
      const id = `msg_${n}`;
      frames.push(data({ type: 'response.output_item.added', output_index: out, item: { type: 'message', id } }));
      frames.push(data({ type: 'response.output_text.delta', item_id: id, delta: step.text }));
      frames.push(data({ type: 'response.output_item.done', output_index: out, item: { type: 'message', id } }));
      out++;
    }
    for (const [i, call] of (step.toolCalls ?? []).entries()) {
      const id = `fc_${n}_${i}`;
      const args = JSON.stringify(call.input);
      const item = { type: 'function_call', id, call_id: `call_${n}_${i}`, name: call.name };
      frames.push(data({ type: 'response.output_item.added', output_index: out, item: { ...item, arguments: '' } }));
      frames.push(
        data({ type: 'response.function_call_arguments.delta', item_id: id, output_index: out, delta: args })
      );
      frames.push(
        data({
          type: 'response.output_item.done',
          output_index: out,
          item: { ...item, arguments: args, status: 'completed' }
        })
      );
      out++;
    }
    const u = usage!;
    frames.push(
      data({
        type: 'response.completed',
        response: {
          usage: {
            input_tokens: u.promptTokens,
            input_tokens_details: { cached_tokens: u.cachedTokens },
            output_tokens: u.outputTokens,
            output_tokens_details: { reasoning_tokens: 0 }
          }
        }
      })
    );
    return frames;
  },
  anthropic(step, n, usage) {
    const u = usage!;
    // input_tokens is the uncached part; the cache's read and write are reported beside it.
    const start = {
      input_tokens: u.promptTokens - u.cachedTokens - u.cacheWriteTokens,
      cache_read_input_tokens: u.cachedTokens,
      cache_creation_input_tokens: u.cacheWriteTokens,
      output_tokens: 1
    };
    const frames = [
      `event: message_start\n${data({ type: 'message_start', message: { id: `msg_${n}`, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage: start } })}`
    ];
    let index = 0;
    if (step.text) {
      frames.push(data({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
      frames.push(data({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: step.text } }));
      frames.push(data({ type: 'content_block_stop', index }));
      index++;
    }
    for (const [i, call] of (step.toolCalls ?? []).entries()) {
      frames.push(
        data({
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: `toolu_${n}_${i}`, name: call.name, input: {} }
        })
      );
      frames.push(
        data({
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(call.input) }
        })
      );
      frames.push(data({ type: 'content_block_stop', index }));
      index++;
    }
    const stop = step.toolCalls?.length ? 'tool_use' : 'end_turn';
    frames.push(
      data({
        type: 'message_delta',
        delta: { stop_reason: stop, stop_sequence: null },
        usage: { output_tokens: u.outputTokens }
      })
    );
    frames.push(data({ type: 'message_stop' }));
    return frames;
  },
  'openai-compatible'(step, n, usage) {
    const base = {
      id: `chatcmpl-${n}`,
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'stand-in-model'
    };
    const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
      data({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
    const frames = [chunk({ role: 'assistant', content: step.text ?? '' })];
    for (const [i, call] of (step.toolCalls ?? []).entries()) {
      frames.push(
        chunk({
          tool_calls: [
            {
              index: i,
              id: `call_${n}_${i}`,
              type: 'function',
              function: { name: call.name, arguments: JSON.stringify(call.input) }
            }
          ]
        })
      );
    }
    frames.push(chunk({}, step.toolCalls?.length ? 'tool_calls' : 'stop'));
    if (usage) {
      // As OpenAI's chat API sends it: a last chunk with no choices.
      frames.push(
        data({
          ...base,
          choices: [],
          usage: {
            prompt_tokens: usage.promptTokens,
            completion_tokens: usage.outputTokens,
            total_tokens: usage.promptTokens + usage.outputTokens,
            prompt_tokens_details: { cached_tokens: usage.cachedTokens }
          }
        })
      );
    }
    frames.push('data: [DONE]\n\n');
    return frames;
  }
};
