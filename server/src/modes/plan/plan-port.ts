import type { PlanApprovalState, PlanNode } from '@cellmate/protocol';

/** A submitted plan as the plan port keeps it (durably: it survives a companion restart). */
export interface StoredPlan {
  id: string;
  chatId: string;
  goal: string;
  /** In dependency order (`orderPlan`). */
  nodes: PlanNode[];
  approval: PlanApprovalState;
  /** The person's reason on a rejection. */
  reason?: string;
  submittedAt: string;
  resolvedAt?: string;
}

/**
 * What `submit_plan` and `exit_plan_mode` need of the plan store (`server/src/modes/
 * plan-store.ts` implements it; tests may pass their own). Every method persists before it
 * returns.
 */
export interface PlanPort {
  /** Records a new plan for the chat; an earlier plan still `none`/`pending` becomes `superseded`. */
  submit(chatId: string, goal: string, nodes: PlanNode[]): StoredPlan;
  /** The chat's latest plan, if any. */
  latest(chatId: string): StoredPlan | undefined;
  /** Opens the plan's approval: `none` becomes `pending`; any other state is returned unchanged. */
  requestApproval(chatId: string, planId: string): StoredPlan;
}
