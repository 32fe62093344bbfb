import type { NotificationMethod, Notifications, RequestMethod, Requests } from '@cellmate/protocol';
import { resultProblem } from '@cellmate/protocol/lib/wire-schemas.js';
import type { CancellationToken, MessageConnection } from 'vscode-jsonrpc/node.js';

/** A handler for one protocol request, typed from `Requests`. */
export type RequestHandler<K extends RequestMethod> = (
  params: Requests[K]['params'],
  token: CancellationToken
) => Promise<Requests[K]['result']> | Requests[K]['result'];

/** One handler per request in the protocol; the compiler flags a missing one. */
export type RequestHandlers = { [K in RequestMethod]: RequestHandler<K> };

/** Registers a typed request handler (the method name and params come from the protocol). */
export function onRequest<K extends RequestMethod>(
  connection: MessageConnection,
  method: K,
  handler: RequestHandler<K>
): void {
  // vscode-jsonrpc's untyped overload: params arrive as whatever JSON the client sent.
  connection.onRequest(method, (params: unknown, token: CancellationToken) =>
    handler(params as Requests[K]['params'], token)
  );
}

/**
 * Sends a typed request (clients: tests, bench, e2e) and checks the answer the way the pane
 * does, so an answer the pane would refuse fails here too.
 */
export async function sendRequest<K extends RequestMethod>(
  connection: MessageConnection,
  method: K,
  params: Requests[K]['params']
): Promise<Requests[K]['result']> {
  const result: unknown = await connection.sendRequest(method, params);
  const problem = resultProblem(method, result);
  if (problem !== undefined)
    throw new Error(`The server answered ${method} with a result the pane refuses (${problem}).`);
  // Checked against the method's result schema just above.
  return result as Requests[K]['result'];
}

/** Sends a typed notification. */
export function sendNotification<K extends NotificationMethod>(
  connection: MessageConnection,
  method: K,
  params: Notifications[K]
): Promise<void> {
  return connection.sendNotification(method, params);
}

/** Listens to a typed notification (clients). */
export function onNotification<K extends NotificationMethod>(
  connection: MessageConnection,
  method: K,
  handler: (params: Notifications[K]) => void
): void {
  connection.onNotification(method, (params: unknown) => handler(params as Notifications[K]));
}
