/**
 * Remembers the last open chat id so a page reload reopens it: in JupyterLab's state
 * database when there is one (per workspace), otherwise in localStorage.
 */
import type { IStateDB } from '@jupyterlab/statedb';

/** Where the pane keeps the last open chat id. */
export interface IChatMemory {
  load(): Promise<string | null>;
  save(chatId: string | null): Promise<void>;
}

const KEY = 'jupyterlab-cellmate:last-chat';

/** Memory in the state database. */
export function stateDBMemory(db: IStateDB): IChatMemory {
  return {
    async load() {
      const value = (await db.fetch(KEY)) as { chatId?: unknown } | undefined;
      return value && typeof value.chatId === 'string' ? value.chatId : null;
    },
    async save(chatId) {
      if (chatId) {
        await db.save(KEY, { chatId });
      } else {
        await db.remove(KEY);
      }
    }
  };
}

/** Memory in localStorage (no state database, e.g. in some embedders). */
export function localStorageMemory(): IChatMemory {
  return {
    async load() {
      try {
        return window.localStorage.getItem(KEY);
      } catch {
        return null;
      }
    },
    async save(chatId) {
      try {
        if (chatId) {
          window.localStorage.setItem(KEY, chatId);
        } else {
          window.localStorage.removeItem(KEY);
        }
      } catch {
        // Storage can be disabled; forgetting the last chat is harmless.
      }
    }
  };
}
