import type { ReviewDisplay, ReviewNodeView } from '@cellmate/protocol';
import { computeVerdict, type ReviewNode } from '../../modes/review/review.js';
import type { StoredReview } from '../../modes/review/review-port.js';

/** Who is making a review call: the person (`user`, a pane's button), else the worker, else the chat's agent. */
export function reviewerOf(ctx: { actor: string; worker?: { id: string } }): string {
  return ctx.actor === 'user' ? 'user' : (ctx.worker?.id ?? 'agent');
}

/** The verdict of a finalized review (Ship / Hold / Block and why), from its nodes and stored axes. */
export function verdictOf(review: StoredReview): ReturnType<typeof computeVerdict> | undefined {
  return review.final ? computeVerdict(review.nodes, review.final.axes) : undefined;
}

function nodeView(n: ReviewNode): ReviewNodeView {
  return {
    id: n.id,
    kind: n.kind,
    priority: n.priority,
    confidence: n.confidence,
    body: n.body,
    author: n.author,
    state: n.state,
    ...(n.approvedBy ? { approvedBy: n.approvedBy } : {}),
    ...(n.anchor ? { anchor: structuredClone(n.anchor) } : {})
  };
}

/** The card of a review: every finding (or the one `focus` names) and, once finalized, the verdict with its axes. */
export function reviewDisplay(review: StoredReview, focus?: string): ReviewDisplay {
  const verdict = verdictOf(review);
  return {
    kind: 'review',
    reviewId: review.id,
    scope: review.label,
    nodes: review.nodes.map(nodeView),
    ...(focus ? { focus } : {}),
    ...(verdict && review.final
      ? {
          verdict: {
            verdict: verdict.verdict,
            reasons: verdict.reasons,
            axes: structuredClone(review.final.axes),
            finalizedAt: review.final.finalizedAt,
            ...(review.final.summary ? { summary: review.final.summary } : {})
          }
        }
      : {})
  };
}

/** One line naming a finding for the model: `n2 P1 bug (open) src/a.py:3-9`. */
export function nodeLine(n: ReviewNode): string {
  const where = n.anchor
    ? ` ${n.anchor.file}${n.anchor.cell ? ` cell ${n.anchor.cell.index + 1} (id ${n.anchor.cell.id})` : ''}${n.anchor.lines ? `:${n.anchor.lines[0]}${n.anchor.lines[1] !== n.anchor.lines[0] ? `-${n.anchor.lines[1]}` : ''}` : ''}`
    : '';
  return `${n.id} ${n.priority} ${n.kind} (${n.state}${n.approvedBy ? `, approved by ${n.approvedBy}` : ''}; by ${n.author})${where}`;
}
