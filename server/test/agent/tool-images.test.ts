/**
 * Images in tool results (SPEC EVAL-3): handed to models that accept them as media parts
 * next to the text; other models get the text only (which carries a one-line note).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { modelAcceptsImages } from '../../src/providers/capabilities.js';
import { defineTool } from '../../src/gate/define-tool.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { createHarness, scriptSettings } from '../helpers/chat-harness.js';
import { tempDir } from '../helpers/temp.js';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).toString('base64');
const figure = defineTool({
  name: 'figure',
  tier: 'read',
  description: 'returns a figure',
  parameters: z.object({}),
  examples: [],
  async execute() {
    return {
      title: 'figure',
      output: '[image 1: image/png, shown to the user in the transcript]',
      attachments: [{ type: 'image', mediaType: 'image/png', data: PNG }],
      display: { kind: 'eval', outputs: [{ 'image/png': PNG }] }
    };
  }
});

describe('images in tool results (EVAL-3)', () => {
  it.each([
    [{ provider: 'openai' }, true],
    [{ provider: 'anthropic' }, true],
    [{ provider: 'scripted' }, true],
    [{ provider: 'openai-compatible' }, false],
    [{ provider: 'openai-compatible', acceptsImages: true }, true],
    [{ provider: 'openai', acceptsImages: false }, false]
  ] as const)('modelAcceptsImages(%j) = %s', (settings, expected) => {
    expect(modelAcceptsImages(settings)).toBe(expected);
  });

  it.each([true, false])(
    'acceptsImages=%s: the model gets media parts only when it accepts images; the card always gets the display',
    async (accepts) => {
      const ws = await tempDir();
      const log = path.join(ws, 'prompts.jsonl');
      const model = await scriptSettings(ws, {
        steps: [
          { toolCalls: [{ toolName: 'figure', input: {} }], chunkDelayMs: 0 },
          { text: 'ok', chunkDelayMs: 0 }
        ]
      });
      const h = await createHarness(ws, {
        registry: new ToolRegistry([figure]),
        env: { CELLMATE_SCRIPT_LOG: log, CELLMATE_CONFIG: path.join(ws, 'none.json') }
      });
      const chat = h.service.create();
      await h.service.send({ chatId: chat.id, text: 'plot it', settings: { ...model, acceptsImages: accepts } });
      await h.service.waitForTurn(chat.id);
      const card = h.service.get(chat.id).items.find((i) => i.kind === 'tool');
      expect(card).toMatchObject({ status: 'ok', display: { kind: 'eval', outputs: [{ 'image/png': PNG }] } });
      const prompts = (await readFile(log, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const tool = JSON.stringify(prompts[1].prompt.find((m: { role: string }) => m.role === 'tool'));
      expect(tool).toContain('shown to the user in the transcript');
      expect(tool.includes(PNG)).toBe(accepts);
      await h.dispose();
    }
  );
});
