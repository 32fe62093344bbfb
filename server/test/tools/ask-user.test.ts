import type { ChatEvent, QuestionItem } from '@cellmate/protocol';
import { describe, expect, it } from 'vitest';
import { Presence } from '../../src/questions/presence.js';
import { QuestionBroker } from '../../src/questions/question-broker.js';
import { ASSUMPTION_GUIDANCE } from '../../src/tools/ask_user/ask_user.js';
import { builtinTools } from '../../src/tools/index.js';
import { ToolRegistry } from '../../src/gate/registry.js';

function setup(
  opts: { person?: boolean; timeoutMs?: number; respond?: (item: QuestionItem, b: QuestionBroker) => void } = {}
) {
  const presence = new Presence();
  if (opts.person ?? true) presence.attach();
  const events: ChatEvent[] = [];
  const broker: QuestionBroker = new QuestionBroker({
    presence,
    questionTimeoutMs: opts.timeoutMs,
    sink: {
      publish: (_c, e) => {
        events.push(e);
        if (e.type === 'item-added' && e.item.kind === 'question' && opts.respond)
          queueMicrotask(() => opts.respond!(e.item as QuestionItem, broker));
      }
    }
  });
  const registry = new ToolRegistry(builtinTools({ questions: broker }));
  const ctx = {
    workspace: '/',
    signal: new AbortController().signal,
    actor: 'model' as const,
    chatId: 'c',
    turnId: 't'
  };
  return { registry, ctx, events, broker };
}

const args = {
  question: 'Which file?',
  options: [{ label: 'a.csv' }, { label: 'b.csv', description: 'cleaned' }],
  multi_select: true
};

describe('ask_user (ASK-1…3)', () => {
  it('is registered only with a question port (TIER-3)', () => {
    expect(builtinTools().map((t) => t.name)).not.toContain('ask_user');
  });

  it('renders a numbered card and blocks until answered (multi-select + free text)', async () => {
    const s = setup({
      respond: (item, b) => b.answer('c', item.questionId, { action: 'answer', selected: [1, 0], text: 'both, please' })
    });
    const result = await s.registry.call('ask_user', args, s.ctx);
    expect(result).toMatchObject({
      ok: true,
      output: 'The user chose: 1. a.csv; 2. b.csv\nThe user wrote: "both, please"'
    });
    const added = s.events[0] as { item: QuestionItem };
    expect(added.item).toMatchObject({
      kind: 'question',
      type: 'ask',
      state: 'pending',
      multiSelect: true,
      allowFreeText: true,
      turnId: 't'
    });
    expect((s.events[1] as { item: QuestionItem }).item.state).toBe('answered');
  });

  it('skip is success with the stated-assumption guidance', async () => {
    const s = setup({ respond: (item, b) => b.answer('c', item.questionId, { action: 'skip' }) });
    expect(await s.registry.call('ask_user', args, s.ctx)).toMatchObject({
      ok: true,
      output: `The user skipped this question. ${ASSUMPTION_GUIDANCE}`
    });
  });

  it('expiry is an error with the same guidance', async () => {
    const s = setup({ timeoutMs: 20 });
    expect(await s.registry.call('ask_user', args, s.ctx)).toMatchObject({
      ok: false,
      output: `The question expired without an answer. ${ASSUMPTION_GUIDANCE}`
    });
    expect((s.events[1] as { item: QuestionItem }).item.state).toBe('expired');
  });

  it('with nobody connected it fails at once and shows nothing (fail-closed)', async () => {
    const s = setup({ person: false });
    const result = await s.registry.call('ask_user', args, s.ctx);
    expect(result.output).toBe(
      `Nobody is connected to answer (the Cellmate pane is closed), so the question was not asked. ${ASSUMPTION_GUIDANCE}`
    );
    expect(s.events).toEqual([]);
  });

  it('stopping the turn cancels the card', async () => {
    const s = setup();
    const controller = new AbortController();
    const pending = s.registry.call('ask_user', args, { ...s.ctx, signal: controller.signal });
    await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    expect(await pending).toMatchObject({ ok: false, status: 'aborted' });
    expect((s.events.at(-1) as { item: QuestionItem }).item.state).toBe('cancelled');
  });

  it('answers are checked: out-of-range, several on single-select, unknown ids', async () => {
    const s = setup();
    void s.registry.call('ask_user', { question: 'One?', options: [{ label: 'x' }], allow_free_text: false }, s.ctx);
    await new Promise((r) => setTimeout(r, 10));
    const id = (s.events[0] as { item: QuestionItem }).item.questionId;
    expect(() => s.broker.answer('c', id, { action: 'answer', selected: [3] })).toThrow(RangeError);
    expect(() => s.broker.answer('c', 'nope', { action: 'skip' })).toThrow(/not pending/);
    expect(s.broker.answer('c', id, { action: 'answer', selected: [0] })).toBe('answered');
    expect(() => s.broker.answer('c', id, { action: 'skip' })).toThrow(/not pending/);
  });
});
