/**
 * The Approve / Reject bar of a card whose approval is the person's (plans, MODE-3;
 * orchestrations, MODE-5): an optional reason (sent on Reject), the two buttons, and the
 * card's status line saying what happens. Both buttons and the reason are disabled while
 * the answer is on its way, and enabled again when the server refuses it. Text only.
 */
import type { IToolDisplayContext } from './tool-display-types';

/** What one card's bar answers and how it is labelled. */
export interface ApprovalBarOptions {
  /** The card's class stem: `<stem>-actions`, `-reason`, `-approve`, `-reject`. */
  stem: string;
  /** The aria label of the reason (`Reason for rejecting the plan`). */
  reasonLabel: string;
  approveTitle: string;
  rejectTitle: string;
  /** The card's status line (`role="status"`), which the bar writes into. */
  state: HTMLElement;
  trans: IToolDisplayContext['trans'];
  resolve(decision: 'approve' | 'reject', reason: string | undefined): Promise<{ state: string; message: string }>;
}

/** The bar (see the module doc). */
export function approvalBar(o: ApprovalBarOptions): HTMLDivElement {
  const { trans } = o;
  const actions = document.createElement('div');
  actions.className = `${o.stem}-actions`;
  const reason = document.createElement('input');
  reason.type = 'text';
  reason.className = `${o.stem}-reason`;
  reason.placeholder = trans.__('Reason (optional, sent on Reject)');
  reason.setAttribute('aria-label', o.reasonLabel);
  const approve = button(trans.__('Approve'), `jp-mod-accept ${o.stem}-approve`, o.approveTitle);
  const reject = button(trans.__('Reject'), `jp-mod-reject ${o.stem}-reject`, o.rejectTitle);
  const act = async (decision: 'approve' | 'reject'): Promise<void> => {
    approve.disabled = reject.disabled = reason.disabled = true;
    o.state.textContent = decision === 'approve' ? trans.__('Approving…') : trans.__('Rejecting…');
    const outcome = await o.resolve(decision, reason.value.trim() || undefined);
    o.state.textContent = outcome.message;
    if (outcome.state === 'error') approve.disabled = reject.disabled = reason.disabled = false;
  };
  approve.addEventListener('click', () => void act('approve'));
  reject.addEventListener('click', () => void act('reject'));
  actions.append(reason, approve, reject);
  return actions;
}

function button(label: string, className: string, title: string): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = `jp-Button ${className}`;
  b.textContent = label;
  b.title = title;
  return b;
}
