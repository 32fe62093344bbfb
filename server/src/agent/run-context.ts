/**
 * One run's context manager (CTX-1, CTX-3), built the same way for a chat's turn and for a
 * background worker's run: the model's facts (its window, from the settings, the catalog or
 * an OpenAI-compatible server's `/v1/models`), the compaction state and the meter's totals
 * kept with the conversation's own transcript, its cards and meter updates journaled there,
 * and summaries written by the fast tier.
 */
import type { ChatEvent, ModelSettings, TokenUsage } from '@cellmate/protocol';
import type { LanguageModel } from 'ai';
import type { Logger } from '../config/logger.js';
import { createLanguageModel, type ProviderEnv } from '../providers/create-model.js';
import { resolveApiKey } from '../providers/credentials.js';
import { modelFacts } from '../providers/model-facts.js';
import { modelForTier, sameModel } from '../providers/tiers.js';
import { ContextManager, type ChatContextPort } from './context-manager.js';
import type { CompactionState } from './context-view.js';
import { ZERO_USAGE } from './usage.js';

/** What a transcript store keeps of a conversation for its context manager (a `ChatStore` is one). */
export interface ConversationRecords {
  get(id: string): { compaction?: CompactionState; chat: { context?: { total: TokenUsage } } } | undefined;
  setCompaction(id: string, state: CompactionState): void;
}

/** Where a run's models come from, and where a fast tier that cannot run is reported. */
export interface RunModels extends ProviderEnv {
  logger: Pick<Logger, 'warn'>;
}

/** What {@link createRunContext} needs besides {@link RunModels}. */
export interface RunContextOptions {
  /** The conversation whose transcript keeps the state: a chat's id, or a worker's own. */
  conversationId: string;
  records: ConversationRecords;
  /** Journals an event in that conversation's transcript (and shows it). */
  emit(event: ChatEvent): void;
  settings: ModelSettings;
  model: LanguageModel;
  turnId: string;
  /** Estimated tokens of the system prompt and tool declarations (`fixedTokens`). */
  fixedTokens: number;
  /** The fast tier's model when the caller made it already; absent: made here. */
  fast?: LanguageModel;
  /** A few lines on the live state the run used, for a summary (CTX-3). */
  kernelState?(signal: AbortSignal): Promise<string | undefined>;
}

/**
 * The `fast` tier's model when it differs from the main one, else undefined (callers then
 * use the main model). A fast tier that cannot run must not stop a run: what it would do
 * (summaries, the Auto reviewer) falls back to the main model, with a warning.
 */
export async function fastTierModel(settings: ModelSettings, models: RunModels): Promise<LanguageModel | undefined> {
  const fast = modelForTier(settings, 'fast');
  if (sameModel(fast, settings)) return undefined;
  return createLanguageModel(fast, models).catch((error: unknown) => {
    models.logger.warn(
      `the fast tier cannot run (${error instanceof Error ? error.message : String(error)}); using the main model`
    );
    return undefined;
  });
}

/** A run's context manager over its conversation's records (see the module comment). */
export async function createRunContext(models: RunModels, options: RunContextOptions): Promise<ContextManager> {
  const { settings, records, conversationId: id } = options;
  const apiKey =
    settings.provider === 'openai-compatible'
      ? resolveApiKey('openai-compatible', models.env, models.config).value
      : undefined;
  const facts = await modelFacts(settings, {
    ...(apiKey ? { apiKey } : {}),
    ...(models.fetch ? { fetch: models.fetch } : {})
  });
  const port: ChatContextPort = {
    chatId: id,
    workspace: models.workspace,
    state: () => records.get(id)?.compaction,
    setState: (state) => records.setCompaction(id, state),
    total: (): TokenUsage => records.get(id)?.chat.context?.total ?? { ...ZERO_USAGE },
    emit: (event) => options.emit(event),
    ...(options.kernelState ? { kernelState: options.kernelState } : {})
  };
  // Summaries run on the fast tier (CTX-3): a summary is a short, self-contained request.
  const summaryModel = options.fast ?? (await fastTierModel(settings, models));
  return new ContextManager({
    port,
    settings,
    facts,
    model: options.model,
    turnId: options.turnId,
    fixedTokens: options.fixedTokens,
    ...(summaryModel ? { summaryModel } : {})
  });
}
