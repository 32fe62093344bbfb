/**
 * A debug session that ends between tool calls (here: its TTL) turns its latest card to
 * `ended`, so the pane drops the Terminate button and switches JupyterLab's debugger off for
 * the notebook (issue #12, DBG-2). Real ipykernel + debugpy, the chat service with the
 * scripted model; earlier cards stay the record of each stop, marked as of an ended session.
 */
import type { DebugDisplay, ToolCallItem } from '@cellmate/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followEndedDebugCards } from '../../src/tools/debug/ended-cards.js';
import { createHarness, scriptSettings, type Harness } from '../helpers/chat-harness.js';
import { debugRig, HAVE_PYTHON, type DebugRig } from './fixtures.js';

describe.skipIf(!HAVE_PYTHON)('debug cards follow a session that ends on its own', () => {
  let rig: DebugRig;
  let h: Harness;
  let follow: { dispose(): void };
  beforeAll(async () => {
    rig = await debugRig({ ttlMs: 4_000 });
    h = await createHarness(rig.ws, { registry: rig.registry });
    follow = followEndedDebugCards(rig.sessions, h.service);
  }, 60_000);
  afterAll(async () => {
    follow?.dispose();
    await h?.dispose();
    await rig?.dispose();
  });

  it('DBG-2: the TTL ends the session: its latest card becomes ended with the reason, the earlier one keeps its stop marked session-ended', async () => {
    const model = await scriptSettings(rig.ws, {
      steps: [
        {
          toolCalls: [
            { toolName: 'debug', input: { action: 'breakpoints', file: 'nb.ipynb', cell: 'cell1', lines: [3] } }
          ]
        },
        { toolCalls: [{ toolName: 'debug', input: { action: 'run_cell', file: 'nb.ipynb', cell: 'cell1' } }] },
        { toolCalls: [{ toolName: 'debug', input: { action: 'stack' } }] },
        { text: 'stopped' }
      ]
    });
    const chat = h.service.create('ttl');
    // `items` for the cell: run outside the debugger first, in the chat's private kernel.
    const { handle } = await rig.kernels.acquire(chat.id, 'python');
    await handle.session.client.execute('items = [3, 5, 7]');
    await h.sendAndWait(chat.id, 'debug it', model);
    const cards = (): DebugDisplay[] =>
      h.service
        .get(chat.id)
        .items.flatMap((i) =>
          i.kind === 'tool' && (i as ToolCallItem).display?.kind === 'debug'
            ? [(i as ToolCallItem).display as DebugDisplay]
            : []
        );
    expect(cards().map((c) => c.state)).toEqual(['stopped', 'stopped']);
    const updated = await h.waitForEvent(
      (e) =>
        e.type === 'item-updated' &&
        (e.item as ToolCallItem).display?.kind === 'debug' &&
        ((e.item as ToolCallItem).display as DebugDisplay).state === 'ended'
    );
    const display = (updated as { item: ToolCallItem }).item.display as DebugDisplay;
    expect(display.state).toBe('ended');
    expect(display.reason).toMatch(/^ended: the session reached its 4-second limit/);
    expect(display.frames).toBeUndefined();
    expect(display.breakpoints).toBeUndefined();
    // Stored, not just sent: a reload shows the first card stopped and the last one ended.
    expect(cards().map((c) => c.state)).toEqual(['stopped', 'ended']);
    // The earlier card keeps its stop (frames, locals) but says the session ended: no live Terminate.
    const earlier = cards()[0]!;
    expect(earlier.sessionEnded).toBe(true);
    expect(earlier.frames?.length).toBeGreaterThan(0);
    expect(cards()[1]!.sessionEnded).toBeUndefined();
  }, 120_000);
});
