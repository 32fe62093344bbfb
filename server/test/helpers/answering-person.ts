/**
 * A person who answers every approval card the same way, through the real question broker
 * (the cards are the ones the pane would show): once, always or deny. Other questions (the
 * circuit breaker's) are answered "stop".
 */
import type { ChatEvent, QuestionItem } from '@cellmate/protocol';
import { Presence } from '../../src/questions/presence.js';
import { QuestionBroker } from '../../src/questions/question-broker.js';

export type ApprovalAnswer = 'once' | 'always' | 'deny';

/** The card's option index for each answer (APPROVAL_OPTIONS order). */
const CHOICE: Record<ApprovalAnswer, number> = { once: 0, always: 1, deny: 2 };

/** A broker with a person attached who answers approval cards with `answer`; `cards` lists every card shown. */
export function answeringPerson(answer: ApprovalAnswer): {
  broker: QuestionBroker;
  cards: QuestionItem[];
  approvals(): QuestionItem[];
} {
  const presence = new Presence();
  presence.attach();
  const cards: QuestionItem[] = [];
  // eslint-disable-next-line prefer-const
  let broker: QuestionBroker;
  broker = new QuestionBroker({
    presence,
    sink: {
      publish: (chatId, event: ChatEvent) => {
        if (event.type !== 'item-added' || event.item.kind !== 'question') return;
        const item = event.item;
        cards.push(item);
        queueMicrotask(() =>
          broker.answer(chatId, item.questionId, {
            action: 'answer',
            selected: [item.type === 'approval' ? CHOICE[answer] : 1]
          })
        );
      }
    }
  });
  return { broker, cards, approvals: () => cards.filter((c) => c.type === 'approval') };
}
