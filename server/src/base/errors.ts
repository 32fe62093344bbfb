import { ErrorCodes } from '@cellmate/protocol';

/** The protocol's application error codes (`ErrorCodes` in `@cellmate/protocol`). */
export type CellmateErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/**
 * An error that crosses the JSON-RPC boundary with a protocol error code and a message
 * the user can act on. Anything else thrown by a handler becomes an internal error.
 */
export class CellmateError extends Error {
  constructor(
    readonly code: CellmateErrorCode,
    message: string,
    options?: { cause?: unknown }
  ) {
    super(message, options);
    this.name = 'CellmateError';
  }
}

/** Unknown chat id. */
export function chatNotFound(chatId: string): CellmateError {
  return new CellmateError(
    ErrorCodes.ChatNotFound,
    `Chat "${chatId}" does not exist (it may have been deleted by another client). ` +
      'Call chat/list to get the current chats, or chat/create to start a new one.'
  );
}

/** `chat/items` with a `before` cursor that is not an item of the chat. */
export function itemNotFound(chatId: string, itemId: string): CellmateError {
  return new CellmateError(
    ErrorCodes.ItemNotFound,
    `Chat "${chatId}" has no item "${itemId}" (it may have been removed by a retry or edit). Call chat/get for the latest items and page back from its first one.`
  );
}

/** A turn already runs in this chat. */
export function turnRunning(chatId: string): CellmateError {
  return new CellmateError(
    ErrorCodes.TurnRunning,
    `A turn is already running in chat "${chatId}". Wait for it to end or call chat/abort first.`
  );
}

/** `chat/retry` / `chat/edit` in a chat without a user message. */
export function nothingToRetry(chatId: string): CellmateError {
  return new CellmateError(
    ErrorCodes.NothingToRetry,
    `Chat "${chatId}" has no message to run again. Send one with chat/send.`
  );
}

/** The model settings cannot be used. */
export function providerUnavailable(message: string, cause?: unknown): CellmateError {
  return new CellmateError(ErrorCodes.ProviderUnavailable, message, { cause });
}

/** Returns `error.message` for Errors and a readable string for anything else. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
