/** The tool() bridge's chunking (SPEC EVAL-5), with a tiny chunk size. */
import { describe, expect, it } from 'vitest';
import {
  TOOL_CHANNEL_PREFIX,
  ToolChannelEndpoint,
  chunk,
  parseToolChannelPrompt
} from '../../src/tool-channel/channel.js';

describe('bridge protocol', () => {
  it('parses only prefixed JSON prompts (a plain input() prompt is not a bridge call)', () => {
    expect(parseToolChannelPrompt('Your name? ')).toBeUndefined();
    expect(parseToolChannelPrompt(`${TOOL_CHANNEL_PREFIX}{"op":"more","id":1,"part":1}`)).toEqual({
      op: 'more',
      id: 1,
      part: 1
    });
    expect(parseToolChannelPrompt(`${TOOL_CHANNEL_PREFIX}not json`)).toBeUndefined();
  });

  it('reassembles a chunked call and slices a large response', async () => {
    const seen: unknown[] = [];
    const ep = new ToolChannelEndpoint(async (name, args) => {
      seen.push([name, args]);
      return { ok: true, output: 'y'.repeat(25) };
    }, 8);
    const payload = JSON.stringify({ name: 'echo', args: { s: 'x'.repeat(20) } });
    const parts = chunk(payload, 8);
    let reply = '';
    for (let i = 0; i < parts.length; i++)
      reply = await ep.handle({ op: 'call', id: 1, part: i, parts: parts.length, data: parts[i]! });
    expect(seen).toEqual([['echo', { s: 'x'.repeat(20) }]]);
    const first = JSON.parse(reply) as { parts: number; data: string };
    const pieces = [first.data];
    for (let i = 1; i < first.parts; i++)
      pieces.push((JSON.parse(await ep.handle({ op: 'more', id: 1, part: i })) as { data: string }).data);
    expect(JSON.parse(pieces.join(''))).toEqual({ ok: true, output: 'y'.repeat(25) });
  });

  it('a failing handler becomes {ok: false, error}', async () => {
    const ep = new ToolChannelEndpoint(async () => {
      throw new Error('nope');
    });
    const r = JSON.parse(await ep.handle({ op: 'call', id: 2, part: 0, parts: 1, data: '{"name":"x","args":{}}' })) as {
      data: string;
    };
    expect(JSON.parse(r.data)).toEqual({ ok: false, error: 'nope' });
  });
});
