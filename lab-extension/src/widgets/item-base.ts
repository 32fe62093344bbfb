/**
 * What every transcript item widget shares: its interface and its stable DOM hooks.
 */
import type { IRewindActions } from './rewind-view';
import type { IDebugCardActions } from './debug-card';
import type { LspDisplayLocation, QuestionAnswer, RewindResult, TranscriptItem } from '@cellmate/protocol';
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { Widget } from '@lumino/widgets';

/** A transcript item's widget; `setItem` receives newer copies of the same item. */
export interface IItemWidget extends Widget {
  readonly itemId: string;
  readonly kind: TranscriptItem['kind'];
  setItem(item: TranscriptItem): void;
  /** The last output line of a running tool call (tool cards only). */
  setProgress?(lastLine: string | undefined): void;
}

/** What item widgets need from the pane. */
export interface IItemContext {
  rendermime: IRenderMimeRegistry;
  trans: TranslationBundle;
  /** Called after content changed size asynchronously (markdown rendered). */
  onResize(): void;
  /** Answers a question card (absent: cards are read-only). */
  answerQuestion?(questionId: string, answer: QuestionAnswer): Promise<boolean>;
  /** Runs the last turn again (the last user message's Retry). */
  retry?(): Promise<boolean>;
  /** Replaces the last user message and runs the turn again (its Edit). */
  edit?(text: string): Promise<boolean>;
  /** Inserts code as a new cell below the active cell of the current notebook. */
  copyToNotebook?(code: string): void;
  /** Accepts or discards a staged edit from its diff card (`edit/resolve`); a refusal comes back as `state: 'error'`. */
  resolveEdit?(editId: string, action: 'accept' | 'discard'): Promise<{ state: string; message: string }>;
  /** Approves or rejects a pending plan from its card (`plan/resolve`); a refusal comes back as `state: 'error'`. */
  resolvePlan?(
    planId: string,
    decision: 'approve' | 'reject',
    reason?: string
  ): Promise<{ state: string; message: string }>;
  /** Approves or rejects a pending orchestration from its card (`orchestration/resolve`, MODE-5); a refusal comes back as `state: 'error'`. */
  resolveOrchestration?(
    orchestrationId: string,
    decision: 'approve' | 'reject',
    reason?: string
  ): Promise<{ state: string; message: string }>;
  /** Approves a review finding from its card (`review/approve`); a refusal comes back as `state: 'error'`. */
  approveReviewNode?(nodeId: string): Promise<{ state: string; message: string }>;
  /** Writes a verify run's kept outputs into a notebook (`verify/accept`, the verify card's button). */
  acceptVerifyOutputs?(runId: string, path: string): Promise<{ state: string; message: string }>;
  /** The debug card's actions. */
  debug?: IDebugCardActions;
  /** Opens a file at a line or a notebook at a cell (lsp cards' links). */
  openLocation?(location: LspDisplayLocation): void;
  /** Undo a turn's changes / rewind to a message (absent: no checkpoints here). */
  rewind?: IRewindActions & { done(result: RewindResult): void };
}

/**
 * Sets the attributes every item carries: `.jp-cellmate-item[data-kind][data-item-id]`
 * (stable hooks for browser tests and styling).
 */
export function markItem(node: HTMLElement, item: TranscriptItem): void {
  node.classList.add('jp-cellmate-item');
  node.dataset.kind = item.kind;
  node.dataset.itemId = item.id;
}
