/**
 * The pane's controller against a real WebSocket server: which chat it opens, how it
 * follows events, and that a reconnect re-fetches the list and the open chat.
 */
import { afterEach, describe, expect, it } from 'vitest';

import type { TranscriptItem } from '@cellmate/protocol';
import type { ISettingRegistry } from '@jupyterlab/settingregistry';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Signal } from '@lumino/signaling';

import { CellmateController } from '../src/controller';
import { IChatMemory } from '../src/memory';
import { connect, FakeServer, until } from './fake-server';

/** `__`/`_n` with `%1` substitution, like JupyterLab's null translator. */
const trans = {
  __: (text: string, ...args: unknown[]) => args.reduce<string>((t, a, i) => t.replace(`%${i + 1}`, String(a)), text),
  _n: (one: string, many: string, n: number, ...args: unknown[]) =>
    [n, ...args].reduce<string>((t, a, i) => t.replace(`%${i + 1}`, String(a)), n === 1 ? one : many)
} as unknown as TranslationBundle;

/** The part of ISettingRegistry.ISettings the controller uses. */
class FakeSettings {
  readonly changed = new Signal<this, void>(this);
  constructor(public composite: Record<string, unknown>) {}
  async set(key: string, value: unknown): Promise<void> {
    this.composite = { ...this.composite, [key]: value };
    this.changed.emit();
  }
}

function memory(initial: string | null = null): IChatMemory & { saved: Array<string | null> } {
  const saved: Array<string | null> = [];
  return {
    saved,
    load: async () => initial,
    save: async (id) => {
      saved.push(id);
    }
  };
}

const user = (id: string, text = 'hi'): TranscriptItem => ({
  kind: 'user',
  id,
  turnId: 't1',
  time: '2026-11-29T10:00:00.000Z',
  text
});

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) {
    await cleanups.pop()!();
  }
});

async function setup(options: { remembered?: string | null; provider?: string } = {}) {
  const server = await FakeServer.start();
  const connection = connect(server.port);
  const mem = memory(options.remembered ?? null);
  const notes: string[] = [];
  const settings = new FakeSettings({ provider: options.provider ?? 'scripted' });
  const controller = new CellmateController({
    connection,
    memory: mem,
    notify: (level, message) => notes.push(`${level}: ${message}`),
    trans,
    settings: settings as unknown as ISettingRegistry.ISettings
  });
  cleanups.push(
    () => server.stop(),
    () => connection.dispose(),
    () => controller.dispose()
  );
  return { server, connection, controller, mem, notes, settings };
}

describe('CellmateController', () => {
  it('reopens the remembered chat, else the most recent one', async () => {
    const { server, controller } = await setup({ remembered: 'b' });
    server.addChat('a', [], '2026-11-29T12:00:00.000Z');
    server.addChat('b', [user('u1')]);
    await controller.start();
    await until(() => controller.store.state?.chatId === 'b');
    expect(controller.chats.map((c) => c.id)).toEqual(['a', 'b']);

    const other = await setup({ remembered: 'gone' });
    other.server.addChat('a', [], '2026-11-29T12:00:00.000Z');
    other.server.addChat('b');
    await other.controller.start();
    await until(() => other.controller.store.state?.chatId === 'a');
  });

  it('creates a chat lazily on the first send and sends the model settings', async () => {
    const { server, controller, mem } = await setup();
    await controller.start();
    await until(() => controller.connectionStatus.state === 'connected');
    await until(() => server.calls('chat/list').length === 1);
    expect(controller.store.state).toBeNull();
    expect(await controller.send('  hello  ')).toBe(true);
    expect(server.calls('chat/create')).toHaveLength(1);
    expect(server.calls('chat/send')[0].params).toEqual({
      chatId: 'new1',
      text: 'hello',
      model: { provider: 'scripted', model: 'scripted', scriptPath: '' }
    });
    expect(controller.store.state?.chatId).toBe('new1');
    expect(mem.saved).toContain('new1');
  });

  it('refuses to send while not configured and explains why; the demo plays without writing the settings', async () => {
    const { server, controller, notes, settings } = await setup({ provider: '' });
    await controller.start();
    await until(() => controller.connectionStatus.state === 'connected');
    expect(controller.setup?.reason).toBe('no-provider');
    expect(await controller.send('hello')).toBe(false);
    expect(notes[0]).toMatch(/^warning: Cellmate has no model yet/);
    expect(server.calls('chat/send')).toHaveLength(0);
    // The demo plays on the scripted provider's built-in demo and writes nothing to the settings.
    expect(await controller.useDemo()).toBe(true);
    expect(controller.demo).toBe(true);
    expect(controller.setup).toBeNull();
    expect(settings.composite.provider).toBe('');
    expect(server.calls('chat/send').map((c) => (c.params as { model: unknown }).model)).toEqual([
      { provider: 'scripted', model: 'demo', scriptPath: '' }
    ]);
    // Leaving it is one call, and the pane is back to "not configured".
    controller.leaveDemo();
    expect(controller.demo).toBe(false);
    expect(controller.setup?.reason).toBe('no-provider');
    expect(settings.composite.provider).toBe('');
  });

  it('follows events for the open chat only', async () => {
    const { server, controller } = await setup({ remembered: 'a' });
    server.addChat('a');
    await controller.start();
    await until(() => controller.store.state?.chatId === 'a');
    server.event('zzz', { type: 'item-added', item: user('x') });
    server.event('a', { type: 'turn-started', turnId: 't1' });
    server.event('a', { type: 'item-added', item: user('u1') });
    await until(() => controller.store.state!.items.length === 1);
    expect(controller.running).toBe(true);
  });

  it('re-fetches the list and the open chat after a reconnect, keeping the transcript', async () => {
    const { server, controller } = await setup({ remembered: 'a' });
    server.addChat('a', [user('u1')]);
    await controller.start();
    await until(() => controller.store.state?.items.length === 1);
    // While the pane is away, the server's copy of the chat moves on.
    server.chats.get('a')!.items.push(user('u2', 'while away'));
    server.socket.close(1012, 'Cellmate server restarting');
    await until(() => server.calls('chat/get').length === 2);
    await until(() => controller.store.state!.items.some((i) => i.id === 'u2'));
    expect(server.calls('chat/list')).toHaveLength(2);
    const kinds = controller.store.state!.items.map((i) => (i.kind === 'notice' ? `notice:${i.level}` : i.id));
    // Local notices keep their place in time (after both server items, which are older).
    expect(kinds).toEqual(['u1', 'u2', 'notice:warning', 'notice:info']);
  });

  it('a New chat asked for before the connection is up creates one on connect instead of reopening the last', async () => {
    const { server, controller } = await setup({ remembered: 'a' });
    server.addChat('a', [user('u1')]);
    // Not started yet: the socket is not open, as right after a page reload.
    await controller.newChat();
    await controller.start();
    await until(() => server.calls('chat/create').length === 1);
    await until(() => controller.store.state?.chatId === 'new2');
    expect(controller.store.state!.items).toEqual([]);
    expect(server.calls('chat/get')).toHaveLength(0);
  });

  it('drops the open chat when it is deleted elsewhere', async () => {
    const { server, controller, mem } = await setup({ remembered: 'a' });
    server.addChat('a');
    await controller.start();
    await until(() => controller.store.state?.chatId === 'a');
    server.socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'chat/listChanged', params: { chats: [] } }));
    await until(() => controller.store.state === null);
    expect(mem.saved.at(-1)).toBeNull();
  });

  it('retries and edits the last turn with the model settings, renames and deletes chats', async () => {
    const { server, controller, mem } = await setup({ remembered: 'a' });
    server.addChat('a', [user('u1')], '2026-11-29T12:00:00.000Z');
    server.addChat('b', [user('u2')]);
    await controller.start();
    await until(() => controller.store.state?.chatId === 'a');
    const model = { provider: 'scripted', model: 'scripted', scriptPath: '' };
    expect(await controller.retry()).toBe(true);
    expect(server.calls('chat/retry')[0].params).toEqual({ chatId: 'a', model });
    expect(await controller.retry('  new text ')).toBe(true);
    expect(server.calls('chat/edit')[0].params).toEqual({ chatId: 'a', text: 'new text', model });
    expect(await controller.retry('   ')).toBe(false);

    expect(await controller.rename('a', 'Kiln study')).toBe(true);
    expect(controller.store.state?.title).toBe('Kiln study');
    expect(controller.chats.find((c) => c.id === 'a')?.title).toBe('Kiln study');

    expect(await controller.deleteChat('a')).toBe(true);
    await until(() => controller.store.state?.chatId === 'b');
    expect(controller.chats.map((c) => c.id)).toEqual(['b']);
    expect(mem.saved).toContain(null);
  });

  it('card answers go for the open chat; a refusal or a missing model comes back as state error for the card, never a toast (EDIT-3, MODE-3, MODE-4, MODE-5)', async () => {
    const { server, controller, notes, settings } = await setup();
    await controller.start();
    await until(() => controller.connectionStatus.state === 'connected');
    // No chat open: every card says so and nothing reaches the server.
    const none = { state: 'error', message: 'No chat is open.' };
    expect(await controller.resolveEdit('e1', 'accept')).toEqual(none);
    expect(await controller.resolvePlan('p1', 'approve')).toEqual(none);
    expect(await controller.approveReviewNode('n1')).toEqual(none);
    expect(await controller.acceptVerifyOutputs('r1', 'nb.ipynb')).toEqual(none);
    expect(await controller.resolveOrchestration('o1', 'reject', 'too big')).toEqual(none);
    const cardMethods = ['edit/resolve', 'plan/resolve', 'review/approve', 'verify/accept', 'orchestration/resolve'];
    expect(cardMethods.flatMap((m) => server.calls(m))).toEqual([]);

    server.addChat('a');
    await controller.openChat('a');
    server.answers.set('edit/resolve', () => ({ result: { state: 'accepted', message: 'Applied 1 file.' } }));
    server.answers.set('plan/resolve', () => ({ result: { state: 'approved', message: 'Running 2 steps.' } }));
    server.answers.set('orchestration/resolve', () => ({ result: { state: 'rejected', message: 'Rejected.' } }));
    server.answers.set('review/approve', () => ({ error: { code: -32000, message: 'You wrote this finding.' } }));
    expect(await controller.resolveEdit('e1', 'accept')).toEqual({ state: 'accepted', message: 'Applied 1 file.' });
    expect(server.calls('edit/resolve')[0].params).toEqual({ chatId: 'a', editId: 'e1', action: 'accept' });
    // Approving runs work, so it carries the turn's model settings (and the reason only when there is one).
    expect(await controller.resolvePlan('p1', 'approve')).toEqual({ state: 'approved', message: 'Running 2 steps.' });
    const model = { provider: 'scripted', model: 'scripted', scriptPath: '' };
    expect(server.calls('plan/resolve')[0].params).toEqual({ chatId: 'a', planId: 'p1', decision: 'approve', model });
    expect(await controller.resolveOrchestration('o1', 'reject', 'too big')).toEqual({
      state: 'rejected',
      message: 'Rejected.'
    });
    expect(server.calls('orchestration/resolve')[0].params).toEqual({
      chatId: 'a',
      orchestrationId: 'o1',
      decision: 'reject',
      model,
      reason: 'too big'
    });
    expect(await controller.approveReviewNode('n1')).toEqual({ state: 'error', message: 'You wrote this finding.' });
    expect(notes).toEqual([]);

    // With no model configured, an Approve says what to do first and sends nothing.
    await settings.set('provider', '');
    expect(await controller.resolvePlan('p2', 'approve')).toEqual({
      state: 'error',
      message: 'Configure a model first: approving runs the plan.'
    });
    expect(await controller.resolveOrchestration('o2', 'approve')).toEqual({
      state: 'error',
      message: 'Configure a model first: approving runs the tasks.'
    });
    expect(server.calls('plan/resolve')).toHaveLength(1);
    expect(server.calls('orchestration/resolve')).toHaveLength(1);
  });

  it('Compact sends chat/compact with the turn model settings, refuses while a turn runs, and says why it did not compact (CTX-3)', async () => {
    const { server, controller, notes, settings } = await setup({ remembered: 'a' });
    await settings.set('contextWindow', 8000);
    server.addChat('a', [user('u1')]);
    let compacted = false;
    server.answers.set('chat/compact', () => {
      const result = compacted
        ? { compacted: false, message: 'Nothing to compact yet.' }
        : { compacted: true, message: 'Compacted.' };
      compacted = true;
      return { result };
    });
    await controller.start();
    await until(() => controller.store.state?.chatId === 'a');
    expect(controller.canCompact).toBe(true);
    expect(await controller.compact()).toEqual({ compacted: true, message: 'Compacted.' });
    expect(server.calls('chat/compact')[0].params).toEqual({
      chatId: 'a',
      model: { provider: 'scripted', model: 'scripted', scriptPath: '', contextWindow: 8000 }
    });
    expect(notes).toEqual([]);
    expect(await controller.compact()).toMatchObject({ compacted: false });
    expect(notes).toEqual(['info: Nothing to compact yet.']);

    server.event('a', { type: 'turn-started', turnId: 't2' });
    await until(() => controller.running);
    expect(controller.canCompact).toBe(false);
    expect(await controller.compact()).toBeNull();
    expect(server.calls('chat/compact')).toHaveLength(2);
    server.event('a', { type: 'turn-ended', turnId: 't2', reason: 'stop' });
    await until(() => !controller.running);

    server.answers.set('chat/compact', () => ({ error: { code: -32000, message: 'A turn is running' } }));
    expect(await controller.compact()).toBeNull();
    expect(notes.at(-1)).toBe('error: Could not compact the conversation: A turn is running');
    expect(controller.store.state!.items.at(-1)).toMatchObject({ kind: 'notice', level: 'error' });
    expect(controller.compacting).toBe(false);
  });
});
