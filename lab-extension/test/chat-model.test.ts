/** The pane's fold of a chat's own model (the header's picker): snapshot, `model-changed`, bad input. */
import { describe, expect, it } from 'vitest';
import type { Chat } from '@cellmate/protocol';

import { applyEvent, fromSnapshot, isChatEvent, sanitizeChat } from '../src/model';
import { neighbours, NEIGHBOUR_CELLS } from '../src/inline-context';

const chat = (model?: unknown): Chat =>
  ({
    id: 'c1',
    title: 't',
    mode: 'agent',
    createdAt: '2026-12-03T00:00:00Z',
    updatedAt: '2026-12-03T00:00:00Z',
    items: [],
    running: false,
    ...(model ? { model } : {})
  }) as Chat;

const BETA = { provider: 'openai-compatible', model: 'beta-analyst', baseUrl: 'http://127.0.0.1:8000/v1' } as const;

describe("a chat's own model in the pane state", () => {
  it("takes the snapshot's model; a malformed one is dropped (the chat follows the settings)", () => {
    expect(fromSnapshot(chat(BETA)).model).toEqual(BETA);
    expect(sanitizeChat(chat({ provider: 'mystery', model: 'x' }))!.chat.model).toBeUndefined();
    expect(sanitizeChat(chat({ provider: 'openai', model: 7 }))!.chat.model).toBeUndefined();
    expect(sanitizeChat(chat(BETA))!.chat.model).toEqual(BETA);
  });

  it('model-changed sets and clears it, and asks the header to refresh', () => {
    const picked = applyEvent(fromSnapshot(chat()), { type: 'model-changed', model: BETA });
    expect(picked.state.model).toEqual(BETA);
    expect(picked.change.running).toBe(true);
    const back = applyEvent(picked.state, { type: 'model-changed', model: null });
    expect(back.state.model).toBeUndefined();
    expect('model' in back.state).toBe(false);
  });

  it('the guard accepts a model, or null; nothing else', () => {
    expect(isChatEvent({ type: 'model-changed', model: BETA })).toBe(true);
    expect(isChatEvent({ type: 'model-changed', model: null })).toBe(true);
    expect(isChatEvent({ type: 'model-changed' })).toBe(false);
    expect(isChatEvent({ type: 'model-changed', model: { provider: 'openai' } })).toBe(false);
    expect(isChatEvent({ type: 'model-changed', model: { provider: 'openai', model: 'm', baseUrl: 3 } })).toBe(false);
  });
});

describe('inline completion context: the cells around the cursor', () => {
  it('keeps the nearest code cells, bounded in number and size, skipping empty ones', () => {
    const sources = [
      'a = 1',
      '',
      'b = 2',
      'c = 3',
      'd = 4',
      'e = 5',
      'f = 6',
      'x'.repeat(NEIGHBOUR_CELLS.chars + 10),
      'CURRENT',
      'g = 7',
      '',
      'h = 8',
      'i = 9',
      'j = 10'
    ];
    const { cellsAbove, cellsBelow } = neighbours(sources, 8);
    expect(cellsAbove).toHaveLength(NEIGHBOUR_CELLS.above);
    expect(cellsAbove.slice(0, 4)).toEqual(['c = 3', 'd = 4', 'e = 5', 'f = 6']);
    expect(cellsAbove[4]).toHaveLength(NEIGHBOUR_CELLS.chars); // the end of a long cell above: what leads to the cursor
    expect(cellsBelow).toEqual(['g = 7', 'h = 8', 'i = 9']);
    expect(neighbours(['only'], 0)).toEqual({ cellsAbove: [], cellsBelow: [] });
  });
});
