/** The types of tool-card renderers (a leaf: renderers and the registry both import it). */
import type { LspDisplayLocation, ToolCallDisplay, ToolCallDisplayKind } from '@cellmate/protocol';
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { TranslationBundle } from '@jupyterlab/translation';
import type { IDebugCardActions } from './debug-card';

/** What a renderer gets besides the display. */
export interface IToolDisplayContext {
  /** Absent in tests without JupyterLab: renderers then show text only. */
  readonly rendermime?: IRenderMimeRegistry;
  readonly trans: TranslationBundle;
  /** Opens a file at a line, or a notebook at a cell (lsp cards' links); absent: links are text. */
  readonly openLocation?: (location: LspDisplayLocation) => void;
  /** Accepts or discards a staged edit (`edit/resolve`); absent: diff cards are read-only. */
  readonly resolveEdit?: (editId: string, action: 'accept' | 'discard') => Promise<{ state: string; message: string }>;
  /** Approves or rejects a pending plan (`plan/resolve`, MODE-3); absent: plan cards are read-only. */
  readonly resolvePlan?: (
    planId: string,
    decision: 'approve' | 'reject',
    reason?: string
  ) => Promise<{ state: string; message: string }>;
  /** Approves or rejects a pending orchestration (`orchestration/resolve`, MODE-5); absent: orchestration cards are read-only. */
  readonly resolveOrchestration?: (
    orchestrationId: string,
    decision: 'approve' | 'reject',
    reason?: string
  ) => Promise<{ state: string; message: string }>;
  /** The person approves a review finding (`review/approve`, MODE-4); absent: review cards are read-only. */
  readonly approveReviewNode?: (nodeId: string) => Promise<{ state: string; message: string }>;
  /** Writes a `notebook_verify` run's kept outputs into one notebook (`verify/accept`); absent: no Accept button. */
  readonly acceptVerifyOutputs?: (runId: string, path: string) => Promise<{ state: string; message: string }>;
  /** The debug card's actions (Terminate, scroll to the stopped cell). */
  readonly debug?: IDebugCardActions;
}

/** A rendered display; the card owns it and disposes it when the display changes. */
export interface IToolDisplayView {
  readonly node: HTMLElement;
  /** A short label for the card's summary line (eval: the kernel). */
  readonly summary?: string;
  /** Open the card without a click (a figure or a table is the point of the call). */
  readonly openByDefault?: boolean;
  dispose(): void;
}

/** Renders one kind of display. */
export interface IToolDisplayRenderer<K extends ToolCallDisplayKind = ToolCallDisplayKind> {
  readonly kind: K;
  render(display: Extract<ToolCallDisplay, { kind: K }>, context: IToolDisplayContext): IToolDisplayView;
}
