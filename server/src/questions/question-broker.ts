import {
  APPROVAL_OPTIONS,
  type ChatEvent,
  type QuestionAnswer,
  type QuestionItem,
  type QuestionState
} from '@cellmate/protocol';
import { newItemId } from '../base/ids.js';
import type { ApprovalDecision, ApprovalPort, ApprovalRequest } from '../ports/gate-ports.js';
import type { Presence } from './presence.js';

/**
 * Default waits (HARN-9), conservative: a question or approval nobody answers expires
 * after 10 minutes (the turn then continues with an error result saying so). Override
 * with `CELLMATE_QUESTION_TIMEOUT_MS` / `CELLMATE_APPROVAL_TIMEOUT_MS`.
 */
export const DEFAULT_QUESTION_TIMEOUT_MS = 10 * 60_000;
export const DEFAULT_APPROVAL_TIMEOUT_MS = 10 * 60_000;

/** Where question cards go: the chat's transcript (ChatService.publish). */
export interface QuestionSink {
  publish(chatId: string, event: ChatEvent): void;
}

/** A question to render (ASK-1): the card's own fields, plus where and how long. */
export type QuestionRequest = Pick<
  QuestionItem,
  'type' | 'question' | 'context' | 'options' | 'allowFreeText' | 'multiSelect' | 'approval'
> & {
  chatId: string;
  turnId?: string;
  timeoutMs?: number;
};

/**
 * How a question ended. `unavailable`: nobody was connected, nothing was shown; `cancelled`
 * without an item: the turn was already stopped, nothing was shown.
 */
export type QuestionOutcome =
  | { state: 'answered'; answer: Extract<QuestionAnswer, { action: 'answer' }>; item: QuestionItem }
  | { state: 'skipped' | 'expired' | 'cancelled'; item: QuestionItem }
  | { state: 'unavailable' }
  | { state: 'cancelled'; item?: undefined };

/** Why an answer was refused. */
export class QuestionNotPendingError extends Error {}

interface Pending {
  item: QuestionItem;
  settle: (state: Exclude<QuestionState, 'pending'>, answer?: QuestionAnswer) => void;
}

export interface QuestionBrokerOptions {
  sink: QuestionSink;
  presence: Presence;
  questionTimeoutMs?: number;
  approvalTimeoutMs?: number;
}

/**
 * Question cards (ASK-2, ASK-2a): renders each as a `question` transcript item, blocks
 * until it is answered, skipped, expired or the turn is stopped, and updates the item.
 * Also the registry's approval port (approval cards) and circuit-breaker question.
 */
export class QuestionBroker implements ApprovalPort {
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly options: QuestionBrokerOptions) {}

  /** True when a person could answer now. */
  get available(): boolean {
    return this.options.presence.connected;
  }

  /** Shows a card and waits. Never throws; aborting `signal` cancels the card. */
  ask(request: QuestionRequest, signal: AbortSignal): Promise<QuestionOutcome> {
    // A turn stopped before its card could show is cancelled, not "nobody there": the gate audits the difference.
    if (signal.aborted) return Promise.resolve({ state: 'cancelled' });
    if (!this.available) return Promise.resolve({ state: 'unavailable' });
    const timeoutMs =
      request.timeoutMs ??
      (request.type === 'approval'
        ? (this.options.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS)
        : (this.options.questionTimeoutMs ?? DEFAULT_QUESTION_TIMEOUT_MS));
    const questionId = newItemId();
    const item: QuestionItem = {
      kind: 'question',
      id: questionId,
      questionId,
      time: new Date().toISOString(),
      turnId: request.turnId ?? '',
      type: request.type,
      question: request.question,
      ...(request.context ? { context: request.context } : {}),
      options: request.options,
      allowFreeText: request.allowFreeText,
      multiSelect: request.multiSelect,
      ...(request.approval ? { approval: request.approval } : {}),
      state: 'pending',
      expiresAt: new Date(Date.now() + timeoutMs).toISOString()
    };
    this.options.sink.publish(request.chatId, { type: 'item-added', item });
    return new Promise<QuestionOutcome>((resolve) => {
      const timer = setTimeout(() => settle('expired'), timeoutMs);
      const onAbort = (): void => settle('cancelled');
      signal.addEventListener('abort', onAbort, { once: true });
      const settle = (state: Exclude<QuestionState, 'pending'>, answer?: QuestionAnswer): void => {
        if (!this.pending.has(key(request.chatId, questionId))) return;
        this.pending.delete(key(request.chatId, questionId));
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        const done: QuestionItem = { ...item, state, ...(answer ? { answer } : {}) };
        this.options.sink.publish(request.chatId, { type: 'item-updated', item: done });
        if (state === 'answered' && answer?.action === 'answer') resolve({ state, answer, item: done });
        else resolve({ state: state === 'answered' ? 'skipped' : state, item: done } as QuestionOutcome);
      };
      this.pending.set(key(request.chatId, questionId), { item, settle });
    });
  }

  /**
   * Applies a person's answer (`chat/answer`).
   * @throws QuestionNotPendingError when the question is unknown or already settled
   * @throws RangeError when the answer does not fit the question
   */
  answer(chatId: string, questionId: string, answer: QuestionAnswer): QuestionState {
    const entry = this.pending.get(key(chatId, questionId));
    if (!entry)
      throw new QuestionNotPendingError(
        `Question ${questionId} is not pending in chat ${chatId} (answered, expired or unknown).`
      );
    if (answer.action === 'skip') {
      entry.settle('skipped', answer);
      return 'skipped';
    }
    const { item } = entry;
    const selected = [...new Set(answer.selected)].sort((a, b) => a - b);
    if (selected.some((i) => !Number.isInteger(i) || i < 0 || i >= item.options.length)) {
      throw new RangeError(`Option index out of range: the question has ${item.options.length} options.`);
    }
    if (!item.multiSelect && selected.length > 1) throw new RangeError('This question takes one option.');
    const text = answer.text?.trim();
    if (selected.length === 0 && !(item.allowFreeText && text))
      throw new RangeError('Pick an option or write an answer.');
    entry.settle('answered', { action: 'answer', selected, ...(text ? { text } : {}) });
    return 'answered';
  }

  /** Pending questions of a chat (for tests and a reconnecting pane). */
  pendingIn(chatId: string): QuestionItem[] {
    return [...this.pending.entries()].filter(([k]) => k.startsWith(`${chatId}\u0000`)).map(([, p]) => p.item);
  }

  async requestApproval(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision> {
    const agent =
      request.actor === 'kernel'
        ? 'Code in a kernel wants'
        : request.actor === 'user'
          ? 'You asked'
          : 'The agent wants';
    // A worker's call names the worker: the person sees who runs beside the chat.
    const who = request.worker
      ? `Worker "${request.worker.label}" (${request.worker.id}): ${request.actor === 'kernel' ? 'code in its kernel wants' : 'it wants'}`
      : agent;
    const outcome = await this.ask(
      {
        chatId: request.chatId,
        turnId: request.turnId,
        type: 'approval',
        question: `${who} to run ${request.tool}. Allow it?`,
        context: `${request.subject} — ${request.reason}`,
        options: APPROVAL_OPTIONS.map((o) => ({ ...o })),
        allowFreeText: true,
        multiSelect: false,
        approval: {
          tool: request.tool,
          args: request.args,
          pattern: request.pattern,
          ...(request.allows ? { allows: request.allows } : {}),
          ...(request.preview ? { preview: request.preview } : {}),
          reason: request.reason,
          ...(request.worker ? { worker: request.worker } : {})
        }
      },
      signal
    );
    switch (outcome.state) {
      case 'unavailable':
        return { decision: 'unavailable' };
      case 'expired':
        return { decision: 'expired' };
      case 'cancelled':
        return { decision: 'cancelled' };
      case 'skipped':
        return { decision: 'deny' };
      case 'answered': {
        const choice = outcome.answer.selected[0];
        if (choice === 0) return { decision: 'once' };
        if (choice === 1) return { decision: 'always' };
        return { decision: 'deny', ...(outcome.answer.text ? { reason: outcome.answer.text } : {}) };
      }
    }
  }

  async confirmContinue(
    request: { chatId: string; turnId?: string; denials: number; last: string },
    signal: AbortSignal
  ): Promise<boolean> {
    const outcome = await this.ask(
      {
        chatId: request.chatId,
        turnId: request.turnId,
        type: 'ask',
        question: `${request.denials} tool calls in a row were refused or denied. Let the agent continue this turn?`,
        context: request.last,
        options: [
          { label: 'Continue', description: 'the agent goes on and may try something else' },
          { label: 'Stop the turn' }
        ],
        allowFreeText: false,
        multiSelect: false
      },
      signal
    );
    return outcome.state === 'answered' && outcome.answer.selected[0] === 0;
  }
}

function key(chatId: string, questionId: string): string {
  return `${chatId}\u0000${questionId}`;
}
