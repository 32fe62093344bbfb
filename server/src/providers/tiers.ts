/**
 * The two model tiers and a chat's own choice of model. `main` runs a chat's turns; `fast`
 * runs the small requests where latency matters more than judgement: inline completions,
 * compaction summaries, workers marked fast, a classifier. Both come from the same settings
 * the pane sends (`ModelSettings`, its `fast` field); an empty `fast` is the `main` model.
 */
import { PROVIDER_KINDS, type ModelSettings, type ModelTier, type TierModel } from '@cellmate/protocol';
import { providerUnavailable } from '../base/errors.js';

/**
 * The model settings of `tier`. The `fast` tier keeps the main settings' image and
 * compaction preferences but not `contextWindow`, which describes the main model only;
 * `scriptPath` carries over when both tiers are scripted (one script plays both). Pure.
 */
export function modelForTier(settings: ModelSettings, tier: ModelTier): ModelSettings {
  const { fast, ...main } = settings;
  if (tier === 'main' || !fast || !fast.provider || (!fast.model.trim() && fast.provider !== 'scripted')) return main;
  const { contextWindow: _window, scriptPath, baseUrl: _baseUrl, ...shared } = main;
  return {
    ...shared,
    provider: fast.provider,
    model: fast.model.trim() || (fast.provider === 'scripted' ? main.model : ''),
    ...(fast.provider === 'openai-compatible' && fast.baseUrl ? { baseUrl: fast.baseUrl } : {}),
    ...(fast.provider === 'scripted' && scriptPath !== undefined ? { scriptPath } : {})
  };
}

/** Whether two settings name the same model on the same server. Pure. */
export function sameModel(a: TierModel, b: TierModel): boolean {
  return (
    a.provider === b.provider &&
    a.model === b.model &&
    (a.provider !== 'openai-compatible' || trimUrl(a.baseUrl) === trimUrl(b.baseUrl))
  );
}

/**
 * The settings a chat's turn runs with: the `main` tier, or the model the person picked for
 * the chat. A picked `openai-compatible` model runs on a server the current settings name
 * (either tier): a chat file comes from the workspace, and a repository must not be able
 * to send the person's key to a server of its choosing. Pure.
 * @throws CellmateError(ProviderUnavailable) when the choice names a server the settings do not
 */
export function applyChatModel(settings: ModelSettings, choice: TierModel | undefined): ModelSettings {
  if (!choice || sameModel(choice, modelForTier(settings, 'main'))) return settings;
  checkChoice(choice, settings);
  // The main model's window does not describe another model: its facts come from the server or the catalog.
  const { contextWindow: _window, baseUrl: _baseUrl, ...rest } = settings;
  return {
    ...rest,
    provider: choice.provider,
    model: choice.model,
    ...(choice.provider === 'openai-compatible' ? { baseUrl: trimUrl(choice.baseUrl) } : {})
  };
}

/**
 * Checks a chat's model choice against the settings: a known provider, a model id, and for
 * `openai-compatible` a base URL one of the tiers uses.
 * @throws CellmateError(ProviderUnavailable) with what to do
 */
export function checkChoice(choice: TierModel, settings: ModelSettings): void {
  if (typeof choice !== 'object' || choice === null || !PROVIDER_KINDS.includes(choice.provider)) {
    throw providerUnavailable(
      `The chat's model names an unknown provider "${String(choice.provider)}". Pick a model in the header again.`
    );
  }
  if (
    typeof choice.model !== 'string' ||
    !choice.model.trim() ||
    (choice.baseUrl !== undefined && typeof choice.baseUrl !== 'string')
  )
    throw providerUnavailable("The chat's model has no id. Pick a model in the header again.");
  if (choice.provider === 'openai-compatible') {
    const servers = [modelForTier(settings, 'main'), modelForTier(settings, 'fast')]
      .filter((t) => t.provider === 'openai-compatible' && t.baseUrl)
      .map((t) => trimUrl(t.baseUrl));
    if (!servers.includes(trimUrl(choice.baseUrl))) {
      throw providerUnavailable(
        `The chat's model ${choice.model} is served by ${choice.baseUrl ?? '(no server)'}, which Settings → Cellmate does not name. ` +
          "Pick a model in the header again (or set that server as a tier's base URL)."
      );
    }
  }
}

function trimUrl(url: string | undefined): string {
  return (url ?? '').trim().replace(/\/+$/, '');
}
