/**
 * The pane's settings (`schema/plugin.json`) and what they mean for a turn.
 *
 * Pure: no JupyterLab imports, so the "what to set" logic is unit-tested in Node.
 * API keys never appear here: the server reports only whether it has one.
 */
import type { ModelSettings, ProviderKind, ProviderStatus } from '@cellmate/protocol';

/** The settings plugin id (also the extension's main plugin id). */
export const PLUGIN_ID = 'jupyterlab-cellmate:plugin';

/** The user's settings as stored in the setting registry. `provider: ''` = not chosen. */
export interface ICellmateSettings {
  provider: ProviderKind | '';
  model: string;
  baseUrl: string;
  scriptPath: string;
  /** Whether the model gets eval's figures as images; absent = `auto` (by provider). */
  acceptsImages?: 'yes' | 'no';
  /** The model's context window in tokens, overriding what the server finds (CTX-1); absent = the server's figure. */
  contextWindow?: number;
  /** Share of the usable window at which the chat compacts (CTX-3); absent = the server's default. */
  compactAt?: number;
  /** The `fast` tier (inline completions, summaries, fast workers); `provider: ''` = the main model. */
  fastModel: { provider: ProviderKind | ''; model: string; baseUrl: string };
  /** Inline completions in notebook cells (off until the person turns them on). */
  inlineCompletions: boolean;
}

/** The range of `compactAt` the schema allows; a hand-edited value outside it is ignored. */
export const COMPACT_AT_RANGE = { min: 0.5, max: 0.95 } as const;

export const DEFAULT_SETTINGS: ICellmateSettings = {
  provider: '',
  model: '',
  baseUrl: '',
  scriptPath: '',
  fastModel: { provider: '', model: '', baseUrl: '' },
  inlineCompletions: false
};

const PROVIDERS: readonly string[] = ['openai', 'anthropic', 'openai-compatible', 'scripted'];

/** Reads the composite settings defensively (a hand-edited file may hold anything). */
export function readSettings(composite: Record<string, unknown> | null | undefined): ICellmateSettings {
  const c = composite ?? {};
  const str = (key: keyof ICellmateSettings): string => (typeof c[key] === 'string' ? (c[key] as string).trim() : '');
  const provider = str('provider');
  return {
    provider: PROVIDERS.includes(provider) ? (provider as ProviderKind) : '',
    model: str('model'),
    baseUrl: str('baseUrl'),
    scriptPath: str('scriptPath'),
    fastModel: readFast(c.fastModel),
    inlineCompletions: c.inlineCompletions === true,
    ...(c.acceptsImages === 'yes' || c.acceptsImages === 'no' ? { acceptsImages: c.acceptsImages } : {}),
    ...(isWindow(c.contextWindow) ? { contextWindow: c.contextWindow } : {}),
    ...(isCompactAt(c.compactAt) ? { compactAt: c.compactAt } : {})
  };
}

function readFast(value: unknown): ICellmateSettings['fastModel'] {
  const v = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const text = (key: string): string => (typeof v[key] === 'string' ? (v[key] as string).trim() : '');
  const provider = text('provider');
  return {
    provider: PROVIDERS.includes(provider) ? (provider as ProviderKind) : '',
    model: text('model'),
    baseUrl: text('baseUrl')
  };
}

function isWindow(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0;
}

function isCompactAt(value: unknown): value is number {
  return typeof value === 'number' && value >= COMPACT_AT_RANGE.min && value <= COMPACT_AT_RANGE.max;
}

/** The model settings sent with `chat/send` (and retry, edit, compact), or null when no provider is chosen. */
export function toModelSettings(settings: ICellmateSettings): ModelSettings | null {
  if (settings.provider === '') {
    return null;
  }
  const model: ModelSettings = { provider: settings.provider, model: settings.model };
  if (settings.provider === 'openai-compatible' && settings.baseUrl) {
    model.baseUrl = settings.baseUrl;
  }
  if (settings.acceptsImages) {
    model.acceptsImages = settings.acceptsImages === 'yes';
  }
  if (settings.contextWindow !== undefined) {
    model.contextWindow = settings.contextWindow;
  }
  if (settings.compactAt !== undefined) {
    model.compactAt = settings.compactAt;
  }
  const fast = settings.fastModel;
  if (fast.provider !== '' && (fast.model || fast.provider === 'scripted')) {
    model.fast = {
      provider: fast.provider,
      model: fast.model,
      ...(fast.provider === 'openai-compatible' && fast.baseUrl ? { baseUrl: fast.baseUrl } : {})
    };
  }
  if (settings.provider === 'scripted') {
    model.scriptPath = settings.scriptPath;
    if (!model.model) {
      model.model = 'scripted';
    }
  }
  return model;
}

/** Why the pane cannot run a turn yet, and exactly what to set. */
export interface ISetupProblem {
  /** What is missing, as a short code for tests and styling. */
  reason: 'no-provider' | 'no-key' | 'no-model' | 'no-base-url';
  /** The sentence the banner shows. */
  message: string;
  /** Extra hint from the server, if any. */
  hint?: string;
}

const CONFIG_FILE = '~/.cellmate/config.json';

/** Example model ids, only for the banner's wording. */
const EXAMPLE_MODEL: Record<ProviderKind, string> = {
  openai: 'gpt-4.1',
  anthropic: 'claude-sonnet-4-5',
  'openai-compatible': 'llama3.1',
  scripted: ''
};

/** Providers whose key the banner talks about when none is chosen yet. */
const KEYED: readonly ProviderKind[] = ['openai', 'anthropic'];

/** `OPENAI_API_KEY`, optionally followed by a remark in parentheses. */
const ENV_VAR = /^[A-Z][A-Z0-9_]*(\s*\(.*\))?$/;

/**
 * What keeps a turn from running with `settings`, given the providers the server
 * reported in `cellmate/hello` (null while not connected: key checks are skipped).
 */
export function setupProblem(
  settings: ICellmateSettings,
  providers: readonly ProviderStatus[] | null
): ISetupProblem | null {
  if (settings.provider === '') {
    return noProvider(providers ?? []);
  }
  const kind = settings.provider;
  const status = providers?.find((p) => p.kind === kind);
  if (status && !status.keyConfigured) {
    return {
      reason: 'no-key',
      message:
        `The Cellmate server has no API key for “${kind}”. ` +
        `${capitalize(keyInstructions(status.keySource))}, then reload.`,
      hint: status.hint
    };
  }
  if (kind === 'openai-compatible' && !settings.baseUrl) {
    return {
      reason: 'no-base-url',
      message:
        'Set Settings → Cellmate → baseUrl to your server’s OpenAI-compatible endpoint ' +
        '(e.g. http://localhost:11434/v1 for Ollama) and model to one it serves.'
    };
  }
  if (kind !== 'scripted' && !settings.model) {
    return {
      reason: 'no-model',
      message: `Set Settings → Cellmate → model (e.g. ${EXAMPLE_MODEL[kind]}) for provider “${kind}”.`
    };
  }
  return null;
}

/**
 * Turns a `ProviderStatus.keySource` (e.g. `OPENAI_API_KEY or
 * /root/.cellmate/config.json (apiKeys.openai)`) into an instruction:
 * "start Jupyter with OPENAI_API_KEY in its environment (or put it in
 * /root/.cellmate/config.json (apiKeys.openai) on the server)".
 */
export function keyInstructions(keySource: string): string {
  const parts = splitSources(keySource);
  const env = parts.filter((p) => ENV_VAR.test(p));
  const files = parts.filter((p) => !ENV_VAR.test(p));
  const file = `put it in ${files.length ? files.join(' or ') : CONFIG_FILE} on the server`;
  return env.length ? `start Jupyter with ${env.join(' or ')} in its environment (or ${file})` : file;
}

function noProvider(providers: readonly ProviderStatus[]): ISetupProblem {
  const keyed = providers.filter((p) => KEYED.includes(p.kind));
  const ready = keyed.filter((p) => p.keyConfigured).map((p) => p.kind);
  if (ready.length) {
    return {
      reason: 'no-provider',
      message:
        `Cellmate has no model yet. The server has an API key for ${ready.join(' and ')}: ` +
        'set Settings → Cellmate → provider to it and choose a model.'
    };
  }
  const envVars = new Set<string>();
  let file = CONFIG_FILE;
  for (const part of keyed.flatMap((p) => splitSources(p.keySource))) {
    if (/^[A-Z][A-Z0-9_]*$/.test(part)) {
      envVars.add(part);
    } else if (/config\.json/.test(part)) {
      file = part.replace(/\s*\(.*\)$/, '');
    }
  }
  const keys = envVars.size ? [...envVars].join(' or ') : 'OPENAI_API_KEY or ANTHROPIC_API_KEY';
  return {
    reason: 'no-provider',
    message:
      'Cellmate has no model yet. Set Settings → Cellmate → provider and model, ' +
      `and start Jupyter with ${keys} in its environment (or put it in ${file} on the server).`
  };
}

function splitSources(keySource: string | undefined): string[] {
  return (keySource ?? '')
    .split(/\s+or\s+/)
    .map((p) => p.trim())
    .filter(Boolean);
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
