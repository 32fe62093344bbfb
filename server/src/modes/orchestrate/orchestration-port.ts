import type {
  OrchestrationApprovalState,
  OrchestrationBudget,
  OrchestrationRole,
  OrchestrationRun,
  OrchestrationTask
} from '@cellmate/protocol';

/** What a proposal carries (validated: `propose_orchestration`'s parameters, tasks in dependency order). */
export interface OrchestrationProposal {
  roles: OrchestrationRole[];
  /** In dependency order (`orderPlan`). */
  tasks: OrchestrationTask[];
  synthesis: string;
  budget: OrchestrationBudget;
}

/** A proposed orchestration as the store keeps it (durably: it survives a companion restart). */
export interface StoredOrchestration extends OrchestrationProposal {
  id: string;
  chatId: string;
  approval: OrchestrationApprovalState;
  /** The operator's reason on a rejection. */
  reason?: string;
  /** ISO-8601. */
  proposedAt: string;
  resolvedAt?: string;
  /** Set once approved: how its tasks are doing. */
  run?: OrchestrationRun;
}

/**
 * What `propose_orchestration` needs of the orchestration store (`server/src/modes/
 * orchestration-store.ts` implements it; tests may pass their own). There is deliberately
 * no approving method here: a tool cannot approve (MODE-5); only the operator's pane action
 * reaches the store's `resolve`, through `orchestration/resolve`.
 */
export interface OrchestrationPort {
  /** Records a proposal, `pending` at once; an earlier proposal still pending becomes `superseded`. */
  propose(chatId: string, proposal: OrchestrationProposal): StoredOrchestration;
  /** The chat's latest proposal, if any. */
  latest(chatId: string): StoredOrchestration | undefined;
}
