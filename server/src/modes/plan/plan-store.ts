import type { PlanApprovalState, PlanNode } from '@cellmate/protocol';
import { Emitter, type Event } from 'vscode-jsonrpc/node.js';
import { z } from 'zod';
import { newPlanId } from '../../base/ids.js';
import type { PlanPort, StoredPlan } from './plan-port.js';
import { ChatFiles } from '../chat-files.js';

/** A plan resolution that cannot happen (unknown plan, not pending): the pane shows the message. */
export class PlanNotPendingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PlanNotPendingError';
  }
}

const plansSchema = z.array(
  z.object({
    id: z.string(),
    chatId: z.string(),
    goal: z.string(),
    nodes: z.array(
      z.object({ key: z.string(), title: z.string(), description: z.string(), depends_on: z.array(z.string()) })
    ),
    approval: z.enum(['none', 'pending', 'approved', 'rejected', 'superseded']),
    reason: z.string().optional(),
    submittedAt: z.string(),
    resolvedAt: z.string().optional()
  })
);

/** How many plans a chat keeps on disk (the latest ones; older ones are history nobody resolves). */
const KEEP_PLANS = 20;

/**
 * The durable plans of every chat (SPEC MODE-3): `.cellmate/plans/<chatId>.json`
 * (`chat-files.ts`: written whole before a call returns), so a pending approval survives a
 * companion restart or kill. `onDidChange` fires after every change (the plan flow updates
 * the chat's plan cards).
 */
export class PlanStore implements PlanPort {
  private readonly files: ChatFiles<StoredPlan[]>;
  private readonly changeEmitter = new Emitter<StoredPlan>();

  /** A plan was submitted or its approval changed. */
  readonly onDidChange: Event<StoredPlan> = this.changeEmitter.event;

  constructor(directory: string, onProblem: (message: string) => void = () => {}) {
    this.files = new ChatFiles<StoredPlan[]>({
      directory,
      key: 'plans',
      schema: plansSchema,
      noun: 'plan',
      onProblem,
      empty: () => [],
      accept: (chatId, stored) => (stored as StoredPlan[]).filter((p) => p.chatId === chatId)
    });
  }

  submit(chatId: string, goal: string, nodes: PlanNode[]): StoredPlan {
    const plans = this.plansOf(chatId);
    const now = new Date().toISOString();
    const lapsed = plans.filter((p) => p.approval === 'none' || p.approval === 'pending');
    for (const p of lapsed) Object.assign(p, { approval: 'superseded' satisfies PlanApprovalState, resolvedAt: now });
    const plan: StoredPlan = {
      id: newPlanId(),
      chatId,
      goal,
      nodes: structuredClone(nodes),
      approval: 'none',
      submittedAt: now
    };
    plans.push(plan);
    if (plans.length > KEEP_PLANS) plans.splice(0, plans.length - KEEP_PLANS);
    this.save(chatId, plans);
    for (const p of lapsed) this.changeEmitter.fire(structuredClone(p));
    this.changeEmitter.fire(structuredClone(plan));
    return structuredClone(plan);
  }

  latest(chatId: string): StoredPlan | undefined {
    const plan = this.plansOf(chatId).at(-1);
    return plan && structuredClone(plan);
  }

  /** A plan by id. */
  get(chatId: string, planId: string): StoredPlan | undefined {
    const plan = this.plansOf(chatId).find((p) => p.id === planId);
    return plan && structuredClone(plan);
  }

  requestApproval(chatId: string, planId: string): StoredPlan {
    const plans = this.plansOf(chatId);
    const plan = plans.find((p) => p.id === planId);
    if (!plan) throw new PlanNotPendingError(`Chat "${chatId}" has no plan "${planId}".`);
    if (plan.approval === 'none') {
      plan.approval = 'pending';
      this.save(chatId, plans);
      this.changeEmitter.fire(structuredClone(plan));
    }
    return structuredClone(plan);
  }

  /**
   * The person's answer to a pending approval.
   * @throws PlanNotPendingError when the plan is unknown or not pending (answered already, superseded)
   */
  decide(chatId: string, planId: string, decision: 'approve' | 'reject', reason?: string): StoredPlan {
    const plans = this.plansOf(chatId);
    const plan = plans.find((p) => p.id === planId);
    if (!plan) throw new PlanNotPendingError(`Chat "${chatId}" has no plan "${planId}" (it may have been deleted).`);
    if (plan.approval !== 'pending') {
      throw new PlanNotPendingError(
        `Plan ${planId} is ${plan.approval}, not pending: ${plan.approval === 'none' ? 'the agent has not asked for approval yet' : 'there is nothing to answer'}.`
      );
    }
    plan.approval = decision === 'approve' ? 'approved' : 'rejected';
    plan.resolvedAt = new Date().toISOString();
    const why = reason?.trim();
    if (why) plan.reason = why;
    this.save(chatId, plans);
    this.changeEmitter.fire(structuredClone(plan));
    return structuredClone(plan);
  }

  /** Forgets a deleted chat's plans (file included). */
  removeChat(chatId: string): void {
    this.files.remove(chatId);
  }

  dispose(): void {
    this.changeEmitter.dispose();
  }

  private plansOf(chatId: string): StoredPlan[] {
    return this.files.get(chatId);
  }

  private save(chatId: string, plans: StoredPlan[]): void {
    this.files.save(chatId, plans);
  }
}
