/**
 * Inline completions on the companion (issue #27): the real openai-compatible provider
 * package against the stand-in server — the fast tier answers, the prompt carries the cells
 * and the kernel's names (as data, fenced), the text streams, and an abort reaches the
 * model's server before it answers.
 */
import type { InlineCompletionParams, ModelSettings } from '@cellmate/protocol';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/config/logger.js';
import { cleanCompletion, inlinePrompt, NEIGHBOUR_CHARS } from '../../src/inline/inline-prompt.js';
import { InlineCompletionService } from '../../src/inline/inline-service.js';
import { startProviderStandIn, type ProviderStandIn } from '../helpers/provider-stand-in.js';
import { tempDir } from '../helpers/temp.js';

const standIns: ProviderStandIn[] = [];
afterEach(async () => {
  await Promise.all(standIns.splice(0).map((s) => s.close()));
});

const KERNEL = '- df: pandas.DataFrame 2×4; columns (4): city, month, sales, returns';

function params(model: ModelSettings, over: Partial<InlineCompletionParams> = {}): InlineCompletionParams {
  return {
    requestId: 'r1',
    model,
    notebookPath: 'sales.ipynb',
    language: 'python',
    prefix: 'df.',
    suffix: '',
    cellsAbove: ['import pandas as pd'],
    cellsBelow: [],
    ...over
  };
}

describe('InlineCompletionService', () => {
  it("asks the fast tier with the cells and the kernel's names, and streams the cleaned text", async () => {
    const ws = await tempDir();
    const server = await startProviderStandIn(
      'openai-compatible',
      () => ({ text: '```python\ngroupby("city")["sales"].sum()\n```' }),
      { models: ['main', 'fast'] }
    );
    standIns.push(server);
    const seen: Array<{ origin: string | undefined; notebook: string | undefined }> = [];
    const service = new InlineCompletionService({
      workspace: ws,
      env: { ...server.env, CELLMATE_CONFIG: path.join(ws, 'none.json') },
      logger: silentLogger,
      kernelNames: async (origin, notebook) => {
        seen.push({ origin, notebook });
        return KERNEL;
      }
    });
    const model: ModelSettings = {
      ...server.settings,
      model: 'main',
      fast: { provider: 'openai-compatible', model: 'fast', baseUrl: server.settings.baseUrl }
    };
    const deltas: string[] = [];
    const result = await service.complete(params(model), 'connection-7', new AbortController().signal, (d) =>
      deltas.push(d)
    );
    expect(result.text).toBe('groupby("city")["sales"].sum()');
    expect(deltas.join('')).toBe(result.text);
    expect(seen).toEqual([{ origin: 'connection-7', notebook: 'sales.ipynb' }]);
    const request = server.requests[0]!;
    expect(request.body.model).toBe('fast');
    expect(request.body.tools).toBeUndefined();
    const user = (request.body.messages as Array<{ role: string; content: string }>).find(
      (m) => m.role === 'user'
    )!.content;
    expect(user).toContain(KERNEL);
    expect(user).toContain('import pandas as pd');
    expect(user).toContain('df.<CURSOR>');
  });

  it("an abort reaches the model's server before it answers, and resolves with nothing", async () => {
    const ws = await tempDir();
    const server = await startProviderStandIn('openai-compatible', () => ({ text: 'late' }), { delayMs: 2_000 });
    standIns.push(server);
    const service = new InlineCompletionService({
      workspace: ws,
      env: { ...server.env, CELLMATE_CONFIG: path.join(ws, 'none.json') },
      logger: silentLogger
    });
    const controller = new AbortController();
    const done = service.complete(params(server.settings), undefined, controller.signal, () => undefined);
    await expect.poll(() => server.requests.length).toBe(1);
    controller.abort();
    expect(await done).toEqual({ text: '' });
    await expect.poll(() => server.requests[0]!.aborted ?? false).toBe(true);
    expect(server.requests[0]!.answeredAt).toBeUndefined();
  });

  it('a fast tier that cannot run says which setting to fix', async () => {
    const ws = await tempDir();
    const service = new InlineCompletionService({
      workspace: ws,
      env: { CELLMATE_CONFIG: path.join(ws, 'none.json') },
      logger: silentLogger
    });
    await expect(
      service.complete(
        params({ provider: 'openai', model: 'gpt-4.1' }),
        undefined,
        new AbortController().signal,
        () => undefined
      )
    ).rejects.toThrow(/No API key for openai/);
  });
});

describe('inline prompt (pure)', () => {
  it('fences the notebook as data, keeps the nearest neighbours within the bound', () => {
    const far = 'a'.repeat(NEIGHBOUR_CHARS);
    const text = inlinePrompt(
      {
        prefix: 'x = ',
        suffix: '\nprint(x)',
        cellsAbove: [far, 'near = 1'],
        cellsBelow: ['after = 2', far],
        language: 'python'
      },
      undefined
    );
    expect(text.startsWith('<notebook>')).toBe(true);
    expect(text.trimEnd().endsWith('</notebook>')).toBe(true);
    expect(text).toContain('near = 1');
    expect(text).toContain('after = 2');
    expect(text).toContain('x = <CURSOR>\nprint(x)');
    expect(text.length).toBeLessThan(3 * NEIGHBOUR_CHARS);
  });

  it('cleans fences, a repeated line start and an answer that only repeats what follows', () => {
    expect(cleanCompletion('```python\nsum()\n```', 'df.', '')).toBe('sum()');
    expect(cleanCompletion('total = df.sum()', 'total = ', '')).toBe('df.sum()');
    expect(cleanCompletion(')', 'f(x', ')')).toBe('');
  });
});
