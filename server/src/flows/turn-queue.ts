import { ErrorCodes, type ModelSettings } from '@cellmate/protocol';
import type { ChatService } from '../chats/chat-service.js';
import { CellmateError } from '../base/errors.js';

/**
 * Sends `text` as a new turn of the chat once no turn runs there (a person's own turn goes
 * first), and waits for that turn to end; resolves with how it ended (`stop`, `aborted`,
 * `error`, …). `'skipped'` when `stillWanted` says no by then (the mode changed, the flow
 * was disposed). Approved plans and orchestrations run their steps through this (MODE-3/5).
 * `onStarted` hears the turn's id once it runs (until it ends, the chat's running turn is this one).
 * @throws whatever `chats.send` throws besides a lost race for the turn (e.g. unusable model settings)
 */
export async function sendWhenIdle(
  chats: ChatService,
  chatId: string,
  text: string,
  model: ModelSettings,
  origin?: string,
  stillWanted: () => boolean = () => true,
  onStarted?: (turnId: string) => void
): Promise<string> {
  for (;;) {
    await chats.waitForTurn(chatId);
    if (!stillWanted()) return 'skipped';
    try {
      const { turnId } = await chats.send({ chatId, text, settings: model, origin });
      onStarted?.(turnId);
    } catch (error) {
      if (error instanceof CellmateError && error.code === ErrorCodes.TurnRunning) continue; // someone started a turn meanwhile
      throw error;
    }
    const ended = await chats.waitForTurn(chatId);
    return ended?.reason ?? 'stop';
  }
}
