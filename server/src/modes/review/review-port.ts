import type { AxisResult, ReviewNode } from './review.js';

/** What a review covers: the workspace's git diff, one notebook, or (no `review/start`) the chat itself. */
export type StoredReviewScope = { kind: 'git-diff' } | { kind: 'notebook'; path: string } | { kind: 'chat' };

/** A chat's review as the review port keeps it (durably: it survives a companion restart). */
export interface StoredReview {
  id: string;
  chatId: string;
  scope: StoredReviewScope;
  /** Shown in the pane, e.g. `git diff (3 files)`. */
  label: string;
  /** The workspace-relative files the change touches: what the axes check. */
  files: string[];
  /** In the order they were added; ids `n1`, `n2`, … */
  nodes: ReviewNode[];
  /** Set by `finalize_review`: the axes' results (the verdict is computed from them and the nodes). */
  final?: { summary?: string; axes: AxisResult[]; finalizedAt: string };
  startedAt: string;
}

/**
 * What the review tools need of the review store (`server/src/modes/review/review-store.ts`
 * implements it). Every method persists before it returns.
 */
export interface ReviewPort {
  /** The chat's review; one is opened (scope `chat`, no files) when the chat has none. */
  current(chatId: string): StoredReview;
  /** Records a finding (state `open`); returns the review and the new node. */
  addNode(
    chatId: string,
    node: Omit<ReviewNode, 'id' | 'state' | 'approvedBy'>
  ): { review: StoredReview; node: ReviewNode };
  /**
   * A peer approves a finding (`review.ts` `approveNode`).
   * @throws ReviewConsensusError when the approver wrote it or the node does not exist
   */
  approve(chatId: string, nodeId: string, approver: string): { review: StoredReview; node: ReviewNode };
  /** Publishes the axes' results (a later call replaces them). */
  finalize(chatId: string, axes: AxisResult[], summary?: string): StoredReview;
}
