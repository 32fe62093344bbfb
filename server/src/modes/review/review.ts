import { z } from 'zod';

/**
 * Review mode's verdict logic (SPEC MODE-4), pure: what a finding is
 * (validated at the call boundary — the future `add_review_node` tool's parameters), how a
 * finding reaches consensus (a peer, never its author, approves it), and how findings and
 * axis results (lint, type-check, tests) make the verdict. Axes only make it stricter: a
 * failed axis forces Block, an axis that could not run (or was never reported) forces at
 * least Hold — absence of evidence never turns the gate green. No completion contract.
 */

export const REVIEW_KINDS = ['bug', 'suggestion', 'recommendation', 'question', 'ticket'] as const;
export const REVIEW_PRIORITIES = ['P0', 'P1', 'P2', 'P3'] as const;
export type ReviewPriority = (typeof REVIEW_PRIORITIES)[number];

/** `add_review_node`'s arguments: missing or out-of-range priority/confidence is rejected here. */
export const reviewNodeParameters = z.strictObject({
  kind: z.enum(REVIEW_KINDS, { error: `must be one of ${REVIEW_KINDS.join(', ')}` }).describe('What the finding is.'),
  priority: z
    .enum(REVIEW_PRIORITIES, { error: 'must be one of P0 (blocks shipping), P1, P2, P3 (nit)' })
    .describe('P0 blocks shipping, P1 must be fixed before merging, P2 should be fixed, P3 is a nit.'),
  confidence: z
    .number({ error: 'must be a number from 0 to 1 (how sure you are)' })
    .min(0, { error: 'must be at least 0' })
    .max(1, { error: 'must be at most 1' })
    .describe('How sure you are, from 0 to 1.'),
  anchor: z
    .strictObject({
      file: z
        .string({ error: 'must be a workspace-relative path' })
        .min(1, { error: 'must not be empty' })
        .describe('Workspace-relative path of the file or notebook the finding is about.'),
      cell: z
        .string({ error: 'must be a cell id (from notebook_read) or "#N" (the N-th cell)' })
        .min(1, { error: 'must not be empty' })
        .optional()
        .describe('Notebooks only: the cell id (from notebook_read) or "#N" (the N-th cell, from 1).'),
      lines: z
        .tuple([z.number().int().min(1), z.number().int().min(1)], { error: 'must be [first, last], 1-based' })
        .refine(([a, b]) => a <= b, { error: 'first line must not be after the last' })
        .optional()
        .describe('[first, last], 1-based (within the cell for a notebook).')
    })
    .optional()
    .describe('Where the finding is; omit for a finding about the change as a whole.'),
  body: z
    .string({ error: 'must be a string: the finding and why it matters' })
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(8_000)
    .describe('The finding: what is wrong (or could be better) and why it matters; for a bug, how it shows.')
});
export type ReviewNodeInput = z.infer<typeof reviewNodeParameters>;

/** A finding's anchor as recorded: a notebook cell resolved to its index and id. */
export interface ReviewAnchor {
  file: string;
  lines?: [number, number];
  cell?: { index: number; id: string };
}

/** A recorded finding. `author` is the reviewer (an agent or worker id) that added it. */
export interface ReviewNode extends Omit<ReviewNodeInput, 'anchor'> {
  anchor?: ReviewAnchor;
  id: string;
  author: string;
  state: 'open' | 'consensusReady';
  approvedBy?: string;
}

/** A consensus step that must not happen (self-approval, unknown node). */
export class ReviewConsensusError extends Error {
  /** `self-approval`: the approver wrote the finding (a peer must approve it). */
  constructor(
    message: string,
    readonly reason: 'self-approval' | 'unknown-node' | 'full' = 'unknown-node'
  ) {
    super(message);
    this.name = 'ReviewConsensusError';
  }
}

/**
 * A peer approves a finding: `open → consensusReady`. Returns the new node.
 * @throws ReviewConsensusError when the approver is the node's author
 */
export function approveNode(node: ReviewNode, approver: string): ReviewNode {
  if (approver === node.author) {
    throw new ReviewConsensusError(
      `Refused: ${approver} wrote finding ${node.id} and cannot approve it; another reviewer has to.`,
      'self-approval'
    );
  }
  return node.state === 'consensusReady' ? node : { ...node, state: 'consensusReady', approvedBy: approver };
}

/** One check's outcome. `not-run`: the check could not run (no linter, no tests, a crash). */
export interface AxisResult {
  axis: string;
  status: 'passed' | 'failed' | 'not-run';
  detail?: string;
}

export type Verdict = 'Ship' | 'Hold' | 'Block';
const RANK: Record<Verdict, number> = { Ship: 0, Hold: 1, Block: 2 };
const stricter = (a: Verdict, b: Verdict): Verdict => (RANK[a] >= RANK[b] ? a : b);

/** The axes a review expects results for; a missing one counts as not run. */
export const DEFAULT_AXES = ['lint', 'type-check', 'tests'] as const;

/**
 * The verdict and why. Findings: a consensusReady P0 → Block, a consensusReady P1 → Hold,
 * an unconfirmed P0/P1 → Hold (a serious claim nobody has checked yet is not green). Then
 * each expected axis: failed → Block, not run or not reported → at least Hold.
 */
export function computeVerdict(
  nodes: readonly ReviewNode[],
  axes: readonly AxisResult[],
  expected: readonly string[] = DEFAULT_AXES
): { verdict: Verdict; reasons: string[] } {
  let verdict: Verdict = 'Ship';
  const reasons: string[] = [];
  for (const n of nodes) {
    if (n.priority !== 'P0' && n.priority !== 'P1') continue;
    const v: Verdict = n.state === 'consensusReady' && n.priority === 'P0' ? 'Block' : 'Hold';
    verdict = stricter(verdict, v);
    reasons.push(`${n.priority} ${n.kind} ${n.id} (${n.state}) → ${v}`);
  }
  const byAxis = new Map(axes.map((a) => [a.axis, a]));
  for (const name of new Set([...expected, ...byAxis.keys()])) {
    const result = byAxis.get(name);
    if (result?.status === 'passed') continue;
    const v: Verdict = result?.status === 'failed' ? 'Block' : 'Hold';
    verdict = stricter(verdict, v);
    reasons.push(
      `${name} ${result ? result.status : 'not reported'}${result?.detail ? ` (${result.detail})` : ''} → ${v}`
    );
  }
  return { verdict, reasons };
}
