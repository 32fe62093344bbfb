/**
 * The `review` display (SPEC MODE-4): a review's findings as a list anchored to files and
 * notebook cells (a click opens the file at the line, or the notebook at the cell), each
 * with priority, kind, confidence, author and consensus state, and an Approve button for
 * the person on findings still open (`review/approve`: a peer approval; the person never
 * approves their own). Once finalized: the verdict (Ship / Hold / Block), each axis's
 * outcome and why. A card of one finding (`focus`) shows that finding only. The companion
 * updates every card of the review when it changes. Model text is set with textContent
 * only, never as HTML.
 */
import type { ReviewDisplay, ReviewNodeView } from '@cellmate/protocol';

import type { IToolDisplayContext, IToolDisplayRenderer } from './tool-display-types';

type ReviewContext = Pick<IToolDisplayContext, 'trans' | 'openLocation' | 'approveReviewNode'>;

/** Renders a review card. */
export function renderReview(display: ReviewDisplay, context: ReviewContext): HTMLElement {
  const { trans } = context;
  const node = document.createElement('div');
  node.className = 'jp-cellmate-review';
  node.dataset.displayKind = 'review';
  node.dataset.reviewId = String(display.reviewId);
  const all = Array.isArray(display.nodes) ? display.nodes : [];
  const focus = typeof display.focus === 'string' ? display.focus : undefined;
  const shown = focus ? all.filter((n) => n.id === focus) : all;
  if (!focus) {
    const scope = document.createElement('div');
    scope.className = 'jp-cellmate-review-scope';
    scope.textContent = trans.__(
      'Review of %1: %2',
      String(display.scope ?? ''),
      trans._n('%1 finding', '%1 findings', all.length)
    );
    node.appendChild(scope);
  }
  const list = document.createElement('ol');
  list.className = 'jp-cellmate-review-nodes';
  for (const n of shown) {
    list.appendChild(renderNode(n, context));
  }
  node.appendChild(list);
  const verdict = display.verdict;
  if (!focus && verdict && typeof verdict === 'object') {
    node.dataset.verdict = String(verdict.verdict);
    const box = document.createElement('div');
    box.className = 'jp-cellmate-review-verdict';
    box.dataset.verdict = String(verdict.verdict);
    const head = document.createElement('div');
    head.className = 'jp-cellmate-review-verdict-head';
    head.textContent = trans.__('Verdict: %1', String(verdict.verdict));
    box.appendChild(head);
    if (typeof verdict.summary === 'string' && verdict.summary) {
      const summary = document.createElement('div');
      summary.className = 'jp-cellmate-review-summary';
      summary.textContent = verdict.summary;
      box.appendChild(summary);
    }
    const axes = document.createElement('ul');
    axes.className = 'jp-cellmate-review-axes';
    for (const a of Array.isArray(verdict.axes) ? verdict.axes : []) {
      const li = document.createElement('li');
      li.dataset.axis = String(a.axis);
      li.dataset.status = String(a.status);
      const name = document.createElement('span');
      name.className = 'jp-cellmate-review-axis-name';
      name.textContent = `${String(a.axis)}: ${axisStatus(String(a.status), trans)}`;
      li.appendChild(name);
      if (a.detail) {
        const detail = document.createElement('span');
        detail.className = 'jp-cellmate-review-axis-detail';
        detail.textContent = ` — ${String(a.detail)}`;
        li.appendChild(detail);
      }
      axes.appendChild(li);
    }
    box.appendChild(axes);
    const reasons = Array.isArray(verdict.reasons) ? verdict.reasons : [];
    if (reasons.length) {
      const why = document.createElement('div');
      why.className = 'jp-cellmate-review-reasons';
      why.textContent = trans.__('Why: %1', reasons.join('; '));
      box.appendChild(why);
    }
    node.appendChild(box);
  }
  return node;
}

function renderNode(n: ReviewNodeView, { trans, openLocation, approveReviewNode }: ReviewContext): HTMLElement {
  const li = document.createElement('li');
  li.className = 'jp-cellmate-review-node';
  li.dataset.nodeId = String(n.id);
  li.dataset.state = String(n.state);
  li.dataset.priority = String(n.priority);
  const meta = document.createElement('div');
  meta.className = 'jp-cellmate-review-meta';
  const badge = (className: string, text: string, title?: string): HTMLElement => {
    const span = document.createElement('span');
    span.className = className;
    span.textContent = text;
    if (title) {
      span.title = title;
    }
    return span;
  };
  meta.append(
    badge('jp-cellmate-review-priority', String(n.priority)),
    badge('jp-cellmate-review-kind', String(n.kind)),
    badge('jp-cellmate-review-confidence', `${Math.round(Number(n.confidence) * 100)}%`, trans.__('Confidence'))
  );
  const anchor = n.anchor && typeof n.anchor.file === 'string' ? n.anchor : undefined;
  if (anchor) {
    const lines = Array.isArray(anchor.lines) ? anchor.lines : undefined;
    const label = `${anchor.file}${anchor.cell ? ` ${trans.__('cell %1', anchor.cell.index + 1)}` : ''}${lines ? `:${lines[0]}${lines[1] !== lines[0] ? `-${lines[1]}` : ''}` : ''}`;
    if (openLocation) {
      const link = document.createElement('a');
      link.className = 'jp-cellmate-review-anchor';
      link.href = '#';
      link.textContent = label;
      link.title = anchor.cell ? trans.__('Open the notebook at this cell') : trans.__('Open the file at this line');
      link.dataset.path = anchor.file;
      link.addEventListener('click', (event) => {
        event.preventDefault();
        openLocation({
          path: anchor.file,
          line: lines?.[0] ?? 1,
          text: '',
          ...(anchor.cell ? { cell: anchor.cell } : {})
        });
      });
      meta.appendChild(link);
    } else {
      meta.appendChild(badge('jp-cellmate-review-anchor', label));
    }
  }
  li.appendChild(meta);
  const body = document.createElement('div');
  body.className = 'jp-cellmate-review-body';
  body.textContent = String(n.body ?? '');
  li.appendChild(body);
  const consensus = document.createElement('div');
  consensus.className = 'jp-cellmate-review-consensus';
  consensus.setAttribute('role', 'status');
  consensus.textContent =
    n.state === 'consensusReady'
      ? trans.__('Consensus ready: approved by %1 (found by %2)', String(n.approvedBy ?? ''), String(n.author))
      : trans.__('Open: found by %1, waiting for a peer to approve', String(n.author));
  if (n.state === 'open' && n.author !== 'user' && approveReviewNode) {
    const approve = document.createElement('button');
    approve.type = 'button';
    approve.className = 'jp-Button jp-mod-accept jp-cellmate-review-approve';
    approve.textContent = trans.__('Approve');
    approve.title = trans.__('You checked this finding and agree: it counts towards the verdict');
    approve.addEventListener('click', () => {
      approve.disabled = true;
      consensus.textContent = trans.__('Approving…');
      void approveReviewNode(String(n.id)).then((outcome) => {
        consensus.textContent = outcome.message;
        if (outcome.state === 'error') {
          approve.disabled = false;
        }
      });
    });
    li.appendChild(approve);
  }
  li.appendChild(consensus);
  return li;
}

function axisStatus(status: string, trans: IToolDisplayContext['trans']): string {
  switch (status) {
    case 'passed':
      return trans.__('passed');
    case 'failed':
      return trans.__('failed');
    case 'not-run':
      return trans.__('could not run');
    default:
      return status;
  }
}

/** The `review` renderer of `tool-displays.ts`: the findings list (and verdict) open; a single finding collapsed. */
export const reviewDisplayRenderer: IToolDisplayRenderer<'review'> = {
  kind: 'review',
  render(display, context) {
    const node = renderReview(display, context);
    const focus =
      typeof display.focus === 'string' ? (display.nodes ?? []).find((n) => n.id === display.focus) : undefined;
    const summary = focus
      ? `${focus.priority} ${focus.kind} · ${focus.state === 'consensusReady' ? context.trans.__('consensus ready') : context.trans.__('open')}`
      : display.verdict
        ? context.trans.__('Verdict: %1', String(display.verdict.verdict))
        : context.trans._n('%1 finding', '%1 findings', Array.isArray(display.nodes) ? display.nodes.length : 0);
    return { node, summary, openByDefault: !display.focus || focus?.state === 'open', dispose: () => node.remove() };
  }
};
