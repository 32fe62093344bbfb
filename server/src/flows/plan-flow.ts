import type { ModelSettings, PlanApprovalState } from '@cellmate/protocol';
import type { ChatService } from '../chats/chat-service.js';
import { updateToolCards } from '../ports/tool-cards.js';
import type { Logger } from '../config/logger.js';
import { newItemId } from '../base/ids.js';
import type { StoredPlan } from '../modes/plan/plan-port.js';
import { planDisplay } from '../tools/submit_plan/submit_plan.js';
import type { PlanStore } from '../modes/plan/plan-store.js';
import { sendWhenIdle } from './turn-queue.js';
import { agentTurnStep, runSteps } from './step-runner.js';

/** The user message of one approved step (what the Agent turn is asked to do). */
export function stepMessage(plan: StoredPlan, index: number): string {
  const node = plan.nodes[index]!;
  const after = node.depends_on.length
    ? ` It comes after ${node.depends_on.map((k) => `[${k}]`).join(', ')} (done).`
    : '';
  return `Plan step ${index + 1}/${plan.nodes.length} [${node.key}]: ${node.title}\n\n${node.description}\n\n(Step of the approved plan "${plan.goal}".${after} Do this step only; the next one follows as its own turn.)`;
}

/**
 * What happens when the person answers a plan's approval (SPEC MODE-3): the durable state
 * changes (`PlanStore`), every card of the plan in the chat shows it, and — on approval —
 * the chat returns to Agent and the nodes run as Agent turns in dependency order, one after
 * the other; on rejection a Plan turn asks the agent to revise. Nothing here approves by
 * itself: only {@link answer} (the `plan/resolve` request from the pane) does.
 */
export class PlanFlow {
  private readonly subscription: { dispose(): void };
  private readonly running = new Map<string, Promise<void>>();
  /** Aborted on dispose: no further approved node or revision turn starts. */
  private readonly stopping = new AbortController();

  constructor(private readonly options: { plans: PlanStore; chats: ChatService; logger: Logger }) {
    this.subscription = options.plans.onDidChange((plan) => this.updateCards(plan));
  }

  /**
   * The person approves or rejects a pending plan. Returns at once; the work (or the
   * revision turn) starts in the background once the chat's current turn has ended.
   * @throws CellmateError ChatNotFound; PlanNotPendingError when the plan is not pending
   */
  answer(
    chatId: string,
    planId: string,
    decision: 'approve' | 'reject',
    model: ModelSettings,
    reason?: string,
    origin?: string
  ): { state: PlanApprovalState; message: string } {
    this.options.chats.get(chatId, 1); // ChatNotFound first
    const plan = this.options.plans.decide(chatId, planId, decision, reason);
    if (decision === 'approve') {
      this.options.chats.setMode(chatId, 'agent');
      this.track(chatId, this.runWork(plan, model, origin));
      return {
        state: plan.approval,
        message: `Approved: the chat is in Agent mode; ${plan.nodes.length} step${plan.nodes.length === 1 ? '' : 's'} run in order.`
      };
    }
    const text = `I rejected the plan${plan.reason ? ` (my reason: ${plan.reason})` : ''}. Please revise it and submit it again with submit_plan, then exit_plan_mode.`;
    this.track(
      chatId,
      this.sendWhenIdle(chatId, text, model, origin).then(() => undefined)
    );
    return { state: plan.approval, message: 'Rejected: the agent is asked to revise the plan.' };
  }

  /** Resolves when the chat's background plan work (if any) has finished (tests, shutdown). */
  async settled(chatId: string): Promise<void> {
    await this.running.get(chatId);
  }

  dispose(): void {
    this.stopping.abort();
    this.subscription.dispose();
  }

  private track(chatId: string, work: Promise<void>): void {
    const done = work
      .catch((error: unknown) => {
        // e.g. the model settings are unusable: the person must see why nothing runs.
        const message = error instanceof Error ? error.message : String(error);
        this.options.logger.warn(`plan work in chat ${chatId} stopped: ${message}`);
        this.notice(chatId, `The plan's next turn could not start: ${message}`);
      })
      .finally(() => {
        if (this.running.get(chatId) === done) this.running.delete(chatId);
      });
    this.running.set(chatId, done);
  }

  /**
   * The approved nodes, one Agent turn each, in order; stops when a turn does not end normally
   * or the mode changes. Disposing the flow starts no further node but leaves a running turn to
   * the chat service (which ends it as interrupted on shutdown).
   */
  private async runWork(plan: StoredPlan, model: ModelSettings, origin?: string): Promise<void> {
    const context = { model, ...(origin !== undefined ? { origin } : {}), signal: this.stopping.signal };
    const { failed } = await runSteps({
      steps: plan.nodes,
      signal: this.stopping.signal,
      run: (node, results) =>
        agentTurnStep(
          this.options.chats,
          plan.chatId,
          stepMessage(plan, plan.nodes.indexOf(node)),
          { ...context, results },
          false
        )
    });
    if (!failed) return;
    if ('error' in failed.outcome) throw failed.outcome.error; // the turn could not start: track() tells the person why
    const at = `${failed.index + 1}/${plan.nodes.length}`;
    this.notice(
      plan.chatId,
      failed.outcome.skipped
        ? `Plan "${plan.goal}" paused before step ${at}: the chat left Agent mode.`
        : `Plan "${plan.goal}" stopped after step ${at} [${failed.step.key}]: ${failed.outcome.reason}. Send a message to continue by hand.`
    );
  }

  /** {@link sendWhenIdle} of this flow: skipped once the flow is disposed. */
  private sendWhenIdle(chatId: string, text: string, model: ModelSettings, origin?: string): Promise<string> {
    return sendWhenIdle(this.options.chats, chatId, text, model, origin, () => !this.stopping.signal.aborted);
  }

  private notice(chatId: string, text: string): void {
    try {
      const turnId = this.options.chats.get(chatId, 1).items.at(-1)?.turnId ?? 'plan';
      this.options.chats.publish(chatId, {
        type: 'item-added',
        item: { kind: 'notice', id: newItemId(), time: new Date().toISOString(), turnId, level: 'info', text }
      });
    } catch {
      // the chat is gone
    }
  }

  /** Every card of the plan in its chat shows the plan's current approval. */
  private updateCards(plan: StoredPlan): void {
    const display = planDisplay(plan);
    updateToolCards(this.options.chats, plan.chatId, {
      match: (item) => item.display?.kind === 'plan' && item.display.planId === plan.id,
      render: () => display
    });
  }
}
