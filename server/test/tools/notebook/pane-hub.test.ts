/**
 * Issue #5, the notebook port: the hub asks each attached pane which notebooks it has
 * open and routes to the one that has the path; a pane that never answers is skipped
 * after the timeout; aborting a request cancels it on the pane (which interrupts a run).
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  CancellationToken,
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection
} from 'vscode-jsonrpc/node.js';
import { PaneHub } from '../../../src/notebooks/pane-hub.js';

function pair(): [MessageConnection, MessageConnection] {
  const a = new PassThrough();
  const b = new PassThrough();
  const server = createMessageConnection(new StreamMessageReader(a), new StreamMessageWriter(b));
  const pane = createMessageConnection(new StreamMessageReader(b), new StreamMessageWriter(a));
  server.listen();
  return [server, pane];
}

describe('PaneHub (issue #5 notebook port)', () => {
  it('routes to the pane that has the notebook open; skips panes without it', async () => {
    const hub = new PaneHub();
    const [s1, p1] = pair();
    const [s2, p2] = pair();
    p1.onRequest('notebook/open-documents', () => ({ paths: ['other.ipynb'] }));
    p2.onRequest('notebook/open-documents', () => ({ paths: ['dir/a.ipynb'] }));
    p2.onRequest('notebook/read', (params: { path: string }) => ({
      cells: [],
      nbformat: 4,
      nbformat_minor: 5,
      metadata: { from: params.path }
    }));
    p1.listen();
    p2.listen();
    hub.attach(s1);
    hub.attach(s2);
    const target = await hub.find('dir/a.ipynb');
    expect(target).toBeDefined();
    expect((await target!.request('notebook/read', { path: 'dir/a.ipynb' })).metadata).toEqual({ from: 'dir/a.ipynb' });
    expect(await hub.find('missing.ipynb')).toBeUndefined();
  });

  it('aborting a request cancels it on the pane', async () => {
    const hub = new PaneHub();
    const [s, p] = pair();
    let cancelled = false;
    p.onRequest('notebook/open-documents', () => ({ paths: ['a.ipynb'] }));
    p.onRequest(
      'notebook/run',
      (_params: unknown, token: CancellationToken) =>
        new Promise((resolve) => {
          token.onCancellationRequested(() => {
            cancelled = true;
            resolve({ cells: [], status: 'aborted' });
          });
        })
    );
    p.listen();
    hub.attach(s);
    const target = (await hub.find('a.ipynb'))!;
    const controller = new AbortController();
    const running = target.request('notebook/run', { path: 'a.ipynb', cellIds: ['x'] }, controller.signal);
    setTimeout(() => controller.abort(), 20);
    expect(await running).toEqual({ cells: [], status: 'aborted' });
    expect(cancelled).toBe(true);
  });
});
