/**
 * "Undo this turn's changes" and "Rewind to here" for a chat: which turns
 * a user message names, the preview, the restore, the transcript's note, and — when the
 * person asks — the conversation cut back to before that message (the way `/rewind` does
 * it in Claude Code: code, conversation, or both).
 */
import type { RewindParams, RewindPreview, RewindResult, TranscriptItem } from '@cellmate/protocol';
import { itemNotFound, turnRunning } from '../base/errors.js';
import { planRewind, restore, rewindMessage, type RewindOptions } from '../checkpoints/rewind.js';

/** What a rewind needs of the chat service. */
export interface RewindChat {
  items(chatId: string): readonly TranscriptItem[];
  running(chatId: string): boolean;
  /** Appends a notice to the transcript. */
  notice(chatId: string, turnId: string, text: string): void;
  /** Removes `itemIds` from the transcript and the model messages from the `userIndex`-th user message on. */
  cut(chatId: string, itemIds: string[], userIndex: number): boolean;
}

/**
 * The turns a rewind covers: the message's turn alone, or every turn from it on.
 * @throws CellmateError ItemNotFound when `itemId` is not a user message of the chat
 */
export function turnsOf(items: readonly TranscriptItem[], params: RewindParams): { turns: string[]; at: number } {
  const at = items.findIndex((i) => i.id === params.itemId && i.kind === 'user');
  if (at < 0) throw itemNotFound(params.chatId, params.itemId);
  const turn = items[at]!.turnId;
  if (params.scope === 'turn') return { turns: [turn], at };
  const turns: string[] = [];
  for (const i of items.slice(at)) if (!turns.includes(i.turnId)) turns.push(i.turnId);
  return { turns, at };
}

function checkIdle(chat: RewindChat, chatId: string): void {
  if (chat.running(chatId)) throw turnRunning(chatId);
}

/** The preview the pane shows before anything is written. */
export async function previewRewind(
  chat: RewindChat,
  options: RewindOptions,
  params: RewindParams
): Promise<RewindPreview> {
  checkIdle(chat, params.chatId);
  const { turns } = turnsOf(chat.items(params.chatId), params);
  return (await planRewind(params.chatId, turns, options)).preview;
}

/** Restores, notes it in the transcript, forgets the rewound checkpoints, and cuts the conversation when asked. */
export async function rewindChat(
  chat: RewindChat,
  options: RewindOptions,
  params: RewindParams & { overwrite?: boolean; conversation?: boolean }
): Promise<RewindResult> {
  checkIdle(chat, params.chatId);
  const items = chat.items(params.chatId);
  const { turns, at } = turnsOf(items, params);
  const plan = await planRewind(params.chatId, turns, options);
  const outcome = await restore(plan, { ...options, overwrite: params.overwrite ?? false });
  // Rewound turns are done with; a conflict kept (not overwritten) keeps its checkpoint.
  if (outcome.skipped.length === 0 && outcome.failed.length === 0)
    options.store.forget(
      params.chatId,
      plan.turns.map((t) => t.turnId)
    );
  let message = rewindMessage(outcome, plan.preview.kernelNames);
  let text: string | undefined;
  if (params.conversation && params.scope === 'from') {
    const userIndex = items.slice(0, at).filter((i) => i.kind === 'user').length;
    const user = items[at]!;
    if (
      chat.cut(
        params.chatId,
        items.slice(at).map((i) => i.id),
        userIndex
      )
    ) {
      text = user.kind === 'user' ? user.text : undefined;
      message = `Rewound the conversation to before "${(text ?? '').slice(0, 80)}". ${message}`;
    } else {
      message += ' The conversation could not be cut there; it is kept.';
    }
  }
  const last = chat.items(params.chatId).at(-1);
  chat.notice(params.chatId, last?.turnId ?? items[at]!.turnId, message);
  return {
    restored: outcome.restored,
    skipped: [...outcome.skipped, ...outcome.failed],
    message,
    ...(text !== undefined ? { text } : {})
  };
}
