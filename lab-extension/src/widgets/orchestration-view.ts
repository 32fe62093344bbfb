/**
 * The `orchestration` display (SPEC MODE-5): the roles (name, tier, brief), the task tree in
 * the order it runs (indented by dependency depth, each task with its role and the keys it
 * waits for), the synthesis step and the budget; while pending, Approve and Reject (with an
 * optional reason) answer it on the server (`orchestration/resolve` — the operator's pane is
 * the only place an orchestration can be approved). Once approved, each task shows its
 * progress (`data-state`). The companion updates every card of it when anything changes.
 * Text only, never HTML.
 */
import type { OrchestrationDisplay, OrchestrationStepState } from '@cellmate/protocol';

import { approvalBar } from './approval-bar';
import type { IToolDisplayContext, IToolDisplayRenderer } from './tool-display-types';

/** Renders an orchestration card. */
export function renderOrchestration(
  display: OrchestrationDisplay,
  { trans, resolveOrchestration }: Pick<IToolDisplayContext, 'trans' | 'resolveOrchestration'>
): HTMLElement {
  const node = div('jp-cellmate-orchestration');
  node.dataset.displayKind = 'orchestration';
  node.dataset.orchestrationId = String(display.orchestrationId);
  node.dataset.approval = String(display.approval);
  if (display.run) {
    node.dataset.run = String(display.run.state);
  }
  const tasks = Array.isArray(display.tasks) ? display.tasks : [];
  const roles = Array.isArray(display.roles) ? display.roles : [];

  node.appendChild(heading(trans.__('Roles')));
  const roleList = document.createElement('ul');
  roleList.className = 'jp-cellmate-orchestration-roles';
  for (const r of roles) {
    const li = document.createElement('li');
    li.dataset.role = String(r.name);
    const name = span('jp-cellmate-orchestration-role', String(r.name));
    const tier = span('jp-cellmate-orchestration-tier', String(r.tier));
    tier.dataset.tier = String(r.tier);
    li.append(name, tier, document.createTextNode(` ${String(r.brief ?? '')}`));
    roleList.appendChild(li);
  }
  node.appendChild(roleList);

  node.appendChild(heading(trans.__('Tasks')));
  const depth = depths(tasks);
  const list = document.createElement('ol');
  list.className = 'jp-cellmate-orchestration-tasks';
  for (const t of tasks) {
    const li = document.createElement('li');
    li.dataset.key = String(t.key);
    li.style.marginLeft = `${(depth.get(t.key) ?? 0) * 12}px`;
    const state = display.run?.tasks?.[t.key];
    if (state) {
      li.dataset.state = state;
      li.appendChild(span('jp-cellmate-orchestration-step', stepText(state, trans)));
    }
    li.appendChild(span('jp-cellmate-orchestration-title', String(t.title)));
    li.appendChild(span('jp-cellmate-orchestration-task-role', ` · ${String(t.role)}`));
    const deps = Array.isArray(t.depends_on) ? t.depends_on : [];
    if (deps.length) {
      li.appendChild(span('jp-cellmate-orchestration-after', ` ${trans.__('after %1', deps.join(', '))}`));
    }
    li.title = String(t.description ?? '');
    list.appendChild(li);
  }
  node.appendChild(list);

  node.appendChild(heading(trans.__('Synthesis')));
  const synthesis = div('jp-cellmate-orchestration-synthesis');
  if (display.run?.synthesis) {
    synthesis.dataset.state = display.run.synthesis;
    synthesis.appendChild(span('jp-cellmate-orchestration-step', stepText(display.run.synthesis, trans)));
  }
  synthesis.appendChild(document.createTextNode(String(display.synthesis ?? '')));
  node.appendChild(synthesis);

  const b = display.budget ?? { max_workers: 0, max_minutes: 0 };
  const budget = div('jp-cellmate-orchestration-budget');
  budget.textContent =
    b.max_tool_calls !== undefined
      ? trans.__('Budget: %1 workers at once, %2 min, %3 tool calls', b.max_workers, b.max_minutes, b.max_tool_calls)
      : trans.__('Budget: %1 workers at once, %2 min', b.max_workers, b.max_minutes);
  node.appendChild(budget);

  const state = div('jp-cellmate-orchestration-state');
  state.setAttribute('role', 'status');
  state.textContent = approvalText(display, trans);
  if (display.approval === 'pending' && resolveOrchestration) {
    node.appendChild(
      approvalBar({
        stem: 'jp-cellmate-orchestration',
        state,
        trans,
        reasonLabel: trans.__('Reason for rejecting the orchestration'),
        approveTitle: trans.__('Switch to Agent and run these tasks in dependency order, then the synthesis'),
        rejectTitle: trans.__('Ask the agent to revise the orchestration'),
        resolve: (decision, reason) => resolveOrchestration(String(display.orchestrationId), decision, reason)
      })
    );
  }
  node.appendChild(state);
  return node;
}

/** Each task's depth in the tree: 0 without dependencies, else one more than its deepest dependency. */
function depths(tasks: ReadonlyArray<{ key: string; depends_on?: string[] }>): Map<string, number> {
  const byKey = new Map(tasks.map((t) => [t.key, t]));
  const depth = new Map<string, number>();
  const visit = (key: string, seen: Set<string>): number => {
    const known = depth.get(key);
    if (known !== undefined) {
      return known;
    }
    const t = byKey.get(key);
    if (!t || seen.has(key)) {
      return 0; // the companion validated the graph; a malformed display must still render
    }
    seen.add(key);
    const deps = Array.isArray(t.depends_on) ? t.depends_on : [];
    const d = deps.length ? 1 + Math.max(...deps.map((k) => visit(k, seen))) : 0;
    depth.set(key, d);
    return d;
  };
  for (const t of tasks) {
    visit(t.key, new Set());
  }
  return depth;
}

function stepText(state: OrchestrationStepState, trans: IToolDisplayContext['trans']): string {
  switch (state) {
    case 'running':
      return trans.__('running');
    case 'done':
      return trans.__('done');
    case 'stopped':
      return trans.__('stopped');
    case 'skipped':
      return trans.__('skipped');
    default:
      return trans.__('queued');
  }
}

function approvalText(display: OrchestrationDisplay, trans: IToolDisplayContext['trans']): string {
  switch (display.approval) {
    case 'pending':
      return trans.__('Waiting for your approval. Nothing runs until you approve.');
    case 'approved':
      if (display.run?.state === 'done') {
        return trans.__('Approved: every task and the synthesis are done.');
      }
      if (display.run?.state === 'stopped') {
        return display.run.note
          ? trans.__('Approved, then stopped: %1', display.run.note)
          : trans.__('Approved, then stopped.');
      }
      return trans.__('Approved: the tasks run in Agent mode.');
    case 'rejected':
      return display.reason ? trans.__('Rejected: %1', display.reason) : trans.__('Rejected.');
    default:
      return trans.__('Replaced by a newer proposal.');
  }
}

function div(className: string): HTMLDivElement {
  const d = document.createElement('div');
  d.className = className;
  return d;
}

function span(className: string, text: string): HTMLSpanElement {
  const s = document.createElement('span');
  s.className = className;
  s.textContent = text;
  return s;
}

function heading(text: string): HTMLDivElement {
  const h = div('jp-cellmate-orchestration-heading');
  h.textContent = text;
  return h;
}

/** The `orchestration` renderer of `tool-displays.ts`: open while pending (the operator has to answer) and while it runs. */
export const orchestrationDisplayRenderer: IToolDisplayRenderer<'orchestration'> = {
  kind: 'orchestration',
  render(display, context) {
    const node = renderOrchestration(display, context);
    const tasks = Array.isArray(display.tasks) ? display.tasks.length : 0;
    return {
      node,
      summary: context.trans.__('%1 tasks · %2', tasks, String(display.run?.state ?? display.approval)),
      openByDefault: display.approval === 'pending' || display.run?.state === 'running',
      dispose: () => node.remove()
    };
  }
};
