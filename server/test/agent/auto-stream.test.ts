/**
 * SIDE-2: the Auto review starts as soon as a call's arguments are complete in the stream,
 * while the model keeps streaming, and the card says "checking…" at once. A stand-in model
 * (the fake the quality bar allows: the language model) emits a tool call and then keeps
 * streaming text; it also answers the reviewer's request, which it timestamps.
 */
import type { ChatEvent, ToolCallItem } from '@cellmate/protocol';
import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { runTurn } from '../../src/agent/run-turn.js';
import { createSidecarClassifier } from '../../src/agent/sidecar-classifier.js';
import { PolicyStore } from '../../src/policy/policy-store.js';
import { builtinTools } from '../../src/tools/index.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { tempDir } from '../helpers/temp.js';

const USAGE = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 }
};

/** A model that streams a tool call, then more text for `trailMs`; its reviewer answers after `verdictMs`. */
class StreamingStandIn implements LanguageModelV3 {
  readonly specificationVersion = 'v3';
  readonly provider = 'stand-in';
  readonly modelId = 'streaming';
  readonly supportedUrls = {};
  readonly marks: Record<string, number> = {};

  constructor(
    private readonly trailMs: number,
    private readonly verdictMs: number
  ) {}

  async doGenerate(): Promise<never> {
    throw new Error('stream only');
  }

  async doStream(options: LanguageModelV3CallOptions) {
    const purpose = (options.providerOptions as { cellmate?: { purpose?: string } } | undefined)?.cellmate?.purpose;
    const parts: Array<LanguageModelV3StreamPart | number> = [];
    if (purpose === 'sidecar') {
      this.marks.reviewAsked = performance.now();
      parts.push(this.verdictMs, {
        type: 'text-delta',
        id: 'v',
        delta: '{"verdict": "allow", "reason": "routine write"}'
      });
    } else if (options.prompt.filter((m) => m.role === 'assistant').length === 0) {
      parts.push({
        type: 'tool-call',
        toolCallId: 'c1',
        toolName: 'write',
        input: JSON.stringify({ path: 'out.md', content: 'x\n' })
      });
      for (let i = 0; i < 10; i++) parts.push(this.trailMs / 10, { type: 'text-delta', id: 't', delta: `word${i} ` });
      parts.push(-1); // marks the main stream's end
    } else parts.push({ type: 'text-delta', id: 't2', delta: 'Done.' });
    const marks = this.marks;
    return {
      stream: new ReadableStream<LanguageModelV3StreamPart>({
        async start(controller) {
          controller.enqueue({ type: 'stream-start', warnings: [] });
          for (const p of parts) {
            if (p === -1) marks.mainFinished = performance.now();
            else if (typeof p === 'number') await sleep(p);
            else controller.enqueue(p);
          }
          if (purpose === 'sidecar') marks.verdictSent = performance.now();
          controller.enqueue({ type: 'finish', usage: USAGE, finishReason: { unified: 'stop', raw: undefined } });
          controller.close();
        }
      })
    };
  }
}

describe('SIDE-2: the review runs while the model streams', () => {
  it('the reviewer is asked before the step ends, the card says checking… at once, and the call runs on its verdict', async () => {
    const ws = await tempDir();
    const model = new StreamingStandIn(300, 100);
    // No approval port: a call that needed a person would be denied, so the file proves the verdict let it through.
    const registry = new ToolRegistry(builtinTools(), {
      policy: new PolicyStore({ workspace: ws, env: { HOME: path.join(ws, 'home') } }),
      autoReview: { isWorkspaceTrusted: () => true }
    });
    const events: Array<{ at: number; event: ChatEvent }> = [];
    const result = await runTurn(
      {
        chatId: 'c',
        turnId: 't',
        workspace: ws,
        model,
        settings: { provider: 'openai', model: 'streaming' },
        registry,
        system: 'sys',
        history: [{ role: 'user', content: 'write it' }],
        signal: new AbortController().signal,
        maxRetries: 0,
        autoApproval: createSidecarClassifier({ sidecarModel: () => model, enabled: () => true })
      },
      { emit: (event) => events.push({ at: performance.now(), event }), appendMessages: () => undefined }
    );
    expect(result.reason).toBe('stop');
    expect(await readFile(path.join(ws, 'out.md'), 'utf8')).toBe('x\n');
    const { reviewAsked, mainFinished, verdictSent } = model.marks;
    expect(reviewAsked).toBeLessThan(mainFinished!); // asked while the model was still streaming
    expect(verdictSent).toBeLessThan(mainFinished!); // and its answer was hidden behind the stream
    const reviews = events
      .filter((e) => e.event.type === 'item-updated' && e.event.item.kind === 'tool')
      .map((e) => ({ at: e.at, review: (e.event as { item: ToolCallItem }).item.review }));
    const checking = reviews.find((r) => r.review?.state === 'checking');
    expect(checking!.at).toBeLessThan(mainFinished!);
    expect(reviews.at(-1)!.review).toEqual({ state: 'auto-approved', reason: 'routine write' });
  });
});
