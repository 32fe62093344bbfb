/** The pane's workers list state (issue #16 item 5, VIBE-2): the guard, the model's fold, the elapsed format. */
import { describe, expect, it } from 'vitest';
import type { WorkerSummary } from '@cellmate/protocol';

import { isChatEvent } from '../src/model';
import { formatElapsed } from '../src/tool-format';
import { WorkersModel } from '../src/workers';

const worker = (id: string, over: Partial<WorkerSummary> = {}): WorkerSummary => ({
  id,
  chatId: 'c1',
  label: `worker ${id}`,
  tier: 'fast',
  state: 'running',
  createdAt: '2026-01-01T00:00:00Z',
  startedAt: '2026-01-01T00:00:00Z',
  elapsedMs: 1000,
  model: 'scripted/x',
  sharesKernel: false,
  toolCalls: 0,
  ...over
});

describe('workers in the pane', () => {
  it('the guard accepts a worker-updated event with a worker summary only', () => {
    expect(isChatEvent({ type: 'worker-updated', worker: worker('w-1') })).toBe(true);
    expect(isChatEvent({ type: 'worker-updated', worker: { id: 'w-1' } })).toBe(false);
    expect(isChatEvent({ type: 'worker-updated' })).toBe(false);
  });

  it("a reset loads a chat's list; updates add or replace rows of that chat only", () => {
    const model = new WorkersModel();
    let changes = 0;
    model.changed.connect(() => changes++);
    model.reset('c1', [worker('w-1')]);
    model.update('c1', worker('w-2'));
    model.update('c1', worker('w-1', { state: 'killed' }));
    model.update('c2', worker('w-3', { chatId: 'c2' })); // another chat's worker: not this list
    expect(model.workers.map((w) => [w.id, w.state])).toEqual([
      ['w-1', 'killed'],
      ['w-2', 'running']
    ]);
    expect(changes).toBe(3);
    model.reset(null);
    expect(model.workers).toEqual([]);
    model.update('c1', worker('w-4'));
    expect(model.workers).toEqual([]);
  });

  it("elapsed time reads like the tool cards' clock", () => {
    expect(formatElapsed(999)).toBe('0:00');
    expect(formatElapsed(59_999)).toBe('0:59');
    expect(formatElapsed(184_000)).toBe('3:04');
  });
});
