/**
 * Inline completions (JupyterLab's inline completer, through `inline/complete`): one short
 * request to the `fast` tier per pause in typing, streamed back as it arrives. The pane
 * debounces and cancels; a cancelled request aborts the model's HTTP request here, so no
 * answer is computed for text that is no longer there.
 */
import type { InlineCompletionParams } from '@cellmate/protocol';
import { setTimeout as delay } from 'node:timers/promises';
import { streamStep } from '../agent/stream-step.js';
import { loadConfigFile } from '../config/config-file.js';
import type { Logger } from '../config/logger.js';
import { providerUnavailable } from '../base/errors.js';
import { createLanguageModel } from '../providers/create-model.js';
import { knownKeys } from '../providers/credentials.js';
import { modelForTier } from '../providers/tiers.js';
import { cleanCompletion, INLINE_SYSTEM, inlinePrompt } from './inline-prompt.js';

/** The answer's tokens at most: a completion is a line or a short block. */
export const INLINE_MAX_TOKENS = 256;
/**
 * How long a completion waits for the kernel to say what it holds: the first time (the
 * companion connects to the notebook's kernel), and later, when the names it said last time
 * are at hand and serve if it is slow (a busy kernel answers only after its running cell).
 */
export const KERNEL_NAMES_FIRST_WAIT_MS = 4_000;
export const KERNEL_NAMES_WAIT_MS = 300;
/** An inspection is given up after this long. */
const KERNEL_NAMES_TIMEOUT_MS = 15_000;

export interface InlineServiceOptions {
  workspace: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  fetch?: typeof globalThis.fetch;
  /**
   * The names the asking connection's focused notebook kernel holds (silent inspection),
   * when that notebook is `notebookPath`; undefined when none is focused or it does not answer.
   */
  kernelNames?: (
    origin: string | undefined,
    notebookPath: string | undefined,
    signal: AbortSignal
  ) => Promise<string | undefined>;
  /** Hides known secrets in what goes back to the pane (the registry's redactor). */
  redact?: (text: string) => string;
}

export class InlineCompletionService {
  /** The names each connection's notebook kernel said last, and the inspection in flight (one at a time). */
  private readonly names = new Map<string, { last?: string; pending?: Promise<string | undefined> }>();

  constructor(private readonly options: InlineServiceOptions) {}

  /**
   * The kernel's names for a completion: a fresh inspection when it answers in time, else
   * the names it gave last. At most one inspection per connection and notebook runs at once,
   * so a burst of keystrokes never queues silent executes behind a busy kernel's cell.
   */
  private async kernelNames(
    origin: string | undefined,
    notebookPath: string | undefined,
    signal: AbortSignal
  ): Promise<string | undefined> {
    const inspect = this.options.kernelNames;
    if (!inspect) return undefined;
    const key = `${origin ?? ''}\u0000${notebookPath ?? ''}`;
    let entry = this.names.get(key);
    if (!entry) {
      if (this.names.size >= 64) this.names.delete(this.names.keys().next().value!); // connections come and go
      this.names.set(key, (entry = {}));
    }
    const state = entry;
    state.pending ??= inspect(origin, notebookPath, AbortSignal.timeout(KERNEL_NAMES_TIMEOUT_MS))
      .then((names) => {
        state.last = names;
        return names;
      })
      .catch(() => state.last)
      .finally(() => (state.pending = undefined));
    const wait = state.last === undefined ? KERNEL_NAMES_FIRST_WAIT_MS : KERNEL_NAMES_WAIT_MS;
    const stale = state.last;
    return Promise.race([state.pending, delay(wait, stale, { signal }).catch(() => stale)]);
  }

  /**
   * Completes at the cursor with the fast tier of `params.model`; `onDelta` gets the text as
   * it streams (already cleaned: what the ghost text may show). Resolves with the whole text,
   * or '' when aborted.
   * @throws CellmateError(ProviderUnavailable) when the fast tier cannot run
   */
  async complete(
    params: InlineCompletionParams,
    origin: string | undefined,
    signal: AbortSignal,
    onDelta: (text: string) => void
  ): Promise<{ text: string }> {
    const settings = modelForTier(params.model, 'fast');
    const config = await loadConfigFile(this.options.env, signal);
    const model = await createLanguageModel(settings, {
      env: this.options.env,
      config,
      workspace: this.options.workspace,
      fetch: this.options.fetch
    });
    const names = await this.kernelNames(origin, params.notebookPath, signal);
    if (signal.aborted) return { text: '' };
    let raw = '';
    let shown = '';
    const outcome = await streamStep(
      {
        model,
        system: INLINE_SYSTEM,
        messages: [{ role: 'user', content: inlinePrompt(params, names) }],
        tools: [],
        signal,
        idleTimeoutMs: 30_000,
        maxRetries: 0,
        maxOutputTokens: INLINE_MAX_TOKENS
      },
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
      // A provider's error text is the server's: it may echo the key it was sent.
      const said = knownKeys(this.options.env, config).reduce(
        (text, key) => text.split(key).join('[redacted]'),
        error instanceof Error ? error.message : String(error)
      );
      throw providerUnavailable(
        `The fast model (${settings.provider}/${settings.model || settings.provider}) failed: ${this.options.redact ? this.options.redact(said) : said}`
      );
    }
    return { text: cleanCompletion(raw, params.prefix, params.suffix) };
  }
}
