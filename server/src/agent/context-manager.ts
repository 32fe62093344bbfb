/**
 * Keeps one chat's requests inside the model's window for one turn (CTX-1, CTX-3): counts
 * each step's usage, estimates the next request before it is sent, and compacts first when
 * it would pass the threshold — prune, then summarise — or when the provider refuses a
 * request as too long. The history itself is never changed: only the compaction state
 * (journaled with the chat) and so the view the model is sent.
 */
import type {
  ChatEvent,
  CompactionItem,
  ContextStatus,
  ModelSettings,
  TokenUsage,
  UsageItem
} from '@cellmate/protocol';
import type { LanguageModel, ModelMessage, ToolResultPart } from 'ai';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { CompactionState } from './context-view.js';
import { newItemId } from '../base/ids.js';
import { costOf, type ModelFacts } from '../providers/model-facts.js';
import {
  composeSummary,
  countPrunable,
  filesTouched,
  personRequests,
  pruneBoundary,
  summaryPivot,
  SUMMARY_SYSTEM,
  transcriptText,
  withPrune
} from './compaction.js';
import {
  CHARS_PER_TOKEN,
  contextView,
  isPrunable,
  messagesTokens,
  prunedOutputPath,
  toolResultText
} from './context-view.js';
import { previousRequestLength } from './prompt-cache.js';
import { overflowFigures } from './provider-errors.js';
import { streamStep } from './stream-step.js';
import { addUsage, ZERO_USAGE } from './usage.js';

/** Default share of the usable window at which a chat compacts. */
export const DEFAULT_COMPACT_AT = 0.85;
/** Output tokens kept free for the answer at most (a model's max output can be most of its window). */
export const MAX_RESERVED_OUTPUT = 32_000;
/** Output tokens kept free when the model's max output is unknown. */
export const DEFAULT_RESERVED_OUTPUT = 8_192;

/** What a context manager reads and writes of its chat. */
export interface ChatContextPort {
  chatId: string;
  workspace: string;
  /** The chat's compaction state now. */
  state(): CompactionState | undefined;
  setState(state: CompactionState): void;
  /** The chat's usage so far (the meter's totals). */
  total(): TokenUsage;
  emit(event: ChatEvent): void;
  /** A few lines on the live kernel(s) the chat used: names, types, shapes, columns. */
  kernelState?(signal: AbortSignal): Promise<string | undefined>;
}

/** Options of {@link ContextManager}. */
export interface ContextManagerOptions {
  port: ChatContextPort;
  settings: ModelSettings;
  facts: ModelFacts;
  model: LanguageModel;
  /** The model that writes compaction summaries (the fast tier); absent: `model`. */
  summaryModel?: LanguageModel;
  turnId: string;
  /** Estimated tokens of what every request carries besides the messages (system prompt, tool declarations). */
  fixedTokens: number;
}

/** The window, the room kept for the answer, and the compaction threshold, in tokens. */
export interface ContextBudget {
  window?: number;
  reservedOutput: number;
  compactAtTokens?: number;
}

/** The budget for a model's facts and the person's threshold. Pure. */
export function contextBudget(facts: ModelFacts, compactAt: number | undefined): ContextBudget {
  const share = typeof compactAt === 'number' && compactAt >= 0.3 && compactAt <= 0.98 ? compactAt : DEFAULT_COMPACT_AT;
  if (!facts.window)
    return { reservedOutput: Math.min(facts.maxOutput ?? DEFAULT_RESERVED_OUTPUT, MAX_RESERVED_OUTPUT) };
  const reservedOutput = Math.min(
    facts.maxOutput ?? DEFAULT_RESERVED_OUTPUT,
    MAX_RESERVED_OUTPUT,
    Math.floor(facts.window / 4)
  );
  return { window: facts.window, reservedOutput, compactAtTokens: Math.floor((facts.window - reservedOutput) * share) };
}

/**
 * Windows learned from a server's overflow errors, by model, for the companion's lifetime:
 * a server serving a smaller window than configured refuses once, not on every turn.
 */
const learnedWindows = new Map<string, number>();

function modelKey(settings: ModelSettings): string {
  return `${settings.provider}|${settings.baseUrl ?? ''}|${settings.model}`;
}

/** `provider/model` as the pane shows it. */
export function modelLabel(settings: ModelSettings): string {
  return `${settings.provider}/${settings.model || settings.provider}`;
}

/** One turn's context bookkeeping for one chat. */
export class ContextManager {
  private budget: ContextBudget;
  /** The provider's count of the last request and how many view messages it covered (invalid after a compaction). */
  private baseline: { input: number; viewLength: number } | undefined;
  private turnUsage: TokenUsage = { ...ZERO_USAGE };
  private requests = 0;
  /** View length of the last request sent (where its newest message ended: a cache breakpoint). */
  private lastViewLength = 0;
  /** The cache boundary of the step being sent. */
  private boundary = 0;
  /** Usage of requests the meter has not counted yet (the summariser's). */
  private unreported: TokenUsage | undefined;

  constructor(private readonly options: ContextManagerOptions) {
    const learned = learnedWindows.get(modelKey(options.settings));
    const facts =
      learned && (!options.facts.window || learned < options.facts.window)
        ? { ...options.facts, window: learned }
        : options.facts;
    this.budget = contextBudget(facts, options.settings.compactAt);
  }

  /** The conversation whose history this manager keeps (a chat's id, or a worker's). */
  get conversationId(): string {
    return this.options.port.chatId;
  }

  /** The messages the model is sent for this history. */
  view(messages: readonly ModelMessage[]): ModelMessage[] {
    return contextView(messages, this.options.port.state(), this.options.port.chatId);
  }

  /** How many view messages the previous request carried (its end is read from the provider's cache now). */
  cacheBoundary(): number {
    return this.boundary;
  }

  /** Estimated input tokens of a request carrying `view`. */
  estimate(view: readonly ModelMessage[]): number {
    const b = this.baseline;
    if (b && b.viewLength <= view.length) return b.input + messagesTokens(view.slice(b.viewLength));
    return this.options.fixedTokens + messagesTokens(view);
  }

  /** Before a step: compacts when the request would pass the threshold. Returns the view to send. */
  async beforeStep(messages: readonly ModelMessage[], signal: AbortSignal): Promise<ModelMessage[]> {
    let view = this.view(messages);
    const limit = this.budget.compactAtTokens;
    let compacted = false;
    if (limit !== undefined && this.estimate(view) > limit) {
      compacted = (await this.compact(messages, 'auto', signal)) !== undefined;
      view = this.view(messages);
    }
    this.boundary = this.lastViewLength > 0 && !compacted ? this.lastViewLength : previousRequestLength(view);
    this.lastViewLength = view.length;
    return view;
  }

  /** After a step: its usage (or an estimate when the provider reported none) moves the meter. */
  afterStep(usage: TokenUsage | undefined, view: readonly ModelMessage[]): void {
    this.requests++;
    const used = usage ?? { ...ZERO_USAGE, input: this.estimate(view) };
    if (usage) {
      this.turnUsage = addUsage(this.turnUsage, usage);
      this.baseline = { input: usage.input, viewLength: view.length };
    }
    this.emitStatus(used.input, !usage, usage);
  }

  /**
   * The provider refused the request as too long: compacts harder than the estimate thought
   * necessary. Returns whether anything was compacted (worth one retry).
   */
  async onOverflow(messages: readonly ModelMessage[], signal: AbortSignal, error?: unknown): Promise<boolean> {
    // The server's window is smaller than believed: take the one it states (or most of what it refused) for the rest of the turn.
    const stated = overflowFigures(error);
    const refused = stated.tokens ?? this.estimate(this.view(messages));
    const window = stated.window ?? Math.floor(refused * 0.8);
    if (!this.budget.window || window < this.budget.window) {
      this.budget = contextBudget({ ...this.options.facts, window }, this.options.settings.compactAt);
      learnedWindows.set(modelKey(this.options.settings), window);
    }
    const item = await this.compact(messages, 'overflow', signal);
    return item !== undefined;
  }

  /** The turn's usage item (undefined when no step reported usage). */
  usageItem(): UsageItem | undefined {
    if (this.requests === 0 || (this.turnUsage.input === 0 && this.turnUsage.output === 0)) return undefined;
    const cost = costOf(this.turnUsage, this.options.facts.prices);
    return {
      kind: 'usage',
      id: newItemId(),
      time: new Date().toISOString(),
      turnId: this.options.turnId,
      model: modelLabel(this.options.settings),
      usage: this.turnUsage,
      requests: this.requests,
      ...(cost !== undefined ? { costUsd: cost } : {})
    };
  }

  /**
   * Compacts now: prunes old outputs, then summarises when pruning leaves the request above
   * half the usable window (always, when the person asked or the provider refused).
   * Returns the card it added, or undefined when there was nothing to compact.
   */
  async compact(
    messages: readonly ModelMessage[],
    trigger: CompactionItem['trigger'],
    signal: AbortSignal
  ): Promise<CompactionItem | undefined> {
    const { port } = this.options;
    const before = this.estimate(this.view(messages));
    const usable = this.usable(before);
    const old = port.state();
    const from = old?.summaryUpTo ?? 0;
    // Prune: everything but about 30 % of the usable window of the newest outputs (opencode protects 40k).
    const protect =
      trigger === 'auto' ? Math.min(40_000, Math.floor(usable * 0.3)) : Math.min(20_000, Math.floor(usable * 0.15));
    const boundary = Math.max(old?.pruneBefore ?? 0, pruneBoundary(messages, from, protect));
    const prunedOutputs = countPrunable(messages, Math.max(old?.pruneBefore ?? 0, from), boundary);
    let state = withPrune(old, boundary);
    if (prunedOutputs > 0) await this.saveFullOutputs(messages, Math.max(old?.pruneBefore ?? 0, from), boundary);
    this.setState(state);
    let summarizedMessages = 0;
    let summary: string | undefined;
    const afterPrune = this.options.fixedTokens + messagesTokens(this.view(messages));
    if (trigger !== 'auto' || afterPrune > usable * 0.5) {
      const pivot = summaryPivot(messages, from, Math.floor(usable * 0.25));
      if (pivot !== undefined && pivot > from) {
        summary = await this.summarise(messages, from, pivot, old?.summary, usable, signal);
        summarizedMessages = pivot - from;
        const users =
          messages.slice(from, pivot).filter((m) => m.role === 'user').length +
          (old?.summary ? (old.summarizedUsers ?? 1) : 0);
        state = {
          summaryUpTo: pivot,
          summary,
          pruneBefore: Math.max(state.pruneBefore, pivot),
          summarizedUsers: Math.max(1, users)
        };
        this.setState(state);
      }
    }
    if (prunedOutputs === 0 && summarizedMessages === 0) {
      if (old) this.setState(old);
      return undefined;
    }
    const after = this.options.fixedTokens + messagesTokens(this.view(messages));
    const item: CompactionItem = {
      kind: 'compaction',
      id: newItemId(),
      time: new Date().toISOString(),
      turnId: this.options.turnId,
      trigger,
      prunedOutputs,
      summarizedMessages,
      tokensBefore: before,
      tokensAfter: after,
      ...(summary ? { summary } : {})
    };
    port.emit({ type: 'item-added', item });
    this.emitStatus(after, true);
    return item;
  }

  /** The usable window (window − reserved output); with an unknown window, most of what was just tried. */
  private usable(estimate: number): number {
    if (this.budget.window) return this.budget.window - this.budget.reservedOutput;
    return Math.max(4_000, Math.floor((this.baseline?.input ?? estimate) * 0.7));
  }

  private setState(state: CompactionState): void {
    this.options.port.setState(state);
    this.baseline = undefined; // the provider's last count was of another view
  }

  /** Saves the full text of each output about to become a placeholder, where the placeholder says. */
  private async saveFullOutputs(messages: readonly ModelMessage[], from: number, to: number): Promise<void> {
    const { chatId, workspace } = this.options.port;
    for (let i = from; i < to; i++) {
      const m = messages[i]!;
      if (m.role !== 'tool') continue;
      for (const part of m.content) {
        if (part.type !== 'tool-result' || !isPrunable(part)) continue;
        const file = path.join(workspace, prunedOutputPath(chatId, part.toolCallId));
        await mkdir(path.dirname(file), { recursive: true });
        await writeFile(file, toolResultText(part as ToolResultPart).text, { encoding: 'utf8', flag: 'wx' }).catch(
          () => undefined
        ); // saved by an earlier compaction
      }
    }
  }

  /** The summary of messages [from, pivot): the model's, else the person's requests; with files touched and the kernel's state. */
  private async summarise(
    messages: readonly ModelMessage[],
    from: number,
    pivot: number,
    previous: string | undefined,
    usable: number,
    signal: AbortSignal
  ): Promise<string> {
    const part = messages.slice(from, pivot);
    const { port } = this.options;
    const text = transcriptText(part, previous, port.chatId, Math.floor(usable * 0.5) * 3);
    const [modelSummary, kernelState] = await Promise.all([
      this.askModel(text, signal),
      port.kernelState ? port.kernelState(signal).catch(() => undefined) : Promise.resolve(undefined)
    ]);
    return composeSummary({
      modelSummary,
      requests: personRequests(part),
      files: filesTouched(messages.slice(0, pivot)),
      kernelState,
      previous
    });
  }

  private async askModel(text: string, signal: AbortSignal): Promise<string | undefined> {
    const outcome = await streamStep(
      {
        model: this.options.summaryModel ?? this.options.model,
        system: SUMMARY_SYSTEM,
        messages: [{ role: 'user', content: text }],
        tools: [],
        signal,
        idleTimeoutMs: 60_000,
        maxRetries: 1,
        maxOutputTokens: 1_500,
        purpose: 'summary'
      },
      { onTextDelta: () => undefined, onToolCall: () => undefined }
    );
    if (outcome.usage) {
      this.turnUsage = addUsage(this.turnUsage, outcome.usage);
      this.unreported = addUsage(this.unreported ?? ZERO_USAGE, outcome.usage);
      this.requests++;
    }
    if (outcome.end.kind !== 'finished') return undefined;
    return outcome.text.trim() || undefined;
  }

  private emitStatus(usedTokens: number, estimated: boolean, stepUsage?: TokenUsage): void {
    const { port, settings, facts } = this.options;
    let total = stepUsage ? addUsage(port.total(), stepUsage) : port.total();
    if (this.unreported) {
      total = addUsage(total, this.unreported);
      this.unreported = undefined;
    }
    const cost = costOf(total, facts.prices);
    const status: ContextStatus = {
      model: modelLabel(settings),
      usedTokens,
      estimated,
      windowSource: facts.windowSource,
      reservedOutput: this.budget.reservedOutput,
      total,
      ...(this.budget.window ? { window: this.budget.window } : {}),
      ...(this.budget.compactAtTokens !== undefined ? { compactAtTokens: this.budget.compactAtTokens } : {}),
      ...(cost !== undefined ? { costUsd: cost } : {})
    };
    port.emit({ type: 'context', context: status });
  }
}

/** Estimated tokens of a system prompt and tool declarations. */
export function fixedTokens(
  system: string,
  tools: ReadonlyArray<{ name: string; description: string; parameters: unknown }>
): number {
  let chars = system.length;
  for (const t of tools) chars += t.name.length + t.description.length + JSON.stringify(t.parameters ?? {}).length;
  return Math.ceil(chars / CHARS_PER_TOKEN);
}
