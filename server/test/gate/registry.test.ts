import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/gate/define-tool.js';
import { FatalToolError, ToolInputError } from '../../src/base/tool-errors.js';
import { createDefaultRegistry } from '../../src/tools/index.js';
import { ToolRegistry } from '../../src/gate/registry.js';
import { tempDir } from '../helpers/temp.js';
import { declarations } from '../../src/gate/catalog.js';

const ctx = (workspace: string, signal = new AbortController().signal) => ({
  workspace,
  signal,
  actor: 'model' as const,
  chatId: 'c'
});

const sleepy = defineTool({
  name: 'sleepy',
  tier: 'exec',
  description: 'Sleeps.',
  parameters: z.object({ ms: z.number() }),
  examples: [],
  timeoutMs: 50,
  execute: (args, c) =>
    new Promise((resolve, reject) => {
      const t = setTimeout(() => resolve({ title: 'slept', output: 'done' }), args.ms);
      c.signal.addEventListener('abort', () => {
        clearTimeout(t);
        reject(new Error('stopped'));
      });
    })
});

const failing = defineTool({
  name: 'failing',
  tier: 'write',
  description: 'Fails.',
  parameters: z.object({ kind: z.enum(['input', 'fatal', 'bug']) }),
  examples: [],
  async execute(args) {
    if (args.kind === 'input') throw new ToolInputError('Use another file.');
    if (args.kind === 'fatal') throw new FatalToolError('disk gone', 'EIO');
    throw new TypeError('x is undefined');
  }
});

describe('ToolRegistry.call', () => {
  it.each([
    [
      { path: 'a.md', offset: -3 },
      'Invalid arguments for read: "offset" must be a positive integer (the 1-based line to start at) (got -3). Rewrite the arguments and call read again.'
    ],
    [
      { path: 'a.md', offset: 1.5 },
      'Invalid arguments for read: "offset" must be a positive integer (the 1-based line to start at) (got 1.5). Rewrite the arguments and call read again.'
    ],
    [
      { path: 'a.md', limit: '10' },
      'Invalid arguments for read: "limit" must be a positive integer (how many lines to return) (got "10"). Rewrite the arguments and call read again.'
    ],
    [
      {},
      'Invalid arguments for read: "path" is required and must be a string path relative to the workspace. Rewrite the arguments and call read again.'
    ],
    [
      { path: 'a.md', file: 'b' },
      'Invalid arguments for read: unknown argument "file". Rewrite the arguments and call read again.'
    ],
    [
      'not an object',
      'Invalid arguments for read: the arguments must be an object (got "not an object"). Rewrite the arguments and call read again.'
    ]
  ])('validation error for %j', async (args, message) => {
    const ws = await tempDir();
    const result = await createDefaultRegistry().call('read', args, ctx(ws));
    expect(result).toMatchObject({ ok: false, status: 'error', output: message });
  });

  it('lists the available tools for an unknown tool', async () => {
    const registry = new ToolRegistry([...createDefaultRegistry().list(), sleepy]);
    const result = await registry.call('write_file', {}, ctx('/'));
    expect(result.output).toBe('Unknown tool "write_file". Available tools: read, sleepy. Call one of these instead.');
  });

  it('times a call out and tells the model', async () => {
    const result = await new ToolRegistry([sleepy]).call('sleepy', { ms: 10_000 }, ctx('/'));
    expect(result).toMatchObject({
      ok: false,
      status: 'error',
      output: 'sleepy timed out after 50 ms and was stopped. Try a smaller request.'
    });
  });

  it('reports an abort by the user as aborted', async () => {
    const controller = new AbortController();
    const pending = new ToolRegistry([sleepy]).call('sleepy', { ms: 10_000 }, ctx('/', controller.signal));
    controller.abort();
    expect(await pending).toMatchObject({ ok: false, status: 'aborted' });
  });

  it('measures duration on success', async () => {
    const result = await new ToolRegistry([sleepy]).call('sleepy', { ms: 1 }, ctx('/'));
    expect(result).toMatchObject({ ok: true, title: 'slept', output: 'done' });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('classifies errors: respond-to-model vs fatal', async () => {
    const registry = new ToolRegistry([failing]);
    expect(await registry.call('failing', { kind: 'input' }, ctx('/'))).toMatchObject({
      ok: false,
      output: 'Use another file.'
    });
    expect(await registry.call('failing', { kind: 'bug' }, ctx('/'))).toMatchObject({
      ok: false,
      output: 'failing failed: x is undefined'
    });
    await expect(registry.call('failing', { kind: 'fatal' }, ctx('/'))).rejects.toBeInstanceOf(FatalToolError);
  });

  it('filters tools by surface tier', () => {
    const registry = new ToolRegistry([...createDefaultRegistry().list(), sleepy, failing]);
    expect(registry.list({ maxTier: 'read' }).map((t) => t.name)).toEqual(['read']);
    expect(registry.list({ maxTier: 'write' }).map((t) => t.name)).toEqual(['failing', 'read']);
    expect(declarations(registry, { maxTier: 'read' }).map((d) => d.name)).toEqual(['read']);
  });

  it('reports every call to observers (the audit seam)', async () => {
    const registry = new ToolRegistry([failing]);
    const seen: unknown[] = [];
    registry.onDidCall((record) => seen.push({ ...record, durationMs: typeof record.durationMs }));
    await registry.call('failing', { kind: 'input' }, ctx('/'));
    await registry.call('missing', {}, ctx('/'));
    await registry.call('failing', { kind: 'fatal' }, ctx('/')).catch(() => undefined);
    expect(seen).toEqual([
      { name: 'failing', actor: 'model', chatId: 'c', status: 'error', durationMs: 'number', decision: 'unchecked' },
      { name: 'missing', actor: 'model', chatId: 'c', status: 'error', durationMs: 'number', decision: 'unknown-tool' },
      { name: 'failing', actor: 'model', chatId: 'c', status: 'fatal', durationMs: 'number', decision: 'unchecked' }
    ]);
    registry.dispose();
  });

  it('rejects a duplicate registration', () => {
    expect(() => new ToolRegistry([sleepy, sleepy])).toThrow(/already registered/);
  });
});

describe('what the model sees', () => {
  it('snapshots the read tool schema', () => {
    expect(createDefaultRegistry().inputJsonSchema('read')).toMatchInlineSnapshot(`
      {
        "additionalProperties": false,
        "properties": {
          "limit": {
            "description": "Maximum number of lines to return. Default 2000.",
            "minimum": 1,
            "type": "integer",
          },
          "offset": {
            "description": "1-based line number to start at. Default 1.",
            "minimum": 1,
            "type": "integer",
          },
          "path": {
            "description": "File path relative to the workspace root (e.g. "notes.md"), or absolute inside the workspace.",
            "minLength": 1,
            "type": "string",
          },
        },
        "required": [
          "path",
        ],
        "type": "object",
      }
    `);
  });

  it('declares each tool to the model with its description and examples (the function tools doStream receives)', async () => {
    const read = declarations(createDefaultRegistry()).find((d) => d.name === 'read');
    expect(Object.keys(read ?? {}).sort()).toEqual(['description', 'name', 'parameters']);
    expect(read?.description).toContain('Read a text file in the workspace');
    expect(read?.description).toContain('Example calls:\n- read a whole (short) file: read({"path":"README.md"})');
  });

  it('embeds the current .md descriptions (run server/scripts/embed-descriptions.mjs if this fails)', async () => {
    const here = path.dirname(fileURLToPath(import.meta.url));
    // @ts-expect-error -- plain .mjs script without types
    const { renderDescriptions } = (await import('../../scripts/embed-descriptions.mjs')) as {
      renderDescriptions(): string;
    };
    const generated = readFileSync(path.join(here, '../../src/gate/descriptions.generated.ts'), 'utf8');
    expect(generated).toBe(renderDescriptions());
  });
});
