/**
 * Inline completions (JupyterLab's inline completer, through `inline/complete`): one short
 * request to the `fast` tier per pause in typing, streamed back as it arrives. The pane
 * debounces and cancels; a cancelled request aborts the model's HTTP request here, so no
 * answer is computed for text that is no longer there.
 */
import type { InlineCompletionParams } from '@cellmate/protocol';
import { streamStep } from '../agent/stream-step.js';
import { loadConfigFile } from '../config/config-file.js';
import type { Logger } from '../config/logger.js';
import { providerUnavailable } from '../errors.js';
import { createLanguageModel } from '../providers/create-model.js';
import { modelForTier } from '../providers/tiers.js';
import { cleanCompletion, INLINE_SYSTEM, inlinePrompt } from './inline-prompt.js';

/** The answer's tokens at most: a completion is a line or a short block. */
export const INLINE_MAX_TOKENS = 256;
/** How long the kernel may take to say what it holds before the completion goes without it. */
export const KERNEL_NAMES_BUDGET_MS = 1_500;

export interface InlineServiceOptions {
  workspace: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  fetch?: typeof globalThis.fetch;
  /**
   * The names the asking connection's focused notebook kernel holds (silent inspection),
   * when that notebook is `notebookPath`; undefined when none is focused or it does not answer.
   */
  kernelNames?: (origin: string | undefined, notebookPath: string | undefined, signal: AbortSignal) => Promise<string | undefined>;
}

export class InlineCompletionService {
  constructor(private readonly options: InlineServiceOptions) {}

  /**
   * Completes at the cursor with the fast tier of `params.model`; `onDelta` gets the text as
   * it streams (already cleaned: what the ghost text may show). Resolves with the whole text,
   * or '' when aborted.
   * @throws CellmateError(ProviderUnavailable) when the fast tier cannot run
   */
  async complete(params: InlineCompletionParams, origin: string | undefined, signal: AbortSignal, onDelta: (text: string) => void): Promise<{ text: string }> {
    const settings = modelForTier(params.model, 'fast');
    const config = await loadConfigFile(this.options.env, signal);
    const model = await createLanguageModel(settings, { env: this.options.env, config, workspace: this.options.workspace, fetch: this.options.fetch });
    const kernelSignal = AbortSignal.any([signal, AbortSignal.timeout(KERNEL_NAMES_BUDGET_MS)]);
    const names = await this.options.kernelNames?.(origin, params.notebookPath, kernelSignal).catch(() => undefined);
    if (signal.aborted) return { text: '' };
    let raw = '';
    let shown = '';
    const outcome = await streamStep(
      { model, system: INLINE_SYSTEM, messages: [{ role: 'user', content: inlinePrompt(params, names) }], tools: [], signal, idleTimeoutMs: 30_000, maxRetries: 0, maxOutputTokens: INLINE_MAX_TOKENS },
      {
        onTextDelta: (delta) => {
          raw += delta;
          const clean = cleanCompletion(raw, params.prefix, params.suffix);
          // Only growth is streamed: a cleaned text that changed its start (a fence taken off) waits for the result.
          if (clean.startsWith(shown) && clean.length > shown.length) {
            onDelta(clean.slice(shown.length));
            shown = clean;
          }
        },
        onToolCall: () => undefined
      }
    );
    if (outcome.end.kind === 'aborted') return { text: '' };
    if (outcome.end.kind === 'error') {
      const error = outcome.end.error;
      throw providerUnavailable(`The fast model (${settings.provider}/${settings.model || settings.provider}) failed: ${error instanceof Error ? error.message : String(error)}`, error);
    }
    return { text: cleanCompletion(raw, params.prefix, params.suffix) };
  }
}
