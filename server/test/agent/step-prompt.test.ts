// Issue #9 (turn cost): the history is validated once per message, not once per step, and a
// malformed history still ends the turn with a clear error instead of reaching the provider.
import { modelMessageSchema, type ModelMessage } from 'ai';
import type { ChatEvent } from '@cellmate/protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkHistory, InvalidHistoryError } from '../../src/agent/step-prompt.js';
import { runTurn } from '../../src/agent/run-turn.js';
import { ScriptedLanguageModel } from '../../src/providers/scripted.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { tempDir } from '../helpers/temp.js';

const turn = (i: number): ModelMessage[] => [
  { role: 'user', content: [{ type: 'text', text: `run ${i}` }] },
  { role: 'assistant', content: [{ type: 'tool-call', toolCallId: `c${i}`, toolName: 'eval', input: { code: 'pass' } }] },
  { role: 'tool', content: [{ type: 'tool-result', toolCallId: `c${i}`, toolName: 'eval', output: { type: 'text', value: 'ok' } }] },
  { role: 'assistant', content: 'done' }
];

afterEach(() => vi.restoreAllMocks());

describe('step prompt (issue #9)', () => {
  it('validates a message object once, however many steps see it', async () => {
    const spy = vi.spyOn(modelMessageSchema, 'safeParse');
    const history = [...turn(1), ...turn(2)];
    await checkHistory(history);
    expect(spy).toHaveBeenCalledTimes(history.length);
    const next = [...history, ...turn(3)];
    await checkHistory(next);
    expect(spy).toHaveBeenCalledTimes(history.length + 4); // only the four new messages
  });

  it('names the first malformed message', async () => {
    const bad = [...turn(1), { role: 'assistant', content: [{ type: 'tool-call', toolName: 'eval' }] } as unknown as ModelMessage];
    await expect(checkHistory(bad)).rejects.toThrow(InvalidHistoryError);
    await expect(checkHistory(bad)).rejects.toThrow(/malformed at message 5/);
  });

  it('a turn over a malformed history ends with that error and never calls the model', async () => {
    const ws = await tempDir();
    const model = new ScriptedLanguageModel('scripted', { workspace: ws });
    const doStream = vi.spyOn(model, 'doStream');
    const events: ChatEvent[] = [];
    const history = [...turn(1), { role: 'tool', content: 'not parts' } as unknown as ModelMessage, { role: 'user', content: 'hi' } as ModelMessage];
    const result = await runTurn(
      { chatId: 'c', turnId: 't', workspace: ws, model, settings: { provider: 'scripted', model: 'scripted' }, registry: new ToolRegistry([]), system: 'sys', history, signal: new AbortController().signal, maxRetries: 0 },
      { emit: (e) => events.push(e), appendMessages: () => {} }
    );
    expect(result.reason).toBe('error');
    expect(result.error).toMatch(/^The chat history is malformed at message 5: .*Start a new chat/);
    expect(doStream).not.toHaveBeenCalled();
    expect(events.at(-1)).toMatchObject({ type: 'turn-ended', reason: 'error' });
  });
});
