/**
 * The person's approval wait is not the tool's run time (HARN-7): the
 * registry times the wait apart, the card hears when the wait starts and ends (its timer
 * pauses, then shows "waited … for you"), the audit entry keeps both, and Tool Metrics'
 * mean run time leaves the wait out. The real registry, policy, question broker and write
 * tool; the person answers "Approve once" after a pause.
 *
 * A wait that ends without an answer is audited as what it was: a turn stopped while the
 * card (or the Auto review before it) waited is `asked` + `aborted` — not `unchecked`, not
 * `denied` — while a person's "Deny" stays `denied-by-person` + `denied`.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ChatEvent, ModelSettings, QuestionItem, ToolCallItem } from '@cellmate/protocol';
import { describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/audit-log.js';
import type { AuditEntry, AutoApprovalPort } from '../../src/ports/gate-ports.js';
import { computeMetrics } from '../../src/audit/metrics.js';
import { PolicyStore } from '../../src/policy/policy-store.js';
import { Presence } from '../../src/questions/presence.js';
import { QuestionBroker } from '../../src/questions/question-broker.js';
import { builtinTools } from '../../src/tools/index.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { createHarness, scriptSettings, type Harness } from '../helpers/chat-harness.js';
import { tempDir } from '../helpers/temp.js';
import { answeringPerson } from '../helpers/answering-person.js';

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
    const { ws, h, audit, chatId, model } = await writingChat(slowPerson());
    await h.sendAndWait(chatId, 'write it', model);
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
    const card = h.service.get(chatId).items.find((i): i is ToolCallItem => i.kind === 'tool')!;
    expect(card.status).toBe('ok');
    expect(card.waiting).toBeUndefined();
    expect(card.waitMs).toBeGreaterThanOrEqual(PAUSE_MS - 50);
    // Writing a small file takes a fraction of the person's pause: the run time is not the wait.
    expect(card.durationMs).toBeLessThan(card.waitMs!);

    await audit.flush();
    const entries = await auditLines(ws, chatId);
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

/** The audit lines of one chat, as written. */
async function auditLines(ws: string, chatId: string): Promise<AuditEntry[]> {
  return (await readFile(path.join(ws, '.cellmate', 'audit', `${chatId}.jsonl`), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as AuditEntry);
}

/** A chat whose model writes one file, on the real registry, policy and question broker. */
async function writingChat(broker: QuestionBroker): Promise<{
  ws: string;
  h: Harness;
  audit: AuditLog;
  chatId: string;
  model: ModelSettings;
}> {
  const ws = await tempDir();
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
  return { ws, h, audit, chatId: h.service.create().id, model };
}

describe('a wait that ends without an answer is audited as what it was', () => {
  it('HARN-7, HARN-9: Stop while a write waits on its approval card: the audit line says asked + aborted, metrics count no denial', async () => {
    // A person who is there but does not answer; the test presses Stop once the card shows.
    const presence = new Presence();
    presence.attach();
    let shown!: () => void;
    const cardShown = new Promise<void>((resolve) => (shown = resolve));
    const broker = new QuestionBroker({
      presence,
      sink: {
        publish: (_chatId, event) => {
          if (event.type === 'item-added' && event.item.kind === 'question' && event.item.type === 'approval') shown();
        }
      }
    });
    const { ws, h, audit, chatId, model } = await writingChat(broker);
    await h.service.send({ chatId, text: 'write it', settings: model });
    await cardShown;
    expect(await h.service.abort(chatId)).toBe(true);

    await expect(readFile(path.join(ws, 'out.txt'), 'utf8')).rejects.toThrow(/ENOENT/);
    await audit.flush();
    const entry = (await auditLines(ws, chatId)).find((e) => e.tool === 'write')!;
    expect(entry).toMatchObject({ decision: 'asked', status: 'aborted' });
    // The wait is kept apart, as for an answered card (its length is whatever the Stop took).
    expect(typeof entry.waitMs).toBe('number');
    const [row] = computeMetrics([entry]);
    expect(row).toMatchObject({ tool: 'write', calls: 1, ok: 0, denied: 0 });
    await h.dispose();
  }, 30_000);

  it('HARN-7, HARN-6: the person answers "Deny": the audit line still says denied-by-person + denied', async () => {
    const { broker } = answeringPerson('deny');
    const { ws, h, audit, chatId, model } = await writingChat(broker);
    await h.sendAndWait(chatId, 'write it', model);

    await expect(readFile(path.join(ws, 'out.txt'), 'utf8')).rejects.toThrow(/ENOENT/);
    await audit.flush();
    const entry = (await auditLines(ws, chatId)).find((e) => e.tool === 'write')!;
    expect(entry).toMatchObject({ decision: 'denied-by-person', status: 'denied' });
    expect(computeMetrics([entry])[0]).toMatchObject({ calls: 1, denied: 1 });
    await h.dispose();
  }, 30_000);

  it('HARN-7, SIDE-3: Stop while the Auto reviewer is still checking: no card is shown, and the line says asked + aborted, not "nobody there"', async () => {
    const ws = await tempDir();
    const { broker, cards } = answeringPerson('once');
    const audit = new AuditLog(ws);
    const policy = new PolicyStore({ workspace: ws, env: { HOME: path.join(ws, 'home') } });
    const registry = new ToolRegistry(builtinTools({ questions: broker }), {
      policy,
      approvals: broker,
      audit,
      autoReview: { isWorkspaceTrusted: () => true }
    });
    const stop = new AbortController();
    // The reviewer model is still thinking when the person presses Stop; it gives up when told to.
    const reviewer: AutoApprovalPort = {
      enabled: () => true,
      classify: (_record, signal) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
          stop.abort();
        })
    };
    const result = await registry.call(
      'write',
      { path: 'out.txt', content: 'x' },
      { workspace: ws, signal: stop.signal, actor: 'model', chatId: 'chat1', turnId: 'turn1', autoApproval: reviewer }
    );
    expect(result).toMatchObject({ ok: false, status: 'aborted' });
    expect(cards).toHaveLength(0);
    await audit.flush();
    const [entry] = await auditLines(ws, 'chat1');
    expect(entry).toMatchObject({ tool: 'write', decision: 'asked', status: 'aborted' });
  });
});
