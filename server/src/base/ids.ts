import { randomUUID } from 'node:crypto';

/** A fresh transcript item id (unique within a chat; globally unique in practice). */
export function newItemId(): string {
  return `i-${randomUUID()}`;
}

/** A fresh turn id. */
export function newTurnId(): string {
  return `t-${randomUUID()}`;
}

/** A fresh chat id; also a safe file name (see `CHAT_ID_PATTERN`). */
export function newChatId(): string {
  return randomUUID();
}

/** A fresh plan id (SPEC MODE-3). */
export function newPlanId(): string {
  return `plan-${randomUUID().slice(0, 8)}`;
}

/** A fresh orchestration id (SPEC MODE-5). */
export function newOrchestrationId(): string {
  return `orch-${randomUUID().slice(0, 8)}`;
}

/** A fresh review id (SPEC MODE-4). */
export function newReviewId(): string {
  return `review-${randomUUID().slice(0, 8)}`;
}
