/**
 * A minimal JSON-RPC 2.0 client over Cellmate's WebSocket route, typed by the wire
 * protocol, for tests that talk to the companion server the way the pane does
 * (through Jupyter's authentication) without a browser.
 */
import WebSocket from 'ws';
import type { ChatEvent, Notifications, Requests } from '@cellmate/protocol';

export interface RpcClient {
  request<K extends keyof Requests>(method: K, params: Requests[K]['params']): Promise<Requests[K]['result']>;
  /**
   * Every notification received so far, in order, each with the wall-clock time (ms, µs
   * precision: `performance.timeOrigin + performance.now()`) its WebSocket message arrived.
   */
  notifications: Array<{ method: keyof Notifications; params: unknown; receivedAt: number }>;
  /** Chat events received for one chat, in order. */
  events(chatId: string): ChatEvent[];
  /**
   * Resolves when an event for `chatId` satisfies `predicate` (past events count). Each
   * event is tested once: a long session does not rescan everything on every message.
   */
  waitForEvent(chatId: string, predicate: (e: ChatEvent) => boolean, timeoutMs?: number): Promise<ChatEvent>;
  closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

/** Opens the socket; rejects with the HTTP status if the upgrade is refused. */
export async function connectRpc(wsUrl: string, token?: string): Promise<RpcClient> {
  const url = token ? `${wsUrl}?token=${encodeURIComponent(token)}` : wsUrl;
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => reject(new Error(`websocket refused: HTTP ${res.statusCode}`)));
    ws.once('error', reject);
  });
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const notifications: RpcClient['notifications'] = [];
  const waiters: Array<() => void> = [];
  ws.on('message', (data) => {
    const receivedAt = performance.timeOrigin + performance.now();
    const msg = JSON.parse(String(data)) as {
      id?: number;
      method?: string;
      params?: unknown;
      result?: unknown;
      error?: { code: number; message: string };
    };
    if (msg.method) {
      notifications.push({ method: msg.method as keyof Notifications, params: msg.params, receivedAt });
      for (const w of waiters.splice(0)) w();
    } else if (typeof msg.id === 'number') {
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) p?.reject(Object.assign(new Error(msg.error.message), { code: msg.error.code }));
      else p?.resolve(msg.result);
    }
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.once('close', (code, reason) => {
      for (const p of pending.values()) p.reject(new Error(`websocket closed (${code})`));
      pending.clear();
      for (const w of waiters.splice(0)) w();
      resolve({ code, reason: String(reason) });
    });
  });
  const events = (chatId: string) =>
    notifications
      .filter((n) => n.method === 'chat/event')
      .map((n) => n.params as Notifications['chat/event'])
      .filter((p) => p.chatId === chatId)
      .map((p) => p.event);
  return {
    notifications,
    closed,
    events,
    request(method, params) {
      const id = nextId++;
      ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      });
    },
    async waitForEvent(chatId, predicate, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      let next = 0; // notifications[0, next) were tested already
      for (;;) {
        for (; next < notifications.length; next++) {
          const n = notifications[next]!;
          if (n.method !== 'chat/event') continue;
          const p = n.params as Notifications['chat/event'];
          if (p.chatId === chatId && predicate(p.event)) return p.event;
        }
        const left = deadline - Date.now();
        if (left <= 0 || ws.readyState !== WebSocket.OPEN) {
          throw new Error(`no matching event for chat ${chatId}; got ${JSON.stringify(events(chatId)).slice(0, 2000)}`);
        }
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(t);
            resolve();
          });
        });
      }
    },
    close: () => ws.close()
  };
}
