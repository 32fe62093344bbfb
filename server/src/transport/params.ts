import type { RequestMethod, Requests } from '@cellmate/protocol';
import { configureWireMessages, paramsSchemaOf } from '@cellmate/protocol/lib/wire-schemas.js';
import { ResponseError, ErrorCodes as JsonRpcErrorCodes } from 'vscode-jsonrpc/node.js';
import en from 'zod/v4/locales/en.js';

// A refused request's message names the field and the problem in words a person reads.
configureWireMessages(en());

/**
 * Validates a request's params.
 * @throws ResponseError InvalidParams naming the field and the problem
 */
export function checkParams<K extends RequestMethod>(method: K, params: unknown): Requests[K]['params'] {
  const parsed = paramsSchemaOf[method].safeParse(params);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? `"${issue.path.join('.')}"` : 'params';
  throw new ResponseError(
    JsonRpcErrorCodes.InvalidParams,
    `Invalid params for ${method}: ${where} ${issue?.message ?? 'is invalid'}.`
  );
}
