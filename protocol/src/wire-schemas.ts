/**
 * Runtime schemas of the wire, one table per direction: what the pane sends (every
 * request's params, which the server checks) and what the server answers (every request's
 * result, which the pane checks). Each side checks what it receives from the other
 * program; both read these tables, so the checks cannot drift apart.
 *
 * Built with `zod/mini` (tree-shaken functions: about 10 kB gzipped in the pane, schemas
 * included) rather than classic `zod`, whose methods cannot be shaken off (about 50 kB).
 */
import * as z from 'zod/mini';

import {
  CHAT_MODES,
  chatModeOf,
  PROVIDER_KINDS,
  SELECTABLE_MODES,
  type ModelSettings,
  type RequestMethod,
  type Requests,
  type TierModel
} from './index.js';

/**
 * Installs the locale of the checks' messages. The server installs English (its
 * InvalidParams errors reach people) instead of relying on some classic `zod` import having
 * done it first; the pane installs none, and its log names the field with zod's plain
 * "Invalid input".
 */
export function configureWireMessages(locale: Parameters<typeof z.config>[0]): void {
  z.config(locale);
}

const str = (min: number, max: number) => z.string().check(z.minLength(min), z.maxLength(max));
const int = (min: number, max?: number) =>
  z.number().check(z.int(), z.minimum(min), ...(max === undefined ? [] : [z.maximum(max)]));
const chatId = str(1, 200);
const nonEmptyText = z.string().check(z.minLength(1, { error: 'must not be empty' }), z.maxLength(1_000_000));
const decision = z.enum(['approve', 'reject']);
const empty = z.pipe(
  z.union([z.looseObject({}), z.null(), z.undefined(), z.array(z.never())]),
  z.transform((): Record<string, never> => ({}))
);
type Params<K extends RequestMethod> = Requests[K]['params'];
/** A request whose params are all optional: absent or null params mean `{}`. */
const optionalParams = <K extends 'chat/create' | 'instructions/list' | 'audit/metrics'>(
  shape: z.ZodMiniType<Params<K>>
) =>
  z.pipe(
    z.union([shape, z.null(), z.undefined()]),
    z.transform((p: Params<K> | null | undefined): Params<K> => p ?? {})
  );

/** One model of a tier or of a chat's choice. */
export const tierModelSchema = z.object({
  provider: z.enum(PROVIDER_KINDS),
  model: z.string().check(z.maxLength(200)),
  baseUrl: z.optional(z.string().check(z.maxLength(2_000)))
});

/** The model settings a pane sends with every request that runs a model. */
export const modelSettingsSchema = z.object({
  provider: z.enum(PROVIDER_KINDS),
  model: z.string(),
  baseUrl: z.optional(z.string()),
  fast: z.optional(tierModelSchema),
  scriptPath: z.optional(z.string()),
  acceptsImages: z.optional(z.boolean()),
  contextWindow: z.optional(int(1_000, 100_000_000)),
  compactAt: z.optional(z.number().check(z.minimum(0.3), z.maximum(0.98)))
});
const model = modelSettingsSchema;

/** The pane's notebook context on `chat/send`. */
const sendContext = z.object({
  notebookPath: z.optional(z.string().check(z.maxLength(4096))),
  selectedCells: z.optional(z.array(int(0)).check(z.maxLength(10_000))),
  assist: z.optional(
    z.object({ action: z.enum(['fix', 'explain']), cell: int(0, 100_000), cellId: z.optional(str(1, 200)) })
  )
});

const notSelectable = `must be one of ${SELECTABLE_MODES.join(', ')} (review is started by the system)`;
const rewind = { chatId, itemId: str(1, 200), scope: z.enum(['turn', 'from']) };

/** Every request's params, as the server accepts them (the pane is another program). */
export const requestParamsSchemas = {
  'cellmate/hello': z.object({
    protocolVersion: z.number(),
    interactive: z.optional(z.boolean()),
    paneSecret: z.optional(str(1, 200))
  }),
  'config/providers': empty,
  'chat/list': empty,
  'chat/create': optionalParams<'chat/create'>(z.object({ title: z.optional(z.string().check(z.maxLength(500))) })),
  'chat/get': z.object({ chatId, limit: z.optional(int(1, 10_000)) }),
  'chat/items': z.object({ chatId, before: str(1, 200), limit: z.optional(int(1, 10_000)) }),
  'chat/rename': z.object({ chatId, title: z.string().check(z.maxLength(500)) }),
  'chat/delete': z.object({ chatId }),
  'chat/set-auto': z.object({ chatId, auto: z.boolean({ error: 'must be true or false' }) }),
  'chat/set-model': z.object({ chatId, model: z.nullable(tierModelSchema), settings: model }),
  'models/list': z.object({ model }),
  'inline/complete': z.object({
    requestId: str(1, 100),
    model,
    notebookPath: z.optional(z.string().check(z.maxLength(4096))),
    language: z.optional(z.string().check(z.maxLength(50))),
    prefix: z.string().check(z.maxLength(100_000)),
    suffix: z.string().check(z.maxLength(100_000)),
    cellsAbove: z.array(z.string().check(z.maxLength(100_000))).check(z.maxLength(50)),
    cellsBelow: z.array(z.string().check(z.maxLength(100_000))).check(z.maxLength(50))
  }),
  'chat/set-mode': z.object({
    chatId,
    // `chat` is the Agent mode's earlier name: a caller that still says it gets Agent.
    mode: z.pipe(
      z.transform((value: unknown) => chatModeOf(value) ?? value),
      z
        .enum(CHAT_MODES, { error: notSelectable })
        .check(z.refine((mode) => SELECTABLE_MODES.includes(mode), { error: notSelectable }))
    )
  }),
  'chat/send': z.object({ chatId, text: nonEmptyText, model, context: z.optional(sendContext) }),
  'chat/retry': z.object({ chatId, model }),
  'chat/edit': z.object({ chatId, text: nonEmptyText, model }),
  'chat/abort': z.object({ chatId }),
  'chat/checkpoints': z.object({ chatId }),
  'chat/rewind-preview': z.object(rewind),
  'chat/rewind': z.object({ ...rewind, overwrite: z.optional(z.boolean()), conversation: z.optional(z.boolean()) }),
  'chat/compact': z.object({ chatId, model }),
  'plan/resolve': z.object({
    chatId,
    planId: str(1, 100),
    decision,
    reason: z.optional(z.string().check(z.maxLength(4_000))),
    model
  }),
  'orchestration/resolve': z.object({
    chatId,
    orchestrationId: str(1, 100),
    decision,
    reason: z.optional(z.string().check(z.maxLength(4_000))),
    model
  }),
  'mcp/servers': empty,
  'mcp/config-problems': empty,
  'skills/list': empty,
  'chat/export': z.object({ chatId }),
  'commands/list': empty,
  'commands/expand': z.object({ name: str(1, 64), arguments: z.string().check(z.maxLength(100_000)) }),
  'worker/list': z.object({ chatId }),
  'worker/get': z.object({ chatId, workerId: str(1, 64) }),
  'worker/kill': z.object({ chatId, workerId: str(1, 64) }),
  'review/start': z.object({
    scope: z.union([z.literal('git-diff'), z.strictObject({ notebook: str(1, 4096) })], {
      error: 'must be "git-diff" or {notebook: "<path>.ipynb"}'
    }),
    model
  }),
  'review/approve': z.object({ chatId, nodeId: str(1, 100) }),
  'verify/accept': z.object({ chatId, runId: z.string().check(z.regex(/^[0-9TZ]+-[0-9a-f]{6}$/)), path: str(1, 4096) }),
  'debug/terminate': z.object({ chatId, sessionId: str(1, 100) }),
  'chat/context': z.object({
    chatId: z.optional(chatId),
    kernel: z.nullable(
      z.object({
        id: str(1, 200),
        name: z.string().check(z.maxLength(200)),
        language: z.optional(z.string().check(z.maxLength(100))),
        notebookPath: z.optional(z.string().check(z.maxLength(4096)))
      })
    )
  }),
  'chat/answer': z.object({
    chatId,
    questionId: str(1, 200),
    answer: z.discriminatedUnion('action', [
      z.object({
        action: z.literal('answer'),
        selected: z.array(int(0)).check(z.maxLength(100)),
        text: z.optional(z.string().check(z.maxLength(100_000)))
      }),
      z.object({ action: z.literal('skip') })
    ])
  }),
  'context/complete': z.object({ chatId: z.optional(chatId), prefix: z.string().check(z.maxLength(1000)) }),
  'instructions/list': optionalParams<'instructions/list'>(
    z.object({ chatId: z.optional(chatId), notebookPath: z.optional(z.string().check(z.maxLength(4096))) })
  ),
  'skills/set-enabled': z.object({ folder: str(1, 4096), enabled: z.boolean() }),
  'edit/resolve': z.object({ chatId, editId: str(1, 200), action: z.enum(['accept', 'discard']) }),
  'audit/metrics': optionalParams<'audit/metrics'>(z.object({ chatId: z.optional(chatId) }))
};

/** The same table seen per method: each schema yields exactly its method's params. */
export const paramsSchemaOf: { [K in RequestMethod]: z.ZodMiniType<Requests[K]['params']> } = requestParamsSchemas;

/**
 * True when `A` and `B` have the same keys and each is assignable to the other: a schema
 * that drops an optional field, or types one differently, fails at compile time.
 */
type Same<A, B> = [A] extends [B]
  ? [B] extends [A]
    ? [keyof A] extends [keyof B]
      ? [keyof B] extends [keyof A]
        ? true
        : false
      : false
    : false
  : false;
/** The methods whose params schema and protocol type differ (`never` when none do). */
type Drifted = {
  [K in RequestMethod]: Same<z.output<(typeof requestParamsSchemas)[K]>, Requests[K]['params']> extends true
    ? never
    : K;
}[RequestMethod];
/** Does not compile, naming the method, when a params schema drifts from `Requests`. */
export const PARAMS_MATCH_PROTOCOL: [Drifted] extends [never] ? true : Drifted = true;
/** The nested model shapes, whose keys `Drifted` does not reach. */
export const MODELS_MATCH_PROTOCOL: [
  Same<z.output<typeof tierModelSchema>, TierModel>,
  Same<z.output<typeof modelSettingsSchema>, ModelSettings>
] = [true, true];

// ---------------------------------------------------------------------------------------
// Results. These check what the pane reads — the top-level fields and the ids in lists —
// and let unknown fields through (a newer server may add some). Deep content (a chat's
// items, a diff's text) is left to the guards of the views that render it.

const loose = z.looseObject;
const providerStatus = loose({ kind: z.string(), keyConfigured: z.boolean(), keySource: z.string() });
const chatSummary = loose({ id: z.string(), title: z.string() });
const chat = loose({
  id: z.string(),
  title: z.string(),
  items: z.array(z.unknown()),
  olderCount: z.optional(z.number())
});
const workerSummary = loose({
  id: z.string(),
  chatId: z.string(),
  label: z.string(),
  state: z.string(),
  tier: z.string(),
  elapsedMs: z.number()
});
const turn = loose({ turnId: z.string() });
const withMessage = <T extends z.core.$ZodLooseShape>(shape: T) => loose({ ...shape, message: z.string() });
const skill = loose({ name: z.string(), folder: z.string(), location: z.string(), state: z.string() });

/** Every request's result, as the pane accepts it. */
export const requestResultSchemas: { [K in RequestMethod]: z.ZodMiniType } = {
  'cellmate/hello': loose({
    protocolVersion: z.number(),
    serverVersion: z.string(),
    workspace: z.string(),
    providers: z.array(providerStatus),
    paneSecret: z.optional(z.string())
  }),
  'config/providers': z.array(providerStatus),
  'chat/list': z.array(chatSummary),
  'chat/create': chat,
  'chat/get': chat,
  'chat/items': loose({ items: z.array(z.unknown()), olderCount: z.number() }),
  'chat/rename': chatSummary,
  'chat/set-mode': chatSummary,
  'chat/set-auto': chatSummary,
  'chat/delete': loose({ deleted: z.boolean() }),
  'chat/set-model': loose({
    model: z.nullable(loose({ provider: z.enum(PROVIDER_KINDS), model: z.string(), baseUrl: z.optional(z.string()) }))
  }),
  'models/list': loose({ models: z.array(loose({ provider: z.string(), model: z.string(), source: z.string() })) }),
  'inline/complete': loose({ text: z.string() }),
  'chat/send': turn,
  'chat/retry': turn,
  'chat/edit': turn,
  'chat/checkpoints': loose({ turns: z.array(loose({ turnId: z.string(), paths: z.array(z.string()) })) }),
  'chat/rewind-preview': loose({
    files: z.array(z.unknown()),
    kernelNames: z.array(z.string()),
    turns: z.array(z.string()),
    summary: z.string()
  }),
  'chat/rewind': withMessage({
    restored: z.array(z.string()),
    skipped: z.array(z.string()),
    text: z.optional(z.string())
  }),
  'debug/terminate': loose({ terminated: z.boolean() }),
  'plan/resolve': withMessage({ state: z.string() }),
  'worker/list': z.array(workerSummary),
  'worker/get': loose({ worker: workerSummary, items: z.array(z.unknown()) }),
  'worker/kill': withMessage({ killed: z.boolean() }),
  'orchestration/resolve': withMessage({ state: z.string() }),
  'review/start': loose({ chatId: z.string(), turnId: z.string() }),
  'review/approve': withMessage({ state: z.string() }),
  'verify/accept': withMessage({ state: z.literal('accepted') }),
  'mcp/servers': z.array(
    loose({ name: z.string(), state: z.string(), tools: z.number(), problems: z.array(z.string()) })
  ),
  'mcp/config-problems': z.array(z.string()),
  'chat/compact': withMessage({ compacted: z.boolean() }),
  'chat/abort': loose({ aborted: z.boolean() }),
  'chat/context': loose({ ok: z.literal(true) }),
  'chat/answer': loose({ state: z.enum(['pending', 'answered', 'skipped', 'expired', 'cancelled']) }),
  'audit/metrics': loose({
    chatId: z.nullable(z.string()),
    rows: z.array(loose({ tool: z.string(), calls: z.number() }))
  }),
  'context/complete': loose({
    items: z.array(loose({ kind: z.enum(['variable', 'file']), name: z.string(), detail: z.string() }))
  }),
  'instructions/list': loose({
    files: z.array(loose({ label: z.string(), scope: z.string(), chars: z.number(), shown: z.number() }))
  }),
  'skills/list': z.array(skill),
  'skills/set-enabled': z.array(skill),
  'chat/export': loose({ markdown: z.string(), notebook: z.string(), files: z.array(z.string()) }),
  'commands/list': z.array(loose({ name: z.string(), description: z.string(), source: z.string() })),
  'commands/expand': loose({ text: z.string() }),
  'edit/resolve': withMessage({ state: z.enum(['accepted', 'discarded']) })
};

/**
 * Why `value` is not the result `method` promises (`field: problem`), or `undefined` when
 * it is. The value itself is never rewritten: the caller keeps what arrived.
 */
export function resultProblem(method: RequestMethod, value: unknown): string | undefined {
  const checked = requestResultSchemas[method].safeParse(value);
  if (checked.success) return undefined;
  const issue = checked.error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.join('.') : 'the result';
  return `${where}: ${issue?.message ?? 'is invalid'}`;
}
