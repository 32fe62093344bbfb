import type { OrchestrationRun } from '@cellmate/protocol';
import { Emitter, type Event } from 'vscode-jsonrpc/node.js';
import { z } from 'zod';
import { newOrchestrationId } from '../../base/ids.js';
import type { OrchestrationPort, OrchestrationProposal, StoredOrchestration } from './orchestration-port.js';
import { ChatFiles } from '../chat-files.js';

/** A resolution that cannot happen (unknown orchestration, not pending): the pane shows the message. */
export class OrchestrationNotPendingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OrchestrationNotPendingError';
  }
}

const step = z.enum(['queued', 'running', 'done', 'stopped', 'skipped']);

const orchestrationsSchema = z.array(
  z.object({
    id: z.string(),
    chatId: z.string(),
    roles: z.array(z.object({ name: z.string(), tier: z.enum(['fast', 'good']), brief: z.string() })),
    tasks: z.array(
      z.object({
        key: z.string(),
        title: z.string(),
        description: z.string(),
        role: z.string(),
        depends_on: z.array(z.string())
      })
    ),
    synthesis: z.string(),
    budget: z.object({ max_workers: z.number(), max_minutes: z.number(), max_tool_calls: z.number().optional() }),
    approval: z.enum(['pending', 'approved', 'rejected', 'superseded']),
    reason: z.string().optional(),
    proposedAt: z.string(),
    resolvedAt: z.string().optional(),
    run: z
      .object({
        state: z.enum(['running', 'done', 'stopped']),
        tasks: z.record(z.string(), step),
        synthesis: step,
        note: z.string().optional()
      })
      .optional()
  })
);

/** How many proposals a chat keeps on disk (the latest ones). */
const KEEP = 20;

/** What a run left `running` by a companion that ended reads as after the restart. */
export const RESTART_NOTE = 'The companion restarted while this ran; send a message to continue by hand.';

/**
 * The durable orchestrations of every chat (SPEC MODE-5): `.cellmate/orchestrations/
 * <chatId>.json`, written whole by temp file + rename before a call returns, so a pending
 * approval survives a companion restart or kill. `pending → approved | rejected` only
 * through {@link decide}, which only the operator's pane action reaches
 * (`orchestration/resolve`); a newer proposal supersedes a pending one. `onDidChange` fires
 * after every change (the flow updates the chat's cards). `now` is the clock of the
 * timestamps (the cooldown reads `proposedAt`), injectable for tests.
 */
export class OrchestrationStore implements OrchestrationPort {
  private readonly files: ChatFiles<StoredOrchestration[]>;
  private readonly changeEmitter = new Emitter<StoredOrchestration>();

  /** A proposal was made, answered, or its run moved on. */
  readonly onDidChange: Event<StoredOrchestration> = this.changeEmitter.event;

  constructor(
    directory: string,
    private readonly options: { onProblem?: (message: string) => void; now?: () => number } = {}
  ) {
    this.files = new ChatFiles<StoredOrchestration[]>({
      directory,
      key: 'orchestrations',
      schema: orchestrationsSchema,
      noun: 'orchestration',
      ...(options.onProblem ? { onProblem: options.onProblem } : {}),
      empty: () => [],
      accept: (chatId, stored) => {
        const all = (stored as StoredOrchestration[]).filter((o) => o.chatId === chatId);
        // A run the previous companion was in the middle of does not resume by itself.
        for (const o of all) {
          if (o.run?.state !== 'running') continue;
          const stop = (s: string) =>
            (s === 'running' ? 'stopped' : s === 'queued' ? 'skipped' : s) as OrchestrationRun['synthesis'];
          o.run = {
            state: 'stopped',
            tasks: Object.fromEntries(Object.entries(o.run.tasks).map(([k, s]) => [k, stop(s)])),
            synthesis: stop(o.run.synthesis),
            note: RESTART_NOTE
          };
        }
        return all;
      }
    });
  }

  propose(chatId: string, proposal: OrchestrationProposal): StoredOrchestration {
    const all = this.of(chatId);
    const now = this.timestamp();
    const lapsed = all.filter((o) => o.approval === 'pending');
    for (const o of lapsed) Object.assign(o, { approval: 'superseded', resolvedAt: now });
    const stored: StoredOrchestration = {
      id: newOrchestrationId(),
      chatId,
      ...structuredClone(proposal),
      approval: 'pending',
      proposedAt: now
    };
    all.push(stored);
    if (all.length > KEEP) all.splice(0, all.length - KEEP);
    this.save(chatId, all);
    for (const o of lapsed) this.changeEmitter.fire(structuredClone(o));
    this.changeEmitter.fire(structuredClone(stored));
    return structuredClone(stored);
  }

  latest(chatId: string): StoredOrchestration | undefined {
    const o = this.of(chatId).at(-1);
    return o && structuredClone(o);
  }

  get(chatId: string, id: string): StoredOrchestration | undefined {
    const o = this.of(chatId).find((x) => x.id === id);
    return o && structuredClone(o);
  }

  /**
   * The operator's answer to a pending proposal.
   * @throws OrchestrationNotPendingError when it is unknown or not pending (answered already, superseded)
   */
  decide(chatId: string, id: string, decision: 'approve' | 'reject', reason?: string): StoredOrchestration {
    const all = this.of(chatId);
    const o = all.find((x) => x.id === id);
    if (!o)
      throw new OrchestrationNotPendingError(
        `Chat "${chatId}" has no orchestration "${id}" (it may have been deleted).`
      );
    if (o.approval !== 'pending')
      throw new OrchestrationNotPendingError(
        `Orchestration ${id} is ${o.approval}, not pending: there is nothing to answer.`
      );
    o.approval = decision === 'approve' ? 'approved' : 'rejected';
    o.resolvedAt = this.timestamp();
    const why = reason?.trim();
    if (why) o.reason = why;
    if (decision === 'approve') {
      o.run = {
        state: 'running',
        tasks: Object.fromEntries(o.tasks.map((t) => [t.key, 'queued'])),
        synthesis: 'queued'
      };
    }
    this.save(chatId, all);
    this.changeEmitter.fire(structuredClone(o));
    return structuredClone(o);
  }

  /** Records how an approved orchestration's run stands (the flow, after every step). */
  setRun(chatId: string, id: string, run: OrchestrationRun): StoredOrchestration | undefined {
    const all = this.of(chatId);
    const o = all.find((x) => x.id === id);
    if (!o || o.approval !== 'approved') return undefined;
    o.run = structuredClone(run);
    this.save(chatId, all);
    this.changeEmitter.fire(structuredClone(o));
    return structuredClone(o);
  }

  /** Forgets a deleted chat's orchestrations (file included). */
  removeChat(chatId: string): void {
    this.files.remove(chatId);
  }

  dispose(): void {
    this.changeEmitter.dispose();
  }

  private timestamp(): string {
    return new Date(this.options.now ? this.options.now() : Date.now()).toISOString();
  }

  private of(chatId: string): StoredOrchestration[] {
    return this.files.get(chatId);
  }

  private save(chatId: string, all: StoredOrchestration[]): void {
    this.files.save(chatId, all);
  }
}
