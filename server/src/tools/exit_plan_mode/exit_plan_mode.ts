import { z } from 'zod';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool, type ToolDefinition } from '../../gate/define-tool.js';
import { ToolInputError } from '../../base/tool-errors.js';
import type { PlanPort } from '../../modes/plan/plan-port.js';
import { planDisplay } from '../submit_plan/submit_plan.js';

export const exitPlanModeParameters = z.strictObject({});

/**
 * `exit_plan_mode` (SPEC MODE-3): a hard approval gate that never blocks. The first call
 * opens a durable approval of the chat's latest plan and returns `pending`; later calls
 * report where it stands. Only the person resolves it (Approve / Reject on the card, the
 * `plan/resolve` request): approval switches the chat to Agent and starts the work.
 */
export function createExitPlanModeTool(plans: PlanPort): ToolDefinition<typeof exitPlanModeParameters> {
  return defineTool({
    name: 'exit_plan_mode',
    tier: 'read',
    description: TOOL_DESCRIPTIONS.exit_plan_mode,
    parameters: exitPlanModeParameters,
    examples: [{ args: {}, comment: 'after submit_plan: ask the user to approve the plan' }],
    actionClasses: ['ask-user'],
    parallelSafe: false,
    async execute(_args, ctx) {
      const latest = plans.latest(ctx.chatId);
      if (!latest || latest.approval === 'superseded')
        throw new ToolInputError('No plan to approve: call submit_plan with the plan first, then exit_plan_mode.');
      const before = latest.approval;
      const plan = plans.requestApproval(ctx.chatId, latest.id);
      const goal = JSON.stringify(plan.goal);
      const output = (() => {
        switch (plan.approval) {
          case 'pending':
            return before === 'pending'
              ? `Still pending: the user has not answered the approval of plan ${plan.id} (${goal}) yet. Do not call exit_plan_mode again; end your turn. Approving starts the work; a rejection comes back as a message.`
              : `Pending: the user is asked to approve plan ${plan.id} (${goal}, ${plan.nodes.length} steps) in the Cellmate pane. End your turn now with a one-line summary; do not call exit_plan_mode again. Approving switches the chat to Agent and runs the steps in order.`;
          case 'approved':
            return `Approved: plan ${plan.id} was approved and the chat is back in Agent mode; its steps run as the next turns.`;
          case 'rejected':
            return `Rejected: the user rejected plan ${plan.id}${plan.reason ? ` (their reason: ${plan.reason})` : ''}. Revise it, call submit_plan with the new plan, then exit_plan_mode again.`;
          default:
            return `Plan ${plan.id} is ${plan.approval}.`;
        }
      })();
      return {
        title: `plan approval: ${plan.approval}`,
        output,
        metadata: { planId: plan.id, approval: plan.approval },
        display: planDisplay(plan)
      };
    }
  });
}
