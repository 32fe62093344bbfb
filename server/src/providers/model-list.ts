/**
 * The models the pane's picker offers (`models/list`): for each configured tier, its own
 * model first, then what its provider serves — an OpenAI-compatible server's `/v1/models`,
 * the models.dev catalog's section for OpenAI and Anthropic (only when the companion has
 * that provider's key: a model without a key cannot run). What a server lists is input
 * like any other: only string ids of sane length are kept, and the list is bounded.
 */
import type { ModelOption, ModelSettings, ModelTier } from '@cellmate/protocol';
import type { LoadedConfig } from '../config/config-file.js';
import { resolveApiKey } from './credentials.js';
import { fetchServerModels, loadCatalog } from './model-facts.js';
import { modelForTier, sameModel } from './tiers.js';

/** Models listed per provider at most (a catalog section or a gateway can list hundreds). */
export const MAX_MODELS_PER_PROVIDER = 60;
const MODEL_ID = /^[\w.:/@+-]{1,200}$/;

export interface ModelListEnv {
  env: NodeJS.ProcessEnv;
  config: LoadedConfig;
  fetch?: typeof globalThis.fetch;
}

/** The picker's entries for the tiers `settings` configures: the tiers' models first, no duplicates. */
export async function listModels(settings: ModelSettings, where: ModelListEnv): Promise<ModelOption[]> {
  const out: ModelOption[] = [];
  const add = (option: ModelOption): void => {
    const same = out.find((o) => sameModel(o, option));
    if (same) {
      if (option.tier && !same.tier) same.tier = option.tier;
      return;
    }
    out.push(option);
  };
  const tiers: ModelTier[] = ['main', 'fast'];
  const tierSettings = tiers.map((tier) => ({ tier, s: modelForTier(settings, tier) }));
  for (const { tier, s } of tierSettings) {
    if (s.model)
      add({
        provider: s.provider,
        model: s.model,
        ...(s.baseUrl ? { baseUrl: s.baseUrl } : {}),
        source: 'settings',
        tier
      });
  }
  for (const { s } of tierSettings) {
    for (const option of await providerModels(s, where)) add(option);
  }
  return out;
}

async function providerModels(s: ModelSettings, where: ModelListEnv): Promise<ModelOption[]> {
  const key = s.provider === 'scripted' ? undefined : resolveApiKey(s.provider, where.env, where.config).value;
  switch (s.provider) {
    case 'openai-compatible': {
      if (!s.baseUrl) return [];
      const entries = await fetchServerModels(s.baseUrl, key, where.fetch ?? globalThis.fetch);
      return ids(entries.map((e) => e.id)).map((model) => ({
        provider: s.provider,
        model,
        baseUrl: s.baseUrl,
        source: 'server' as const
      }));
    }
    case 'openai':
    case 'anthropic': {
      if (!key) return [];
      const section = (await loadCatalog())[s.provider]?.models ?? {};
      return ids(Object.keys(section).sort()).map((model) => ({
        provider: s.provider,
        model,
        source: 'catalog' as const
      }));
    }
    default:
      return [];
  }
}

function ids(values: readonly unknown[]): string[] {
  return values.filter((v): v is string => typeof v === 'string' && MODEL_ID.test(v)).slice(0, MAX_MODELS_PER_PROVIDER);
}
