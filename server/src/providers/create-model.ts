import { PROVIDER_KINDS, type ModelSettings } from '@cellmate/protocol';
import type { LanguageModel } from 'ai';
import type { LoadedConfig } from '../config/config-file.js';
import { providerUnavailable } from '../base/errors.js';
import { KEY_ENV_VARS, resolveApiKey } from './credentials.js';
import { ScriptedLanguageModel } from './scripted.js';

/** What a provider needs besides the settings: the environment, the config file, the workspace. */
export interface ProviderEnv {
  env: NodeJS.ProcessEnv;
  config: LoadedConfig;
  workspace: string;
  /** Custom fetch (tests); defaults to the global one. */
  fetch?: typeof globalThis.fetch;
}

/**
 * Builds a provider instance's language model for the user's settings — never a bare
 * model-id string (that would route through a hosted gateway).
 *
 * `baseUrl` is honoured only for `openai-compatible`: letting the browser redirect the
 * OpenAI or Anthropic key to another host would leak the key.
 *
 * Each provider package is imported when a turn first asks for it (the
 * companion starts without the AI SDK; a user of one provider never loads the others).
 *
 * @throws CellmateError(ProviderUnavailable) with a message saying what to set
 */
export async function createLanguageModel(settings: ModelSettings, providerEnv: ProviderEnv): Promise<LanguageModel> {
  const { env, config, workspace, fetch } = providerEnv;
  if (!PROVIDER_KINDS.includes(settings.provider)) {
    throw providerUnavailable(
      `Unknown provider "${String(settings.provider)}". Choose one of: ${PROVIDER_KINDS.join(', ')}.`
    );
  }
  const modelId = typeof settings.model === 'string' ? settings.model.trim() : '';
  if (settings.provider === 'scripted') {
    return new ScriptedLanguageModel(modelId || 'scripted', {
      workspace,
      scriptPath: settings.scriptPath,
      scriptLogPath: env.CELLMATE_SCRIPT_LOG?.trim() || undefined
    });
  }
  if (!modelId) {
    throw providerUnavailable(
      `No model is set for provider "${settings.provider}". Set the model id in Settings → Cellmate (e.g. ${exampleModel(settings.provider)}).`
    );
  }
  const key = resolveApiKey(settings.provider, env, config);
  switch (settings.provider) {
    case 'openai': {
      if (!key.value) throw missingKey('openai', config);
      const { createOpenAI } = await import('@ai-sdk/openai');
      return createOpenAI({ apiKey: key.value, fetch })(modelId);
    }
    case 'anthropic': {
      if (!key.value) throw missingKey('anthropic', config);
      const { createAnthropic } = await import('@ai-sdk/anthropic');
      return createAnthropic({ apiKey: key.value, fetch })(modelId);
    }
    case 'openai-compatible': {
      const baseURL = checkBaseUrl(settings.baseUrl);
      const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
      // includeUsage asks the server for a usage chunk (stream_options.include_usage): the context meter needs it (CTX-1).
      return createOpenAICompatible({
        name: 'openai-compatible',
        baseURL,
        apiKey: key.value,
        fetch,
        includeUsage: true
      }).chatModel(modelId);
    }
  }
}

function missingKey(kind: 'openai' | 'anthropic', config: LoadedConfig): Error {
  return providerUnavailable(
    `No API key for ${kind}. Set ${KEY_ENV_VARS[kind]} in the environment that starts JupyterLab, ` +
      `or add "apiKeys": {"${kind}": "…"} to ${config.path}, then restart JupyterLab.`
  );
}

/** Validates an openai-compatible base URL (http/https, absolute). */
function checkBaseUrl(raw: string | undefined): string {
  const value = raw?.trim();
  if (!value) {
    throw providerUnavailable(
      'The openai-compatible provider needs a base URL. Set it in Settings → Cellmate, e.g. http://127.0.0.1:11434/v1 (Ollama), ' +
        'http://127.0.0.1:8000/v1 (vLLM), http://127.0.0.1:8080/v1 (llama.cpp) or http://127.0.0.1:1234/v1 (LM Studio).'
    );
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw providerUnavailable(
      `The openai-compatible base URL "${value}" is not a valid URL. Use a full URL such as http://127.0.0.1:11434/v1.`
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw providerUnavailable(`The openai-compatible base URL "${value}" must start with http:// or https://.`);
  }
  return value.replace(/\/+$/, '');
}

function exampleModel(kind: string): string {
  switch (kind) {
    case 'openai':
      return 'gpt-4.1';
    case 'anthropic':
      return 'claude-sonnet-4-5';
    default:
      return 'llama3.1';
  }
}
