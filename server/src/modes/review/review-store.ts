import { Emitter, type Event } from 'vscode-jsonrpc/node.js';
import { z } from 'zod';
import { newReviewId } from '../../base/ids.js';
import type { ReviewPort, StoredReview, StoredReviewScope } from './review-port.js';
import { ChatFiles } from '../chat-files.js';
import {
  approveNode,
  REVIEW_KINDS,
  REVIEW_PRIORITIES,
  ReviewConsensusError,
  type AxisResult,
  type ReviewNode
} from './review.js';

const nodeSchema = z.object({
  id: z.string(),
  author: z.string(),
  state: z.enum(['open', 'consensusReady']),
  approvedBy: z.string().optional(),
  kind: z.enum(REVIEW_KINDS),
  priority: z.enum(REVIEW_PRIORITIES),
  confidence: z.number(),
  body: z.string(),
  anchor: z
    .object({
      file: z.string(),
      lines: z.tuple([z.number(), z.number()]).optional(),
      cell: z.object({ index: z.number(), id: z.string() }).optional()
    })
    .optional()
});

const reviewSchema = z.object({
  id: z.string(),
  chatId: z.string(),
  scope: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('git-diff') }),
    z.object({ kind: z.literal('notebook'), path: z.string() }),
    z.object({ kind: z.literal('chat') })
  ]),
  label: z.string(),
  files: z.array(z.string()),
  nodes: z.array(nodeSchema),
  final: z
    .object({
      summary: z.string().optional(),
      finalizedAt: z.string(),
      axes: z.array(
        z.object({ axis: z.string(), status: z.enum(['passed', 'failed', 'not-run']), detail: z.string().optional() })
      )
    })
    .optional(),
  startedAt: z.string()
});

/** How many findings one review keeps (a model looping on add_review_node is told to stop). */
export const MAX_REVIEW_NODES = 200;

/**
 * The durable review of every chat (SPEC MODE-4): `.cellmate/reviews/<chatId>.json`, written
 * whole by temp file + rename before a call returns, so findings, their consensus and the
 * verdict survive a companion restart or kill. `onDidChange` fires after every change (the
 * review flow updates the chat's review cards).
 */
export class ReviewStore implements ReviewPort {
  private readonly files: ChatFiles<StoredReview | null>;
  private readonly changeEmitter = new Emitter<StoredReview>();

  /** A review was started, or a finding, an approval or the verdict changed it. */
  readonly onDidChange: Event<StoredReview> = this.changeEmitter.event;

  constructor(directory: string, onProblem: (message: string) => void = () => {}) {
    this.files = new ChatFiles<StoredReview | null>({
      directory,
      key: 'review',
      schema: reviewSchema,
      noun: 'review',
      onProblem,
      empty: () => null,
      accept: (chatId, stored) => ((stored as StoredReview).chatId === chatId ? (stored as StoredReview) : null)
    });
  }

  /** Opens the chat's review (`review/start`), replacing any earlier one. */
  start(chatId: string, scope: StoredReviewScope, label: string, files: readonly string[]): StoredReview {
    const review: StoredReview = {
      id: newReviewId(),
      chatId,
      scope,
      label,
      files: [...files],
      nodes: [],
      startedAt: new Date().toISOString()
    };
    return this.commit(review);
  }

  /** The chat's review, if one was started or a finding was added. */
  get(chatId: string): StoredReview | undefined {
    const review = this.reviewOf(chatId);
    return review ? structuredClone(review) : undefined;
  }

  current(chatId: string): StoredReview {
    const review = this.reviewOf(chatId);
    if (review) return structuredClone(review);
    return this.commit({
      id: newReviewId(),
      chatId,
      scope: { kind: 'chat' },
      label: 'this chat',
      files: [],
      nodes: [],
      startedAt: new Date().toISOString()
    });
  }

  addNode(
    chatId: string,
    input: Omit<ReviewNode, 'id' | 'state' | 'approvedBy'>
  ): { review: StoredReview; node: ReviewNode } {
    const review = this.current(chatId);
    if (review.nodes.length >= MAX_REVIEW_NODES) {
      throw new ReviewConsensusError(
        `This review already has ${MAX_REVIEW_NODES} findings, the most one review keeps. Merge related findings, or call finalize_review.`,
        'full'
      );
    }
    const next = review.nodes.reduce((max, n) => Math.max(max, Number(n.id.slice(1)) || 0), 0) + 1;
    const node: ReviewNode = { id: `n${next}`, ...structuredClone(input), state: 'open' };
    review.nodes.push(node);
    const saved = this.commit(review);
    return { review: saved, node: structuredClone(node) };
  }

  approve(chatId: string, nodeId: string, approver: string): { review: StoredReview; node: ReviewNode } {
    const review = this.get(chatId);
    if (!review) throw new ReviewConsensusError(`No finding "${nodeId}": this chat has no review findings yet.`);
    const index = review.nodes.findIndex((n) => n.id === nodeId);
    if (index < 0) {
      const ids = review.nodes.map((n) => n.id).join(', ') || 'none yet';
      throw new ReviewConsensusError(`No finding "${nodeId}" in this review (findings: ${ids}).`);
    }
    const before = review.nodes[index]!;
    const after = approveNode(before, approver);
    if (after === before) return { review, node: before };
    review.nodes[index] = after;
    return { review: this.commit(review), node: structuredClone(after) };
  }

  finalize(chatId: string, axes: AxisResult[], summary?: string): StoredReview {
    const review = this.current(chatId);
    const text = summary?.trim();
    review.final = {
      axes: structuredClone(axes),
      finalizedAt: new Date().toISOString(),
      ...(text ? { summary: text } : {})
    };
    return this.commit(review);
  }

  /** Forgets a deleted chat's review (file included). */
  removeChat(chatId: string): void {
    this.files.remove(chatId);
  }

  dispose(): void {
    this.changeEmitter.dispose();
  }

  private commit(review: StoredReview): StoredReview {
    this.files.save(review.chatId, review);
    this.changeEmitter.fire(structuredClone(review));
    return structuredClone(review);
  }

  private reviewOf(chatId: string): StoredReview | undefined {
    return this.files.get(chatId) ?? undefined;
  }
}
