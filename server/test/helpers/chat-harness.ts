import type { Chat, ChatEvent, ChatSummary, ModelSettings } from '@cellmate/protocol';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ChatService } from '../../src/chats/chat-service.js';
import { ChatStore } from '../../src/chats/chat-store.js';
import { silentLogger } from '../../src/config/logger.js';
import { createDefaultRegistry, ToolRegistry } from '../../src/tools/index.js';
import type { SkillLibrary } from '../../src/skills/skill-library.js';

/** An in-process chat service on a real workspace folder, recording every event. */
export interface Harness {
  workspace: string;
  service: ChatService;
  store: ChatStore;
  events: Array<{ chatId: string; event: ChatEvent }>;
  lists: ChatSummary[][];
  /** Sends and waits for the turn to end; returns the chat afterwards. */
  sendAndWait(chatId: string, text: string, model: ModelSettings): Promise<Chat>;
  /** Resolves when an event matching the predicate arrives (or already arrived). */
  waitForEvent(predicate: (event: ChatEvent) => boolean): Promise<ChatEvent>;
  dispose(): Promise<void>;
}

/** Options for {@link createHarness}. */
export interface HarnessOptions {
  env?: NodeJS.ProcessEnv;
  streamIdleTimeoutMs?: number;
  maxSteps?: number;
  registry?: ToolRegistry;
  skills?: SkillLibrary;
}

export async function createHarness(workspace: string, options: HarnessOptions = {}): Promise<Harness> {
  const store = await ChatStore.open({ directory: path.join(workspace, '.cellmate', 'chats'), logger: silentLogger });
  const service = new ChatService({
    workspace,
    store,
    registry: options.registry ?? createDefaultRegistry(),
    logger: silentLogger,
    env: options.env ?? { CELLMATE_CONFIG: path.join(workspace, 'no-config.json') },
    streamIdleTimeoutMs: options.streamIdleTimeoutMs,
    maxSteps: options.maxSteps,
    maxRetries: 0,
    ...(options.skills ? { skills: options.skills } : {})
  });
  const events: Harness['events'] = [];
  const lists: ChatSummary[][] = [];
  const waiters: Array<{ predicate: (e: ChatEvent) => boolean; resolve: (e: ChatEvent) => void }> = [];
  service.onEvent((envelope) => {
    events.push(envelope);
    for (const w of [...waiters]) {
      if (w.predicate(envelope.event)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(envelope.event);
      }
    }
  });
  service.onListChanged((chats) => lists.push(chats));
  return {
    workspace,
    service,
    store,
    events,
    lists,
    async sendAndWait(chatId, text, model) {
      await service.send({ chatId, text, settings: model });
      await service.waitForTurn(chatId);
      return service.get(chatId);
    },
    waitForEvent(predicate) {
      const seen = events.find((e) => predicate(e.event));
      if (seen) return Promise.resolve(seen.event);
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
    dispose: () => service.dispose()
  };
}

/** Writes a scripted-provider script into the workspace and returns the settings to use it. */
export async function scriptSettings(workspace: string, script: unknown, name = 'script.json'): Promise<ModelSettings> {
  await writeFile(path.join(workspace, name), JSON.stringify(script));
  return { provider: 'scripted', model: 'scripted', scriptPath: name };
}
