/**
 * The answers a person gives on the open chat's cards: a staged edit's Accept / Discard,
 * a plan's or an orchestration's Approve / Reject (MODE-3, MODE-5), a review finding's
 * Approve (MODE-4), a verify run's "Accept new outputs", a question's answer, a debug
 * session's Terminate.
 */
import type { ModelSettings, QuestionAnswer } from '@cellmate/protocol';

import { errorMessage, PaneState } from './pane-state';

/** What a card shows after its button: the server's new state, or `error` with why. */
export interface ICardAnswer {
  state: string;
  message: string;
}

/** Sends a card's answer for the open chat (and the turn's model settings when it runs work). */
type CardRequest<M> = (chatId: string, model: M) => Promise<ICardAnswer>;

/** The open chat's card answers. */
export class CardActions {
  constructor(private readonly _pane: PaneState) {}

  /**
   * Accepts or discards a staged edit of the open chat (its diff card). A refusal (a file
   * changed since staging, expired, already resolved) comes back as `state: 'error'` with
   * the server's message, for the card to show.
   */
  resolveEdit(editId: string, action: 'accept' | 'discard'): Promise<ICardAnswer> {
    return this._answer((chatId) => this._pane.connection.request('edit/resolve', { chatId, editId, action }));
  }

  /**
   * Approves or rejects a pending plan of the open chat (its plan card, MODE-3). Approving
   * runs the plan's steps with the configured model, so it needs one like sending does. A
   * refusal (not pending any more) comes back as `state: 'error'` for the card to show.
   */
  resolvePlan(planId: string, decision: 'approve' | 'reject', reason?: string): Promise<ICardAnswer> {
    return this._answerWithModel(
      this._pane.trans.__('Configure a model first: approving runs the plan.'),
      (chatId, model) =>
        this._pane.connection.request('plan/resolve', {
          chatId,
          planId,
          decision,
          model,
          ...(reason ? { reason } : {})
        })
    );
  }

  /**
   * The person approves a finding of the open chat's review (its Approve button): a peer
   * approval. A refusal (the person wrote it, unknown finding) comes back as `state: 'error'`.
   */
  approveReviewNode(nodeId: string): Promise<ICardAnswer> {
    return this._answer((chatId) => this._pane.connection.request('review/approve', { chatId, nodeId }));
  }

  /**
   * Writes a `notebook_verify` run's kept outputs into one notebook of the open chat (the
   * verify card's "Accept new outputs"). A refusal (the run's copy is gone, the cells were
   * edited since) comes back as `state: 'error'` for the card to show.
   */
  acceptVerifyOutputs(runId: string, path: string): Promise<ICardAnswer> {
    return this._answer((chatId) => this._pane.connection.request('verify/accept', { chatId, runId, path }));
  }

  /**
   * Approves or rejects a pending orchestration of the open chat (its card, MODE-5). Only
   * this pane's connection (a person's: `interactive` in hello) can; approving runs the
   * tasks with the configured model, so it needs one like sending does. A refusal comes back
   * as `state: 'error'` for the card to show.
   */
  resolveOrchestration(orchestrationId: string, decision: 'approve' | 'reject', reason?: string): Promise<ICardAnswer> {
    return this._answerWithModel(
      this._pane.trans.__('Configure a model first: approving runs the tasks.'),
      (chatId, model) =>
        this._pane.connection.request('orchestration/resolve', {
          chatId,
          orchestrationId,
          decision,
          model,
          ...(reason ? { reason } : {})
        })
    );
  }

  /** Answers (or skips) a question card in the open chat; false when it failed. */
  async answer(questionId: string, answer: QuestionAnswer): Promise<boolean> {
    const pane = this._pane;
    const chatId = pane.chatId;
    if (!chatId) {
      return false;
    }
    try {
      await pane.connection.request('chat/answer', { chatId, questionId, answer });
      return true;
    } catch (error) {
      pane.fail(pane.trans.__('Could not answer the question'), error);
      return false;
    }
  }

  /** Ends the open chat's debug session `sessionId` (the debug card's Terminate); true when it ended. */
  async terminateDebug(sessionId: string): Promise<boolean> {
    const pane = this._pane;
    const chatId = pane.chatId;
    if (!chatId) {
      return false;
    }
    try {
      return (await pane.connection.request('debug/terminate', { chatId, sessionId })).terminated;
    } catch (error) {
      pane.fail(pane.trans.__('Could not end the debug session'), error);
      throw error;
    }
  }

  /**
   * The one way a card's answer travels: for the open chat, and a failure comes back as
   * `state: 'error'` for the card to show beside its buttons rather than as a toast.
   */
  private async _answer(request: CardRequest<void>): Promise<ICardAnswer> {
    const chatId = this._pane.chatId;
    if (!chatId) {
      return { state: 'error', message: this._pane.trans.__('No chat is open.') };
    }
    try {
      return await request(chatId);
    } catch (error) {
      return { state: 'error', message: errorMessage(error) };
    }
  }

  /** {@link _answer} for an Approve that runs work: it needs a model like sending does (`missing` says so). */
  private _answerWithModel(missing: string, request: CardRequest<ModelSettings>): Promise<ICardAnswer> {
    return this._answer(async (chatId) => {
      const model = this._pane.usableModel();
      if (!model) {
        return { state: 'error', message: missing };
      }
      return request(chatId, model);
    });
  }
}
