import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChatService } from '../../src/chats/chat-service.js';
import { ChatStore } from '../../src/chats/chat-store.js';
import { silentLogger } from '../../src/config/logger.js';
import { createDefaultRegistry } from '../../src/tools/index.js';
import { scriptSettings } from '../helpers/chat-harness.js';
import { tempDir } from '../helpers/temp.js';

// Issue #15: idle chats leave memory and come back from disk; a send must not work on a dropped copy.

describe('chats dropped from memory', () => {
  it('a turn started while its chat is dropped from memory (during the send’s awaits) uses the reloaded chat', async () => {
    const ws = await tempDir();
    const store = await ChatStore.open({
      directory: path.join(ws, '.cellmate', 'chats'),
      logger: silentLogger,
      maxLoaded: 1
    });
    let other = '';
    const service = new ChatService({
      workspace: ws,
      store,
      registry: createDefaultRegistry(),
      logger: silentLogger,
      env: { CELLMATE_CONFIG: path.join(ws, 'none.json') },
      maxRetries: 0,
      // Runs between the send's first look at the chat and the turn: opening another chat drops this one.
      expandContext: async () => {
        store.get(other);
        return undefined;
      }
    });
    const model = await scriptSettings(ws, {
      turns: [[{ text: 'First answer.', chunkDelayMs: 0 }], [{ text: 'Second answer.', chunkDelayMs: 0 }]]
    });
    const a = service.create('A');
    other = service.create('B').id;
    for (const text of ['one', 'two']) {
      await service.send({ chatId: a.id, text, settings: model });
      await service.waitForTurn(a.id);
    }
    const chat = service.get(a.id);
    expect(chat.items.map((i) => (i.kind === 'user' || i.kind === 'assistant' ? i.text : i.kind))).toEqual([
      'one',
      'First answer.',
      'two',
      'Second answer.'
    ]);
    expect(store.get(a.id)!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    await service.dispose();
  });
});
