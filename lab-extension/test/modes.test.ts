/** The pane's fold of a chat's mode (issue #16, MODE-1/8): snapshot, `mode-changed`, bad input. */
import { describe, expect, it } from 'vitest';
import type { Chat } from '@cellmate/protocol';

import { applyEvent, fromSnapshot, isChatEvent } from '../src/model';

const chat = (mode: unknown): Chat =>
  ({
    id: 'c1',
    title: 't',
    mode,
    createdAt: '2026-01-01T00:00:00Z',
    updatedAt: '2026-01-01T00:00:00Z',
    running: false,
    items: []
  }) as unknown as Chat;

describe('chat mode in the pane state', () => {
  it("takes the snapshot's mode; an unknown one (a newer server) shows as Agent", () => {
    expect(fromSnapshot(chat('plan')).mode).toBe('plan');
    expect(fromSnapshot(chat('party')).mode).toBe('agent');
  });

  it('MODE-1: a chat saved when the Agent mode was called `chat` opens in Agent mode, and a `chat` mode-changed event means Agent', () => {
    expect(fromSnapshot(chat('chat')).mode).toBe('agent');
    const planned = fromSnapshot(chat('plan'));
    expect(applyEvent(planned, { type: 'mode-changed', mode: 'chat' } as never).state.mode).toBe('agent');
    expect(isChatEvent({ type: 'mode-changed', mode: 'chat' })).toBe(true);
  });

  it('mode-changed switches the mode and asks the header and composer to refresh; a repeat changes nothing', () => {
    const state = fromSnapshot(chat('agent'));
    const step = applyEvent(state, { type: 'mode-changed', mode: 'plan' });
    expect(step.state.mode).toBe('plan');
    expect(step.change.running).toBe(true);
    const again = applyEvent(step.state, { type: 'mode-changed', mode: 'plan' });
    expect(again.state).toBe(step.state);
  });

  it('the guard accepts only known modes', () => {
    expect(isChatEvent({ type: 'mode-changed', mode: 'review' })).toBe(true);
    expect(isChatEvent({ type: 'mode-changed', mode: 'party' })).toBe(false);
    expect(isChatEvent({ type: 'mode-changed' })).toBe(false);
  });
});
