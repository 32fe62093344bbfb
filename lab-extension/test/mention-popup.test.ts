/** Issue #5: which `@word` the composer completes (pure part of the mention popup). */
import { describe, expect, it } from 'vitest';

import { mentionAt, stillAsked } from '../src/widgets/mention-popup';

describe('mentionAt', () => {
  it('finds the @word ending at the caret', () => {
    expect(mentionAt('describe @d', 11)).toEqual({ start: 9, prefix: 'd' });
    expect(mentionAt('@', 1)).toEqual({ start: 0, prefix: '' });
    expect(mentionAt('see @data/x.c', 13)).toEqual({ start: 4, prefix: 'data/x.c' });
  });

  it('ignores e-mail addresses, finished mentions and text after the caret', () => {
    expect(mentionAt('mail a@b', 8)).toBeNull();
    expect(mentionAt('describe @df ', 13)).toBeNull();
    expect(mentionAt('@df and more', 12)).toBeNull();
  });
});

describe('stillAsked', () => {
  it('keeps a reply only while the same word still ends at the caret', () => {
    const asked = { start: 9, prefix: 'd' };
    expect(stillAsked(mentionAt, 'describe @d', 11, asked)).toBe(true);
    // Sent and cleared (no input event): the reply must not open a list over the empty composer.
    expect(stillAsked(mentionAt, '', 0, asked)).toBe(false);
    // Typed on: a newer request is under way for the longer word.
    expect(stillAsked(mentionAt, 'describe @df', 12, asked)).toBe(false);
    // The same word elsewhere (text pasted before it) is another request.
    expect(stillAsked(mentionAt, 'now describe @d', 15, asked)).toBe(false);
  });
});
