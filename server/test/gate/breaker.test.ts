import { describe, expect, it } from 'vitest';
import { Breaker, breakerStopsTurn } from '../../src/gate/breaker.js';

const turn = { chatId: 'c1', turnId: 't1' };

describe('Breaker: repeated refusals per turn (HARN-6, SIDE-3)', () => {
  it('HARN-6: trips at the streak limit, and a call that goes through starts the streak again', () => {
    const breaker = new Breaker({ streak: 3 });
    expect(breaker.refuse(turn)).toEqual({ streak: 1, total: 1, tripped: false });
    expect(breaker.refuse(turn).tripped).toBe(false);
    breaker.pass(turn);
    expect(breaker.tally(turn)).toEqual({ streak: 0, total: 2, tripped: false });
    breaker.refuse(turn);
    breaker.refuse(turn);
    expect(breaker.refuse(turn)).toEqual({ streak: 3, total: 5, tripped: true });
    // Refusals past the limit keep counting (the message names how many in a row).
    expect(breaker.refuse(turn)).toEqual({ streak: 4, total: 6, tripped: true });
  });

  it("SIDE-3: trips at the turn's total even when passes break every streak", () => {
    const breaker = new Breaker({ streak: 3, total: 5 });
    for (let i = 0; i < 4; i++) {
      expect(breaker.refuse(turn).tripped).toBe(false);
      breaker.pass(turn);
    }
    expect(breaker.refuse(turn)).toEqual({ streak: 1, total: 5, tripped: true });
  });

  it('HARN-6: counts each turn of each chat apart, and reset forgets one turn', () => {
    const breaker = new Breaker({ streak: 2 });
    breaker.refuse(turn);
    breaker.refuse({ chatId: 'c1', turnId: 't2' });
    breaker.refuse({ chatId: 'c2', turnId: 't1' });
    expect(breaker.refuse(turn).tripped).toBe(true);
    expect(breaker.tally({ chatId: 'c1', turnId: 't2' })).toEqual({ streak: 1, total: 1, tripped: false });
    breaker.reset(turn);
    expect(breaker.tally(turn)).toEqual({ streak: 0, total: 0, tripped: false });
    expect(breaker.tally({ chatId: 'c2', turnId: 't1' }).streak).toBe(1);
  });

  it('a pass in a turn with no refusal keeps nothing', () => {
    const breaker = new Breaker({ streak: 1 });
    breaker.pass(turn);
    expect(breaker.tally(turn)).toEqual({ streak: 0, total: 0, tripped: false });
  });

  it('keeps a bounded number of turns: the oldest is forgotten first', () => {
    const breaker = new Breaker({ streak: 5 });
    for (let i = 0; i < 300; i++) breaker.refuse({ chatId: 'c', turnId: `t${i}` });
    expect(breaker.tally({ chatId: 'c', turnId: 't0' }).total).toBe(0);
    expect(breaker.tally({ chatId: 'c', turnId: 't299' }).total).toBe(1);
  });

  it.each([
    ['model', true],
    ['kernel', true],
    ['user', false],
    ['mcp', false]
  ] as const)('HARN-6 HARN-12: a tripped breaker stops the turn of a %s caller: %s', (actor, stops) => {
    expect(breakerStopsTurn(actor)).toBe(stops);
  });
});
