/**
 * The `plan` display (SPEC MODE-3): a plan's goal and its steps in the order they run
 * (each with the keys it waits for), compact; while its approval is pending, Approve and
 * Reject (with an optional reason) answer it on the server (`plan/resolve`). Every card of
 * the plan is updated by the companion when the approval changes. Text only, never HTML.
 */
import type { PlanDisplay } from '@cellmate/protocol';

import { approvalBar } from './approval-bar';
import type { IToolDisplayContext, IToolDisplayRenderer } from './tool-display-types';

/** Renders a plan card. */
export function renderPlan(
  display: PlanDisplay,
  { trans, resolvePlan }: Pick<IToolDisplayContext, 'trans' | 'resolvePlan'>
): HTMLElement {
  const node = document.createElement('div');
  node.className = 'jp-cellmate-plan';
  node.dataset.displayKind = 'plan';
  node.dataset.planId = String(display.planId);
  node.dataset.approval = String(display.approval);
  const goal = document.createElement('div');
  goal.className = 'jp-cellmate-plan-goal';
  goal.textContent = String(display.goal ?? '');
  node.appendChild(goal);
  const list = document.createElement('ol');
  list.className = 'jp-cellmate-plan-nodes';
  for (const n of Array.isArray(display.nodes) ? display.nodes : []) {
    const li = document.createElement('li');
    li.dataset.key = String(n.key);
    const title = document.createElement('span');
    title.className = 'jp-cellmate-plan-title';
    title.textContent = String(n.title);
    li.appendChild(title);
    const deps = Array.isArray(n.depends_on) ? n.depends_on : [];
    if (deps.length) {
      const after = document.createElement('span');
      after.className = 'jp-cellmate-plan-after';
      after.textContent = ` ${trans.__('after %1', deps.join(', '))}`;
      li.appendChild(after);
    }
    li.title = String(n.description ?? '');
    list.appendChild(li);
  }
  node.appendChild(list);
  const state = document.createElement('div');
  state.className = 'jp-cellmate-plan-state';
  state.setAttribute('role', 'status');
  state.textContent = approvalText(display, trans);
  if (display.approval === 'pending' && resolvePlan) {
    node.appendChild(
      approvalBar({
        stem: 'jp-cellmate-plan',
        state,
        trans,
        reasonLabel: trans.__('Reason for rejecting the plan'),
        approveTitle: trans.__('Switch to Agent and run these steps in order'),
        rejectTitle: trans.__('Ask the agent to revise the plan'),
        resolve: (decision, reason) => resolvePlan(String(display.planId), decision, reason)
      })
    );
  }
  node.appendChild(state);
  return node;
}

function approvalText(display: PlanDisplay, trans: IToolDisplayContext['trans']): string {
  switch (display.approval) {
    case 'pending':
      return trans.__('Waiting for your approval.');
    case 'approved':
      return trans.__('Approved: the steps run in Agent mode.');
    case 'rejected':
      return display.reason ? trans.__('Rejected: %1', display.reason) : trans.__('Rejected.');
    case 'superseded':
      return trans.__('Replaced by a newer plan.');
    default:
      return trans.__('Not yet submitted for approval.');
  }
}

/** The `plan` renderer of `tool-displays.ts`: open while pending (the person has to answer). */
export const planDisplayRenderer: IToolDisplayRenderer<'plan'> = {
  kind: 'plan',
  render(display, context) {
    const node = renderPlan(display, context);
    const steps = Array.isArray(display.nodes) ? display.nodes.length : 0;
    return {
      node,
      summary: context.trans.__('%1 steps · %2', steps, String(display.approval)),
      openByDefault: display.approval === 'pending' || display.approval === 'none',
      dispose: () => node.remove()
    };
  }
};
