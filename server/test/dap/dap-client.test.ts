/**
 * The DAP client's own behaviour on byte streams (fault injection: the far side is scripted
 * here; the real adapters are in debugpy.test.ts): typed responses, `success: false` as a
 * DapRequestError with the adapter's message, reverse requests refused (an adapter never
 * waits on us), and every pending request failing when the adapter goes away.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { StreamMessageReader, StreamMessageWriter, type Message } from 'vscode-jsonrpc/node.js';
import { DapClient } from '../../src/dap/dap-client.js';
import { DapRequestError } from '../../src/dap/protocol.js';

/** A client wired to a scripted adapter: `adapter.onRequest` answers what the client sends. */
function pair() {
  const toAdapter = new PassThrough();
  const toClient = new PassThrough();
  const client = new DapClient(new StreamMessageReader(toClient), new StreamMessageWriter(toAdapter), 'fake');
  const adapterIn = new StreamMessageReader(toAdapter);
  const adapterOut = new StreamMessageWriter(toClient);
  const received: Array<Record<string, unknown>> = [];
  let respond: (m: Record<string, unknown>) => Record<string, unknown> | undefined = () => undefined;
  adapterIn.listen((m) => {
    const msg = m as unknown as Record<string, unknown>;
    received.push(msg);
    const r = respond(msg);
    if (r) void adapterOut.write(r as unknown as Message);
  });
  return {
    client,
    received,
    toClient,
    onRequest: (fn: typeof respond) => (respond = fn),
    send: (m: Record<string, unknown>) => adapterOut.write(m as unknown as Message)
  };
}

describe('DapClient', () => {
  it("resolves the response body; success:false rejects with the adapter's formatted message", async () => {
    const p = pair();
    p.onRequest((m) =>
      m.command === 'threads'
        ? {
            seq: 1,
            type: 'response',
            request_seq: m.seq,
            command: 'threads',
            success: true,
            body: { threads: [{ id: 7, name: 'main' }] }
          }
        : {
            seq: 2,
            type: 'response',
            request_seq: m.seq,
            command: m.command,
            success: false,
            message: 'x',
            body: { error: { id: 1, format: 'no such frame {id}', variables: { id: '42' } } }
          }
    );
    expect(await p.client.request('threads', undefined)).toEqual({ threads: [{ id: 7, name: 'main' }] });
    const err = await p.client.request('scopes', { frameId: 42 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DapRequestError);
    expect((err as Error).message).toBe('scopes failed in fake: no such frame 42');
    p.client.dispose();
  });

  it('answers a reverse request with a refusal and fires events', async () => {
    const p = pair();
    const events: string[] = [];
    p.client.onEvent((e) => events.push(e.event));
    await p.send({ seq: 1, type: 'request', command: 'runInTerminal', arguments: { args: ['x'] } });
    await p.send({ seq: 2, type: 'event', event: 'stopped', body: { reason: 'breakpoint' } });
    await expect
      .poll(() => p.received.find((m) => m.type === 'response'))
      .toMatchObject({ request_seq: 1, command: 'runInTerminal', success: false });
    await expect.poll(() => events).toEqual(['stopped']);
    p.client.dispose();
  });

  it('a pending request fails when the adapter goes away (no hang), and later ones fail at once', async () => {
    const p = pair();
    const closed: string[] = [];
    p.client.onClose((e) => closed.push(e.message));
    const pending = p.client.request('continue', { threadId: 1 });
    await expect.poll(() => p.received.length).toBe(1);
    p.toClient.end();
    const err = await pending.catch((e: unknown) => e);
    expect((err as DapRequestError).code).toBe('closed');
    expect((err as Error).message).toBe('continue: the fake adapter closed its output');
    expect(closed).toEqual(['the fake adapter closed its output']);
    await expect(p.client.request('threads', undefined)).rejects.toThrow('threads: the fake adapter closed its output');
    p.client.dispose();
  });
});
