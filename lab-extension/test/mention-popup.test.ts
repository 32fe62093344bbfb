/** Issue #5: which `@word` the composer completes (pure part of the mention popup). */
import { describe, expect, it } from 'vitest';

import { mentionAt } from '../src/widgets/mention-popup';

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
