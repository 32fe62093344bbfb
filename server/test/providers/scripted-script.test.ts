import type { LanguageModelV3Prompt } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { chunkText, parseScript, scriptPosition, selectStep } from '../../src/providers/scripted-script.js';

const user = (text: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text }] });
const assistant = (text: string) => ({ role: 'assistant' as const, content: [{ type: 'text' as const, text }] });

describe('scripted script', () => {
  it.each<[string, LanguageModelV3Prompt, { turn: number; step: number }]>([
    ['first call', [{ role: 'system', content: 's' }, user('a')], { turn: 0, step: 0 }],
    ['after one tool step', [user('a'), assistant('x'), { role: 'tool', content: [] }], { turn: 0, step: 1 }],
    ['second turn', [user('a'), assistant('x'), user('b')], { turn: 1, step: 0 }],
    [
      'second turn, step 2',
      [user('a'), assistant('x'), user('b'), assistant('y'), assistant('z')],
      { turn: 1, step: 2 }
    ]
  ])('position: %s', (_label, prompt, expected) => {
    expect(scriptPosition(prompt)).toEqual(expected);
  });

  it('selects steps from turns or from the every-turn list', () => {
    const turns = parseScript({ turns: [[{ text: 'a' }], [{ text: 'b' }, { text: 'c' }]] }, 'x');
    expect(selectStep(turns, { turn: 1, step: 1 })).toEqual({ text: 'c' });
    expect(selectStep(turns, { turn: 2, step: 0 })).toBeUndefined();
    const every = parseScript({ steps: [{ text: 'a' }] }, 'x');
    expect(selectStep(every, { turn: 7, step: 0 })).toEqual({ text: 'a' });
    expect(selectStep(every, { turn: 7, step: 1 })).toBeUndefined();
  });

  it('rejects malformed scripts with the expected format in the message', () => {
    expect(() => parseScript({ turns: [{ text: 'a' }] }, 'script.json')).toThrow(
      /script.json is not a valid script at turns.0.*Expected \{"turns"/
    );
    expect(() => parseScript({ steps: [{ txt: 'a' }] }, 'script.json')).toThrow(/not a valid script/);
  });

  it('chunks text into words that concatenate back exactly', () => {
    const text = 'Hello  world,\nthis is  a test. ';
    const chunks = chunkText(text);
    expect(chunks.join('')).toBe(text);
    expect(chunks.length).toBe(6);
  });
});
