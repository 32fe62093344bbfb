/**
 * The notebook port: the panes (interactive connections) that serve `PaneRequests`
 * (server → pane) about the notebooks open in their JupyterLab. The server cannot touch a
 * browser's document model; a pane that has the notebook open edits it for us, so the
 * user sees the edit at once and undo works.
 */
import type { PaneRequestMethod, PaneRequests } from '@cellmate/protocol';
import { CancellationTokenSource, type Disposable, type MessageConnection } from 'vscode-jsonrpc/node.js';
import { currentWriteRecorder } from '../workspace/write-capture.js';

/** How long a pane may take to say which notebooks it has open. */
export const OPEN_DOCUMENTS_TIMEOUT_MS = 3_000;

/** One pane that has a notebook open. */
export interface PaneTarget {
  request<K extends PaneRequestMethod>(
    method: K,
    params: PaneRequests[K]['params'],
    signal?: AbortSignal
  ): Promise<PaneRequests[K]['result']>;
}

/** The notebook port the tools and the context expander use. */
export interface NotebookPort {
  /** The pane that has `path` (workspace-relative) open, if any. */
  find(path: string, signal?: AbortSignal): Promise<PaneTarget | undefined>;
  /**
   * For many paths at once (each pane asked once): path as given → the pane that has it
   * open; absent paths are not open. Optional: without it, callers use `find` per path.
   */
  findOpen?(paths: readonly string[], signal?: AbortSignal): Promise<Map<string, PaneTarget>>;
}

export class PaneHub implements NotebookPort {
  private readonly panes = new Set<MessageConnection>();

  /** Adds an interactive connection (after its hello said `interactive: true`). */
  attach(connection: MessageConnection): Disposable {
    this.panes.add(connection);
    return { dispose: () => void this.panes.delete(connection) };
  }

  get count(): number {
    return this.panes.size;
  }

  async find(path: string, signal?: AbortSignal): Promise<PaneTarget | undefined> {
    return (await this.findOpen([path], signal)).get(path);
  }

  async findOpen(paths: readonly string[], signal?: AbortSignal): Promise<Map<string, PaneTarget>> {
    const found = new Map<string, PaneTarget>();
    if (paths.length === 0 || this.panes.size === 0) return found;
    const answers = await Promise.all(
      [...this.panes].map(async (conn) => {
        try {
          const r = await send(conn, 'notebook/open-documents', {}, signal, OPEN_DOCUMENTS_TIMEOUT_MS);
          return { conn, open: new Set(Array.isArray(r?.paths) ? r.paths.map(normalize) : []) };
        } catch {
          return { conn, open: new Set<string>() }; // an older pane, or one that went away: not a target
        }
      })
    );
    for (const path of paths) {
      const hit = answers.find((a) => a.open.has(normalize(path)));
      if (hit) found.set(path, { request: (method, params, s) => request(hit.conn, method, params, s) });
    }
    return found;
  }
}

/** The pane requests that change an open notebook (a dry run changes nothing). */
function changes<K extends PaneRequestMethod>(method: K, params: PaneRequests[K]['params']): boolean {
  if (method === 'notebook/set-sources') return !(params as PaneRequests['notebook/set-sources']['params']).dryRun;
  return method === 'notebook/edit' || method === 'notebook/run' || method === 'notebook/set-cells';
}

/** A request to the pane; one that changes a notebook is announced to the call's checkpoint first. */
async function request<K extends PaneRequestMethod>(
  conn: MessageConnection,
  method: K,
  params: PaneRequests[K]['params'],
  signal?: AbortSignal
): Promise<PaneRequests[K]['result']> {
  const recorder = currentWriteRecorder();
  if (recorder && changes(method, params)) {
    const path = (params as { path: string }).path;
    await recorder.beforeNotebook(path, async () => (await send(conn, 'notebook/read', { path }, signal)).cells);
  }
  return send(conn, method, params, signal);
}

function normalize(p: string): string {
  return p.replace(/^\.\//, '').replace(/^\/+/, '');
}

/** A typed server → pane request; aborting `signal` cancels it (the pane interrupts a run). */
async function send<K extends PaneRequestMethod>(
  conn: MessageConnection,
  method: K,
  params: PaneRequests[K]['params'],
  signal?: AbortSignal,
  timeoutMs?: number
): Promise<PaneRequests[K]['result']> {
  const source = new CancellationTokenSource();
  const cancel = (): void => source.cancel();
  signal?.addEventListener('abort', cancel, { once: true });
  let timer: NodeJS.Timeout | undefined;
  try {
    const reply = conn.sendRequest<PaneRequests[K]['result']>(method, params, source.token);
    if (timeoutMs === undefined) return await reply;
    return await Promise.race([
      reply,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          source.cancel();
          reject(new Error(`the pane did not answer ${method} within ${timeoutMs} ms`));
        }, timeoutMs);
      })
    ]);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', cancel);
    source.dispose();
  }
}
