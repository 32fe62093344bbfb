// The step calls the provider's doStream itself (issue #9): retryable provider errors are
// retried (honouring retry-after), others end the step at once with the provider's own
// error; tool-call inputs arrive as JSON text and are parsed, invalid JSON kept as text.
import { APICallError, type LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { describe, expect, it, vi } from 'vitest';
import { streamStep } from '../../src/agent/stream-step.js';
import { ScriptedLanguageModel } from '../../src/providers/scripted.js';
import { tempDir } from '../helpers/temp.js';

const apiError = (status: number, headers: Record<string, string> = {}) =>
  new APICallError({
    message: `HTTP ${status}`,
    url: 'http://stand-in/v1',
    requestBodyValues: {},
    statusCode: status,
    responseHeaders: headers,
    isRetryable: status === 429 || status >= 500
  });

function partsStream(parts: LanguageModelV3StreamPart[]): ReadableStream<LanguageModelV3StreamPart> {
  return new ReadableStream({
    start(c) {
      parts.forEach((p) => c.enqueue(p));
      c.close();
    }
  });
}

const FINISH: LanguageModelV3StreamPart = {
  type: 'finish',
  usage: {
    inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 0, text: 0, reasoning: 0 }
  },
  finishReason: { unified: 'tool-calls', raw: undefined }
};

async function step(model: ScriptedLanguageModel, maxRetries: number) {
  const calls: unknown[] = [];
  const outcome = await streamStep(
    {
      model,
      system: 's',
      messages: [{ role: 'user', content: 'go' }],
      tools: [{ name: 'read', description: 'r', parameters: { type: 'object' } }],
      signal: new AbortController().signal,
      idleTimeoutMs: 10_000,
      maxRetries
    },
    { onTextDelta: () => {}, onToolCall: (c) => calls.push(c) }
  );
  return { outcome, calls };
}

describe('stream step on doStream (issue #9)', () => {
  it('retries a 429 after its retry-after-ms, then streams', async () => {
    const model = new ScriptedLanguageModel('s', { workspace: await tempDir() });
    const doStream = vi
      .spyOn(model, 'doStream')
      .mockRejectedValueOnce(apiError(429, { 'retry-after-ms': '5' }))
      .mockResolvedValueOnce({
        stream: partsStream([{ type: 'tool-call', toolCallId: 'c1', toolName: 'read', input: '{"path":"a"}' }, FINISH])
      });
    const { outcome, calls } = await step(model, 2);
    expect(doStream).toHaveBeenCalledTimes(2);
    expect(outcome.end).toEqual({ kind: 'finished', finishReason: 'tool-calls' });
    expect(calls).toEqual([{ toolCallId: 'c1', toolName: 'read', input: { path: 'a' } }]);
    // The declared tools reach the provider as function tools with their JSON schema.
    expect(doStream.mock.calls[0]![0].tools).toEqual([
      { type: 'function', name: 'read', description: 'r', inputSchema: { type: 'object' } }
    ]);
  });

  it('a 401 is not retried and comes back as the provider error', async () => {
    const model = new ScriptedLanguageModel('s', { workspace: await tempDir() });
    const doStream = vi.spyOn(model, 'doStream').mockRejectedValue(apiError(401));
    const { outcome } = await step(model, 2);
    expect(doStream).toHaveBeenCalledTimes(1);
    expect(outcome.end.kind).toBe('error');
    expect(APICallError.isInstance((outcome.end as { error: unknown }).error)).toBe(true);
  });

  it('retries stop at maxRetries; empty input is {}, invalid JSON stays text', async () => {
    const model = new ScriptedLanguageModel('s', { workspace: await tempDir() });
    const failing = vi.spyOn(model, 'doStream').mockRejectedValue(apiError(503, { 'retry-after-ms': '1' }));
    expect((await step(model, 1)).outcome.end.kind).toBe('error');
    expect(failing).toHaveBeenCalledTimes(2);
    failing.mockReset().mockResolvedValue({
      stream: partsStream([
        { type: 'tool-call', toolCallId: 'a', toolName: 'read', input: '' },
        { type: 'tool-call', toolCallId: 'b', toolName: 'read', input: '{"path": ' },
        FINISH
      ])
    });
    expect((await step(model, 0)).calls).toEqual([
      { toolCallId: 'a', toolName: 'read', input: {} },
      { toolCallId: 'b', toolName: 'read', input: '{"path": ' }
    ]);
  });
});
