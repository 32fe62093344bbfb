/**
 * The scripted model streamed for real (doStream): the `{{sent_at}}` placeholder the turn
 * bench measures delivery with, and a script edited between steps taking effect (the
 * parsed-script cache is keyed by the file's version).
 */
import { utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { ScriptedLanguageModel, SENT_AT_PLACEHOLDER } from '../../src/providers/scripted.js';
import { tempDir } from '../helpers/temp.js';

async function deltas(model: ScriptedLanguageModel): Promise<string[]> {
  const { stream } = await model.doStream({
    prompt: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }]
  } as never);
  const out: string[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return out;
    const part = value as LanguageModelV3StreamPart;
    if (part.type === 'text-delta') out.push(part.delta);
  }
}

describe('scripted model', () => {
  it('replaces {{sent_at}} with the wall clock (ms, µs precision) as the chunk leaves; other text is untouched', async () => {
    const ws = await tempDir();
    await writeFile(
      path.join(ws, 's.json'),
      JSON.stringify({ steps: [{ text: `at ${SENT_AT_PLACEHOLDER} done`, chunkDelayMs: 0 }] })
    );
    const model = new ScriptedLanguageModel('m', { workspace: ws, scriptPath: 's.json' });
    const before = performance.timeOrigin + performance.now();
    const got = await deltas(model);
    const after = performance.timeOrigin + performance.now();
    expect(got[0]).toBe('at ');
    expect(got[1]).toMatch(/^\d+\.\d{3} $/);
    const stamp = Number(got[1]);
    expect(stamp).toBeGreaterThanOrEqual(before - 1);
    expect(stamp).toBeLessThanOrEqual(after + 1);
    expect(got[2]).toBe('done');
  });

  it('a script edited between steps takes effect on the next step', async () => {
    const ws = await tempDir();
    const file = path.join(ws, 's.json');
    await writeFile(file, JSON.stringify({ steps: [{ text: 'one', chunkDelayMs: 0 }] }));
    const model = new ScriptedLanguageModel('m', { workspace: ws, scriptPath: 's.json' });
    expect(await deltas(model)).toEqual(['one']);
    // Same size, and the same mtime as before: only the content differs — set a new mtime
    // the way any editor's write does.
    await writeFile(file, JSON.stringify({ steps: [{ text: 'two', chunkDelayMs: 0 }] }));
    const later = new Date(Date.now() + 5_000);
    await utimes(file, later, later);
    expect(await deltas(model)).toEqual(['two']);
  });
});
