// Issue #9 (turn cost): the history is validated once per message, not once per step, and a
// malformed history still ends the turn with a clear error instead of reaching the provider.
import {
  assistantModelMessageSchema,
  modelMessageSchema,
  systemModelMessageSchema,
  toolModelMessageSchema,
  userModelMessageSchema,
  type ModelMessage
} from 'ai';
import type { ChatEvent } from '@cellmate/protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { convertToLanguageModelPrompt } from 'ai/internal';
import { checkHistory, InvalidHistoryError, stepPrompt } from '../../src/agent/step-prompt.js';
import { runTurn } from '../../src/agent/run-turn.js';
import { ScriptedLanguageModel } from '../../src/providers/scripted.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { tempDir } from '../helpers/temp.js';

const turn = (i: number): ModelMessage[] => [
  { role: 'user', content: [{ type: 'text', text: `run ${i}` }] },
  {
    role: 'assistant',
    content: [{ type: 'tool-call', toolCallId: `c${i}`, toolName: 'eval', input: { code: 'pass' } }]
  },
  {
    role: 'tool',
    content: [{ type: 'tool-result', toolCallId: `c${i}`, toolName: 'eval', output: { type: 'text', value: 'ok' } }]
  },
  { role: 'assistant', content: 'done' }
];

afterEach(() => vi.restoreAllMocks());

describe('step prompt (issue #9)', () => {
  it('validates a message object once, however many steps see it', async () => {
    const spies = [
      systemModelMessageSchema,
      userModelMessageSchema,
      assistantModelMessageSchema,
      toolModelMessageSchema
    ].map((s) => vi.spyOn(s, 'safeParse'));
    const calls = () => spies.reduce((n, s) => n + s.mock.calls.length, 0);
    const history = [...turn(1), ...turn(2)];
    await checkHistory(history);
    expect(calls()).toBe(history.length);
    const next = [...history, ...turn(3)];
    await checkHistory(next);
    expect(calls()).toBe(history.length + 4); // only the four new messages
  });

  it("the role's own schema accepts exactly what the ModelMessage union accepts", async () => {
    const cases: unknown[] = [
      ...turn(1),
      { role: 'system', content: 'be brief' },
      { role: 'system', content: [{ type: 'text', text: 'parts are not allowed here' }] },
      { role: 'user', content: [{ type: 'image', image: 'aGk=', mediaType: 'image/png' }] },
      { role: 'user', content: [{ type: 'tool-call', toolCallId: 'x', toolName: 'eval', input: {} }] },
      { role: 'assistant', content: [{ type: 'tool-call', toolName: 'eval' }] },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'hm' },
          { type: 'text', text: 'ok' }
        ]
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c', toolName: 'eval', output: { type: 'error-text', value: 'boom' } }
        ]
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c',
            toolName: 'eval',
            output: {
              type: 'content',
              value: [
                { type: 'text', text: 'x' },
                { type: 'image-data', data: 'aGk=', mediaType: 'image/png' }
              ]
            }
          }
        ]
      },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c', toolName: 'eval', output: { type: 'text' } }] },
      { role: 'tool', content: 'not parts' },
      { role: 'user' },
      { content: 'no role' },
      { role: 'robot', content: 'hi' },
      { role: 'user', content: 'hi', providerOptions: { cellmate: { nudge: true } } }
    ];
    for (const m of cases) {
      const union = modelMessageSchema.safeParse(m).success;
      const ours = await checkHistory([m as ModelMessage]).then(
        () => true,
        (e: unknown) => {
          expect(e).toBeInstanceOf(InvalidHistoryError);
          return false;
        }
      );
      expect(ours, JSON.stringify(m)).toBe(union);
    }
  });

  it('a message with no known role is named with the roles there are', async () => {
    await expect(
      checkHistory([...turn(1), { role: 'robot', content: 'hi' } as unknown as ModelMessage])
    ).rejects.toThrow(/malformed at message 5: unknown role "robot" \(expected system, user, assistant or tool\)/);
  });

  it('names the first malformed message', async () => {
    const bad = [
      ...turn(1),
      { role: 'assistant', content: [{ type: 'tool-call', toolName: 'eval' }] } as unknown as ModelMessage
    ];
    await expect(checkHistory(bad)).rejects.toThrow(InvalidHistoryError);
    await expect(checkHistory(bad)).rejects.toThrow(/malformed at message 5/);
  });

  it("within a turn only the new messages are converted, and the prompt is the converter's own for the whole history", async () => {
    const ws = await tempDir();
    const model = new ScriptedLanguageModel('scripted', { workspace: ws });
    const full = async (history: ModelMessage[]) =>
      convertToLanguageModelPrompt({
        prompt: { system: 'sys', messages: history },
        supportedUrls: {},
        download: undefined
      });
    const signal = new AbortController().signal;
    const history: ModelMessage[] = [...turn(1), { role: 'user', content: 'go on' }];
    const first = await stepPrompt(model, 'sys', history, signal);
    expect(first.prompt).toEqual(await full(history));
    // A step's output: a call, then its result (with an image), then text.
    history.push(
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'looking' },
          { type: 'tool-call', toolCallId: 'x1', toolName: 'eval', input: { code: 'plot()' } }
        ]
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'x1',
            toolName: 'eval',
            output: {
              type: 'content',
              value: [
                { type: 'text', text: 'ok' },
                { type: 'image-data', data: 'aGk=', mediaType: 'image/png' }
              ]
            }
          }
        ]
      }
    );
    const second = await stepPrompt(model, 'sys', history, signal);
    expect(second.prompt).toEqual(await full(history));
    // The earlier messages' conversion is reused as is (the same objects), not redone.
    expect(second.prompt[1]).toBe(first.prompt[1]);
    expect(second.prompt[first.prompt.length - 1]).toBe(first.prompt[first.prompt.length - 1]);
    // Two tool messages in a row are merged by the converter: a tail starting with a tool
    // message is converted with everything before it.
    history.push({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'x0', toolName: 'eval', output: { type: 'text', value: 'late' } }]
    });
    const third = await stepPrompt(model, 'sys', history, signal);
    expect(third.prompt).toEqual(await full(history));
    // A history that changed before the tail (a retry cut it) is converted whole again.
    const cut = history.slice(0, 4);
    cut.push({ role: 'user', content: 'again' });
    expect((await stepPrompt(model, 'sys', cut, signal)).prompt).toEqual(await full(cut));
    // Another turn's model converts from scratch.
    const other = new ScriptedLanguageModel('scripted', { workspace: ws });
    const fresh = await stepPrompt(other, 'sys', history, signal);
    expect(fresh.prompt).toEqual(await full(history));
    expect(fresh.prompt[1]).not.toBe(first.prompt[1]);
  });

  it('a turn over a malformed history ends with that error and never calls the model', async () => {
    const ws = await tempDir();
    const model = new ScriptedLanguageModel('scripted', { workspace: ws });
    const doStream = vi.spyOn(model, 'doStream');
    const events: ChatEvent[] = [];
    const history = [
      ...turn(1),
      { role: 'tool', content: 'not parts' } as unknown as ModelMessage,
      { role: 'user', content: 'hi' } as ModelMessage
    ];
    const result = await runTurn(
      {
        chatId: 'c',
        turnId: 't',
        workspace: ws,
        model,
        settings: { provider: 'scripted', model: 'scripted' },
        registry: new ToolRegistry([]),
        system: 'sys',
        history,
        signal: new AbortController().signal,
        maxRetries: 0
      },
      { emit: (e) => events.push(e), appendMessages: () => {} }
    );
    expect(result.reason).toBe('error');
    expect(result.error).toMatch(/^The chat history is malformed at message 5: .*Start a new chat/);
    expect(doStream).not.toHaveBeenCalled();
    expect(events.at(-1)).toMatchObject({ type: 'turn-ended', reason: 'error' });
  });
});
