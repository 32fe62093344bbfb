import { PROVIDER_KINDS, type ProviderKind, type ProviderStatus } from '@cellmate/protocol';
import type { LoadedConfig } from '../config/config-file.js';

/** Environment variable holding each provider's key (`scripted` needs none). */
export const KEY_ENV_VARS: Record<Exclude<ProviderKind, 'scripted'>, string> = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  'openai-compatible': 'CELLMATE_OPENAI_COMPATIBLE_API_KEY'
};

/** Where a key came from; the key itself stays in `value` and never leaves the server. */
export interface ResolvedKey {
  value?: string;
  /** e.g. `OPENAI_API_KEY` or `~/.cellmate/config.json (apiKeys.openai)`. */
  source: string;
}

/** The key for a provider: environment first, then the config file. Pure. */
export function resolveApiKey(kind: ProviderKind, env: NodeJS.ProcessEnv, config: LoadedConfig): ResolvedKey {
  if (kind === 'scripted') return { source: 'none (offline)' };
  const variable = KEY_ENV_VARS[kind];
  const fromEnv = env[variable]?.trim();
  if (fromEnv) return { value: fromEnv, source: variable };
  const fromFile = config.config.apiKeys[kind]?.trim();
  if (fromFile) return { value: fromFile, source: `${config.path} (apiKeys.${kind})` };
  return { source: `${variable} or ${config.path} (apiKeys.${kind})` };
}

/** What the pane may know about each provider: whether a key is set and where, never it. Pure. */
export function providerStatuses(env: NodeJS.ProcessEnv, config: LoadedConfig): ProviderStatus[] {
  return PROVIDER_KINDS.map((kind) => providerStatus(kind, env, config));
}

function providerStatus(kind: ProviderKind, env: NodeJS.ProcessEnv, config: LoadedConfig): ProviderStatus {
  const key = resolveApiKey(kind, env, config);
  const fileProblem = config.problem ? ` (Note: ${config.problem}.)` : '';
  switch (kind) {
    case 'scripted':
      return { kind, keyConfigured: true, keySource: key.source };
    case 'openai-compatible':
      return {
        kind,
        keyConfigured: true,
        keySource: key.value ? key.source : `${KEY_ENV_VARS[kind]} (optional)`,
        hint: key.value
          ? undefined
          : 'Set the base URL of your server (e.g. http://127.0.0.1:11434/v1 for Ollama) in the settings; ' +
            `set ${KEY_ENV_VARS[kind]} only if the server requires a key.`
      };
    default:
      return {
        kind,
        keyConfigured: key.value !== undefined,
        keySource: key.source,
        hint: key.value
          ? undefined
          : `Set ${KEY_ENV_VARS[kind]} in the environment that starts JupyterLab, or add "apiKeys": {"${kind}": "…"} ` +
            `to ${config.path}, then restart JupyterLab.${fileProblem}`
      };
  }
}

/**
 * Every API key the companion holds (environment and config file), for hiding them in text
 * a provider hands back: a hostile or careless server may echo the key in an error.
 */
export function knownKeys(env: NodeJS.ProcessEnv, config: LoadedConfig): string[] {
  return (['openai', 'anthropic', 'openai-compatible'] as const)
    .flatMap((kind) => [env[KEY_ENV_VARS[kind]]?.trim(), config.config.apiKeys[kind]?.trim()])
    .filter((v): v is string => typeof v === 'string' && v.length >= 4);
}
