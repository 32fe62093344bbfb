/**
 * A local HTTP stand-in for a real model provider (issue #14): it speaks the streaming SSE
 * format of OpenAI's Responses API, Anthropic's Messages API or an OpenAI-compatible
 * chat-completions server, answers each request with the next scripted step, and records
 * every request body — what the real AI SDK provider package actually sent. The provider
 * packages do the HTTP themselves: OpenAI and Anthropic through a `fetch` that only
 * rewrites their public origin to this server, openai-compatible through its base URL.
 * Used by the per-provider wire tests and `npm run bench -- catalog`.
 */
import type { ModelSettings } from '@cellmate/protocol';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

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
  close(): Promise<void>;
}

const ORIGINS: Record<WireProvider, string | undefined> = {
  openai: 'https://api.openai.com',
  anthropic: 'https://api.anthropic.com',
  'openai-compatible': undefined
};

/** Starts a stand-in on 127.0.0.1 that answers the n-th request with `steps[n]`. */
export async function startProviderStandIn(provider: WireProvider, steps: readonly StandInStep[] /* read as requests come: push to extend */): Promise<ProviderStandIn> {
  const requests: StandInRequest[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      const index = requests.push({ url: req.url ?? '', headers: req.headers, body: JSON.parse(raw || '{}') as Record<string, unknown> }) - 1;
      const step = steps[index];
      if (!step) {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"the stand-in has no more scripted steps"}}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const frame of FRAMES[provider](step, index)) res.write(frame);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const local = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const origin = ORIGINS[provider];
  const redirected: typeof globalThis.fetch = (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (url.startsWith(local)) return globalThis.fetch(input, init);
    if (!origin || !url.startsWith(origin)) throw new Error(`the stand-in for ${provider} got a request for ${url}`);
    return globalThis.fetch(local + url.slice(origin.length), init);
  };
  const settings: ModelSettings = provider === 'openai-compatible'
    ? { provider, model: 'stand-in-model', baseUrl: `${local}/v1` }
    : { provider, model: provider === 'openai' ? 'gpt-4.1' : 'claude-sonnet-4-5' };
  const env: Record<string, string> = {
    openai: { OPENAI_API_KEY: 'sk-stand-in' },
    anthropic: { ANTHROPIC_API_KEY: 'sk-ant-stand-in' },
    'openai-compatible': { CELLMATE_OPENAI_COMPATIBLE_API_KEY: 'sk-stand-in' }
  }[provider];
  return {
    provider, requests, settings, env, fetch: redirected,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    })
  };
}

/** The tools a request declared, normalised to name/description/schema (any provider's body). */
export function declaredTools(provider: WireProvider, body: Record<string, unknown>): Array<{ name: string; description: string; parameters: unknown }> {
  const tools = (body.tools ?? []) as Array<Record<string, unknown>>;
  return tools.map((t) => {
    if (provider === 'anthropic') return { name: String(t.name), description: String(t.description), parameters: t.input_schema };
    if (provider === 'openai') return { name: String(t.name), description: String(t.description), parameters: t.parameters };
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
  return messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))).join('\n');
}

const data = (value: unknown): string => `data: ${JSON.stringify(value)}\n\n`;

const FRAMES: Record<WireProvider, (step: StandInStep, index: number) => string[]> = {
  openai(step, n) {
    const frames = [data({ type: 'response.created', response: { id: `resp_${n}`, created_at: 1_700_000_000, model: 'gpt-4.1' } })];
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
      frames.push(data({ type: 'response.function_call_arguments.delta', item_id: id, output_index: out, delta: args }));
      frames.push(data({ type: 'response.output_item.done', output_index: out, item: { ...item, arguments: args, status: 'completed' } }));
      out++;
    }
    frames.push(data({ type: 'response.completed', response: { usage: { input_tokens: 10, output_tokens: 5, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } } } }));
    return frames;
  },
  anthropic(step, n) {
    const frames = [
      `event: message_start\n${data({ type: 'message_start', message: { id: `msg_${n}`, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } })}`
    ];
    let index = 0;
    if (step.text) {
      frames.push(data({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
      frames.push(data({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: step.text } }));
      frames.push(data({ type: 'content_block_stop', index }));
      index++;
    }
    for (const [i, call] of (step.toolCalls ?? []).entries()) {
      frames.push(data({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: `toolu_${n}_${i}`, name: call.name, input: {} } }));
      frames.push(data({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(call.input) } }));
      frames.push(data({ type: 'content_block_stop', index }));
      index++;
    }
    const stop = step.toolCalls?.length ? 'tool_use' : 'end_turn';
    frames.push(data({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } }));
    frames.push(data({ type: 'message_stop' }));
    return frames;
  },
  'openai-compatible'(step, n) {
    const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
      data({ id: `chatcmpl-${n}`, object: 'chat.completion.chunk', created: 1_700_000_000, model: 'stand-in-model', choices: [{ index: 0, delta, finish_reason: finish }] });
    const frames = [chunk({ role: 'assistant', content: step.text ?? '' })];
    for (const [i, call] of (step.toolCalls ?? []).entries()) {
      frames.push(chunk({ tool_calls: [{ index: i, id: `call_${n}_${i}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.input) } }] }));
    }
    frames.push(chunk({}, step.toolCalls?.length ? 'tool_calls' : 'stop'));
    frames.push('data: [DONE]\n\n');
    return frames;
  }
};
