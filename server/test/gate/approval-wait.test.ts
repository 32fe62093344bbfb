/**
 * The person's approval wait is not the tool's run time (HARN-7): the
 * registry times the wait apart, the card hears when the wait starts and ends (its timer
 * pauses, then shows "waited … for you"), the audit entry keeps both, and Tool Metrics'
 * mean run time leaves the wait out. The real registry, policy, question broker and write
 * tool; the person answers "Approve once" after a pause.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ChatEvent, QuestionItem, ToolCallItem } from '@cellmate/protocol';
import { describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import type { AuditEntry } from '../../src/ports/gate-ports.js';
import { computeMetrics } from '../../src/audit/metrics.js';
import { PolicyStore } from '../../src/policy/policy-store.js';
import { Presence } from '../../src/questions/presence.js';
import { QuestionBroker } from '../../src/questions/question-broker.js';
import { builtinTools } from '../../src/tools/index.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { createHarness, scriptSettings } from '../helpers/chat-harness.js';
import { tempDir } from '../helpers/temp.js';

const PAUSE_MS = 1_500;

/** A person who answers each approval card "Approve once" after PAUSE_MS. */
function slowPerson(): QuestionBroker {
  const presence = new Presence();
  presence.attach();
  // eslint-disable-next-line prefer-const
  let broker: QuestionBroker;
  broker = new QuestionBroker({
    presence,
    sink: {
      publish: (chatId, event: ChatEvent) => {
        if (event.type === 'item-added' && event.item.kind === 'question') {
          const item = event.item as QuestionItem;
          setTimeout(() => broker.answer(chatId, item.questionId, { action: 'answer', selected: [0] }), PAUSE_MS);
        }
      }
    }
  });
  return broker;
}

describe('approval wait shown apart from run time', () => {
  it('HARN-7: a call that waited for "Approve once" reports its run time without the wait, the wait apart, on the card, the audit entry and the metrics', async () => {
    const ws = await tempDir();
    const broker = slowPerson();
    const audit = new AuditLog(ws);
    const policy = new PolicyStore({ workspace: ws, env: { HOME: path.join(ws, 'home') } });
    const registry = new ToolRegistry(builtinTools({ questions: broker }), { policy, approvals: broker, audit });
    const h = await createHarness(ws, { registry });
    const model = await scriptSettings(ws, {
      steps: [
        { toolCalls: [{ toolName: 'write', input: { path: 'out.txt', content: 'hello\n' } }], chunkDelayMs: 0 },
        { text: 'done', chunkDelayMs: 0 }
      ]
    });
    const chat = h.service.create();
    await h.sendAndWait(chat.id, 'write it', model);
    expect(await readFile(path.join(ws, 'out.txt'), 'utf8')).toBe('hello\n');

    // The card: running and waiting while the approval card waits, then the wait so far, then the result.
    const updates = h.events.flatMap((e) =>
      e.event.type === 'item-updated' && e.event.item.kind === 'tool' ? [e.event.item as ToolCallItem] : []
    );
    const waiting = updates.findIndex((u) => u.waiting === true && u.status === 'running');
    const answered = updates.findIndex(
      (u, i) => i > waiting && u.status === 'running' && !u.waiting && typeof u.waitMs === 'number'
    );
    expect(waiting).toBeGreaterThanOrEqual(0);
    expect(answered).toBeGreaterThan(waiting);
    const card = h.service.get(chat.id).items.find((i): i is ToolCallItem => i.kind === 'tool')!;
    expect(card.status).toBe('ok');
    expect(card.waiting).toBeUndefined();
    expect(card.waitMs).toBeGreaterThanOrEqual(PAUSE_MS - 50);
    // Writing a small file takes a fraction of the person's pause: the run time is not the wait.
    expect(card.durationMs).toBeLessThan(card.waitMs!);

    await audit.flush();
    const entries = (await readFile(path.join(ws, '.cellmate', 'audit', `${chat.id}.jsonl`), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as AuditEntry);
    const entry = entries.find((e) => e.tool === 'write')!;
    expect(entry).toMatchObject({
      decision: 'approved-once',
      status: 'ok',
      durationMs: card.durationMs,
      waitMs: card.waitMs
    });

    const [row] = computeMetrics([entry, { tool: 'write', status: 'ok' as const, durationMs: 10 }]);
    expect(row).toMatchObject({
      tool: 'write',
      calls: 2,
      waitedCalls: 1,
      meanWaitMs: card.waitMs,
      meanDurationMs: Math.round((card.durationMs! + 10) / 2)
    });
    await h.dispose();
  }, 30_000);
});
