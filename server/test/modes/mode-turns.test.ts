/**
 * A chat's mode travels in its turns (SPEC MODE-1/2, issue #16 item 1): stored with the
 * chat (journal), read once when a turn starts (a switch applies from the next turn), and
 * every projection of the turn — declared tools, system prompt, each call's context — comes
 * from that mode's one profile. Real chat service and store; scripted model.
 */
import type { ToolCallItem } from '@cellmate/protocol';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ChatStore } from '../../src/chats/chat-store.js';
import { silentLogger } from '../../src/config/logger.js';
import { profileOf } from '../../src/modes/profiles.js';
import { turnSurface } from '../../src/modes/turn-surface.js';
import type { CapabilityProfile } from '../../src/ports/vocabulary.js';
import { defineTool, type ToolDefinition } from '../../src/gate/define-tool.js';
import { builtinTools } from '../../src/tools/index.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { checkParams } from '../../src/transport/params.js';
import { createHarness, scriptSettings } from '../helpers/chat-harness.js';
import { tempDir } from '../helpers/temp.js';

/** A read tool that records the profile each call's context carried. */
function profileSpy(seen: Array<CapabilityProfile | undefined>): ToolDefinition {
  return defineTool({
    name: 'whoami',
    tier: 'read',
    description: 'Records the surface.',
    parameters: z.object({}),
    examples: [],
    execute: async (_args, ctx) => {
      seen.push(ctx.profile);
      return { title: 'ok', output: ctx.profile?.name ?? '(none)' };
    }
  });
}

const logLines = async (file: string) =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map(
      (l) =>
        JSON.parse(l) as {
          turn: number;
          step: number;
          tools: string[];
          prompt: Array<{ role: string; content: unknown }>;
        }
    );

describe("a chat's mode in its turns (MODE-1/2)", () => {
  it("declared tools, the system prompt and every call's context come from the chat's mode; a switch applies from the next turn", async () => {
    const ws = await tempDir();
    const seen: Array<CapabilityProfile | undefined> = [];
    const registry = new ToolRegistry([...builtinTools(), profileSpy(seen)]);
    const log = path.join(ws, 'prompts.jsonl');
    const model = await scriptSettings(ws, {
      turns: [
        // Turn 1 (plan): the first step is slow, so the switch to Agent lands while it runs.
        [
          { text: 'Planning, slowly.', toolCalls: [{ toolName: 'whoami', input: {} }], chunkDelayMs: 150 },
          { toolCalls: [{ toolName: 'write', input: { path: 'x.txt', content: 'x' } }], chunkDelayMs: 0 },
          { text: 'Done.', chunkDelayMs: 0 }
        ],
        // Turn 2 (agent, after the switch): the same write runs.
        [
          {
            toolCalls: [
              { toolName: 'whoami', input: {} },
              { toolName: 'write', input: { path: 'x.txt', content: 'x' } }
            ],
            chunkDelayMs: 0
          },
          { text: 'Written.', chunkDelayMs: 0 }
        ]
      ]
    });
    const h = await createHarness(ws, {
      registry,
      env: { CELLMATE_SCRIPT_LOG: log, CELLMATE_CONFIG: path.join(ws, 'none.json') }
    });
    const chat = h.service.create();
    expect(chat.mode).toBe('agent');
    expect(h.service.setMode(chat.id, 'plan')).toMatchObject({ id: chat.id, mode: 'plan' });
    expect(h.events.map((e) => e.event)).toContainEqual({ type: 'mode-changed', mode: 'plan' });

    await h.service.send({ chatId: chat.id, text: 'plan it', settings: model });
    await h.waitForEvent((e) => e.type === 'text-delta');
    h.service.setMode(chat.id, 'agent'); // mid-turn: this turn keeps Plan
    await h.service.waitForTurn(chat.id);
    const first = h.service.get(chat.id);
    const refusedWrite = first.items.find((i): i is ToolCallItem => i.kind === 'tool' && i.name === 'write')!;
    expect(refusedWrite.output).toBe(
      'Refused: write is a write-tier tool and the "plan" surface allows only read tools. It is not available here; do not retry it.'
    );
    expect(existsSync(path.join(ws, 'x.txt'))).toBe(false);
    expect(first.mode).toBe('agent');

    await h.sendAndWait(chat.id, 'now do it', model);
    expect(existsSync(path.join(ws, 'x.txt'))).toBe(true);
    expect(seen.map((p) => p?.name)).toEqual(['plan', 'agent']);
    expect(seen[0]).toBe(profileOf('plan')); // the very object, not a copy rebuilt elsewhere

    const prompts = await logLines(log);
    const plan = turnSurface(registry, 'plan');
    const agent = turnSurface(registry, 'agent');
    const byTurn = (t: number) => prompts.filter((p) => p.turn === t);
    for (const p of byTurn(0)) {
      expect(p.tools.sort()).toEqual(plan.declared.map((t) => t.name).sort());
      expect(String(p.prompt[0]!.content)).toContain(plan.promptBlock);
    }
    for (const p of byTurn(1)) {
      expect(p.tools.sort()).toEqual(agent.declared.map((t) => t.name).sort());
      expect(String(p.prompt[0]!.content)).toContain(agent.promptBlock);
    }
    expect(plan.declared.map((t) => t.name)).not.toContain('write');
    expect(agent.declared.map((t) => t.name)).toContain('write');
    await h.dispose();
  }, 30_000);

  it('the mode is stored with the chat: it survives the companion reloading the journal', async () => {
    const ws = await tempDir();
    const h = await createHarness(ws);
    const chat = h.service.create();
    h.service.setMode(chat.id, 'plan');
    await h.dispose();
    const store = await ChatStore.open({ directory: path.join(ws, '.cellmate', 'chats'), logger: silentLogger });
    expect(store.get(chat.id)?.chat.mode).toBe('plan');
    expect(store.summaries().find((s) => s.id === chat.id)?.mode).toBe('plan');
    await store.dispose();
  });

  it("MODE-8: chat/set-mode takes only the modes a person may pick (and `chat`, the Agent mode's earlier name); review is the system's", () => {
    expect(checkParams('chat/set-mode', { chatId: 'c', mode: 'plan' })).toEqual({ chatId: 'c', mode: 'plan' });
    // MODE-8: Agent, Plan, Orchestrate.
    expect(checkParams('chat/set-mode', { chatId: 'c', mode: 'orchestrate' })).toEqual({
      chatId: 'c',
      mode: 'orchestrate'
    });
    expect(checkParams('chat/set-mode', { chatId: 'c', mode: 'agent' })).toEqual({ chatId: 'c', mode: 'agent' });
    expect(checkParams('chat/set-mode', { chatId: 'c', mode: 'chat' })).toEqual({ chatId: 'c', mode: 'agent' }); // MODE-1: the Agent mode's earlier name
    expect(() => checkParams('chat/set-mode', { chatId: 'c', mode: 'review' })).toThrow(
      /mode.*must be one of agent, plan, orchestrate \(review is started by the system\)/
    );
    expect(() => checkParams('chat/set-mode', { chatId: 'c', mode: 'nope' })).toThrow(
      /must be one of agent, plan, orchestrate/
    );
  });
});
