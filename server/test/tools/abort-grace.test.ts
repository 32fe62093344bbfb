/**
 * Issue #5 (Stop): a tool with `abortGraceMs` stops itself on the user's abort and its own
 * result ("[Interrupted: …]") reaches the model and the card with status `aborted`; one
 * that does not answer within the grace ends with the generic text; tools without a grace
 * end at once, as before.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/gate/define-tool.js';
import { ToolRegistry } from '../../src/gate/registry.js';

const stopper = (name: string, reportAfterMs: number, abortGraceMs?: number) =>
  defineTool({
    name,
    tier: 'read',
    description: 'test tool',
    parameters: z.object({}),
    examples: [],
    ...(abortGraceMs !== undefined ? { abortGraceMs } : {}),
    execute: (_args, ctx) =>
      new Promise((resolve) => {
        ctx.signal.addEventListener('abort', () =>
          setTimeout(
            () => resolve({ title: 'sleep — aborted', output: 'partial\n[Interrupted: the user stopped the turn.]' }),
            reportAfterMs
          )
        );
      })
  });

async function callAndAbort(registry: ToolRegistry, name: string) {
  const controller = new AbortController();
  const pending = registry.call(
    name,
    {},
    { workspace: '/tmp', signal: controller.signal, actor: 'model', chatId: 'c' }
  );
  setTimeout(() => controller.abort(), 20);
  return pending;
}

describe('abortGraceMs (issue #5)', () => {
  const registry = new ToolRegistry([stopper('graceful', 50, 2000), stopper('slow', 500, 100), stopper('plain', 50)]);

  it('the tool’s own interrupted result is kept', async () => {
    expect(await callAndAbort(registry, 'graceful')).toMatchObject({
      ok: false,
      status: 'aborted',
      title: 'sleep — aborted',
      output: 'partial\n[Interrupted: the user stopped the turn.]'
    });
  });

  it('past the grace, or without one, the generic stop text', async () => {
    expect(await callAndAbort(registry, 'slow')).toMatchObject({
      ok: false,
      status: 'aborted',
      output: 'The user stopped this tool call before it finished.'
    });
    expect(await callAndAbort(registry, 'plain')).toMatchObject({
      ok: false,
      status: 'aborted',
      output: 'The user stopped this tool call before it finished.'
    });
  });
});
