import { PROVIDER_KINDS, SELECTABLE_MODES, type ChatMode, type RequestMethod, type Requests } from '@cellmate/protocol';
import { ResponseError, ErrorCodes as JsonRpcErrorCodes } from 'vscode-jsonrpc/node.js';
import { z } from 'zod';

const chatId = z.string().min(1).max(200);
const empty = z.union([z.object({}).loose(), z.null(), z.undefined(), z.array(z.never())]).transform(() => ({}));

const tierModel = z.object({
  provider: z.enum(PROVIDER_KINDS as [string, ...string[]]),
  model: z.string().max(200),
  baseUrl: z.string().max(2_000).optional()
});

const modelSettings = z.object({
  provider: z.enum(PROVIDER_KINDS as [string, ...string[]]),
  model: z.string(),
  baseUrl: z.string().optional(),
  fast: tierModel.optional(),
  scriptPath: z.string().optional(),
  acceptsImages: z.boolean().optional(),
  contextWindow: z.number().int().min(1_000).max(100_000_000).optional(),
  compactAt: z.number().min(0.3).max(0.98).optional()
});

/** The pane's notebook context on `chat/send`. */
const sendContext = z.object({
  notebookPath: z.string().max(4096).optional(),
  selectedCells: z.array(z.number().int().min(0)).max(10_000).optional(),
  assist: z.object({
    action: z.enum(['fix', 'explain']),
    cell: z.number().int().min(0).max(100_000),
    cellId: z.string().min(1).max(200).optional()
  }).optional()
});

/** Runtime schemas of every request's params (the pane is another program; check what arrives). */
const schemas: { [K in RequestMethod]: z.ZodType<Requests[K]['params']> } = {
  'cellmate/hello': z.object({ protocolVersion: z.number(), interactive: z.boolean().optional(), paneSecret: z.string().min(1).max(200).optional() }),
  'config/providers': empty as unknown as z.ZodType<Record<string, never>>,
  'chat/list': empty as unknown as z.ZodType<Record<string, never>>,
  'chat/create': z.union([z.object({ title: z.string().max(500).optional() }), z.null(), z.undefined()]).transform((p) => p ?? {}) as unknown as z.ZodType<{ title?: string }>,
  'chat/get': z.object({ chatId, limit: z.number().int().min(1).max(10_000).optional() }),
  'chat/items': z.object({ chatId, before: z.string().min(1).max(200), limit: z.number().int().min(1).max(10_000).optional() }),
  'chat/rename': z.object({ chatId, title: z.string().max(500) }),
  'chat/delete': z.object({ chatId }),
  'chat/set-auto': z.object({ chatId, auto: z.boolean({ error: 'must be true or false' }) }),
  'chat/set-model': z.object({ chatId, model: tierModel.nullable(), settings: modelSettings }) as unknown as z.ZodType<Requests['chat/set-model']['params']>,
  'models/list': z.object({ model: modelSettings }) as unknown as z.ZodType<Requests['models/list']['params']>,
  'inline/complete': z.object({
    requestId: z.string().min(1).max(100),
    model: modelSettings,
    notebookPath: z.string().max(4096).optional(),
    language: z.string().max(50).optional(),
    prefix: z.string().max(100_000),
    suffix: z.string().max(100_000),
    cellsAbove: z.array(z.string().max(100_000)).max(50),
    cellsBelow: z.array(z.string().max(100_000)).max(50)
  }) as unknown as z.ZodType<Requests['inline/complete']['params']>,
  'chat/set-mode': z.object({ chatId, mode: z.enum(SELECTABLE_MODES as [ChatMode, ...ChatMode[]], { error: `must be one of ${SELECTABLE_MODES.join(', ')} (review is started by the system)` }) }),
  'chat/send': z.object({ chatId, text: z.string().min(1, { error: 'must not be empty' }).max(1_000_000), model: modelSettings, context: sendContext.optional() }) as unknown as z.ZodType<Requests['chat/send']['params']>,
  'chat/retry': z.object({ chatId, model: modelSettings }) as unknown as z.ZodType<Requests['chat/retry']['params']>,
  'chat/edit': z.object({ chatId, text: z.string().min(1, { error: 'must not be empty' }).max(1_000_000), model: modelSettings }) as unknown as z.ZodType<Requests['chat/edit']['params']>,
  'chat/abort': z.object({ chatId }),
  'chat/checkpoints': z.object({ chatId }),
  'chat/rewind-preview': z.object({ chatId, itemId: z.string().min(1).max(200), scope: z.enum(['turn', 'from']) }),
  'chat/rewind': z.object({ chatId, itemId: z.string().min(1).max(200), scope: z.enum(['turn', 'from']), overwrite: z.boolean().optional(), conversation: z.boolean().optional() }),
  'chat/compact': z.object({ chatId, model: modelSettings }) as unknown as z.ZodType<Requests['chat/compact']['params']>,
  'plan/resolve': z.object({
    chatId, planId: z.string().min(1).max(100), decision: z.enum(['approve', 'reject']), reason: z.string().max(4_000).optional(), model: modelSettings
  }) as unknown as z.ZodType<Requests['plan/resolve']['params']>,
  'orchestration/resolve': z.object({
    chatId, orchestrationId: z.string().min(1).max(100), decision: z.enum(['approve', 'reject']), reason: z.string().max(4_000).optional(), model: modelSettings
  }) as unknown as z.ZodType<Requests['orchestration/resolve']['params']>,
  'mcp/servers': empty as unknown as z.ZodType<Record<string, never>>,
  'skills/list': empty as unknown as z.ZodType<Record<string, never>>,
  'chat/export': z.object({ chatId }),
  'commands/list': empty as unknown as z.ZodType<Record<string, never>>,
  'commands/expand': z.object({ name: z.string().min(1).max(64), arguments: z.string().max(100_000) }),
  'worker/list': z.object({ chatId }),
  'worker/get': z.object({ chatId, workerId: z.string().min(1).max(64) }),
  'worker/kill': z.object({ chatId, workerId: z.string().min(1).max(64) }),
  'review/start': z.object({
    scope: z.union([z.literal('git-diff'), z.strictObject({ notebook: z.string().min(1).max(4096) })], { error: 'must be "git-diff" or {notebook: "<path>.ipynb"}' }),
    model: modelSettings
  }) as unknown as z.ZodType<Requests['review/start']['params']>,
  'review/approve': z.object({ chatId, nodeId: z.string().min(1).max(100) }),
  'verify/accept': z.object({ chatId, runId: z.string().regex(/^[0-9TZ]+-[0-9a-f]{6}$/), path: z.string().min(1).max(4096) }),
  'debug/terminate': z.object({ chatId, sessionId: z.string().min(1).max(100) }),
  'chat/context': z.object({
    chatId: chatId.optional(),
    kernel: z.object({ id: z.string().min(1).max(200), name: z.string().max(200), language: z.string().max(100).optional(), notebookPath: z.string().max(4096).optional() }).nullable()
  }),
  'chat/answer': z.object({
    chatId,
    questionId: z.string().min(1).max(200),
    answer: z.discriminatedUnion('action', [
      z.object({ action: z.literal('answer'), selected: z.array(z.number().int().min(0)).max(100), text: z.string().max(100_000).optional() }),
      z.object({ action: z.literal('skip') })
    ])
  }),
  'context/complete': z.object({ chatId: chatId.optional(), prefix: z.string().max(1000) }),
  'instructions/list': z.union([z.object({ chatId: chatId.optional(), notebookPath: z.string().max(4096).optional() }), z.null(), z.undefined()]).transform((p) => p ?? {}) as unknown as z.ZodType<{ chatId?: string; notebookPath?: string }>,
  'skills/set-enabled': z.object({ folder: z.string().min(1).max(4096), enabled: z.boolean() }),
  'edit/resolve': z.object({ chatId, editId: z.string().min(1).max(200), action: z.enum(['accept', 'discard']) }),
  'audit/metrics': z.union([z.object({ chatId: chatId.optional() }), z.null(), z.undefined()]).transform((p) => p ?? {}) as unknown as z.ZodType<{ chatId?: string }>
};

/**
 * Validates a request's params.
 * @throws ResponseError InvalidParams naming the field and the problem
 */
export function checkParams<K extends RequestMethod>(method: K, params: unknown): Requests[K]['params'] {
  const parsed = schemas[method].safeParse(params);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? `"${issue.path.join('.')}"` : 'params';
  throw new ResponseError(JsonRpcErrorCodes.InvalidParams, `Invalid params for ${method}: ${where} ${issue?.message ?? 'is invalid'}.`);
}
