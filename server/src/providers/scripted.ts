import { statSync } from 'node:fs';
import { appendFile, readFile } from 'node:fs/promises';
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3Usage
} from '@ai-sdk/provider';
import { resolveWorkspacePath } from '../workspace/workspace-path.js';
import { demoScript } from './demo-script.js';
import {
  chunkText,
  DEFAULT_CHUNK_DELAY_MS,
  EXHAUSTED_TEXT,
  parseScript,
  scriptPosition,
  scriptedVerdict,
  selectStep,
  type Script,
  type ScriptPosition,
  type ScriptStep
} from './scripted-script.js';

/** Options of {@link ScriptedLanguageModel}. */
export interface ScriptedModelOptions {
  /** Workspace root; `scriptPath` is confined to it like the `read` tool's paths. */
  workspace: string;
  /** Workspace-relative script path; empty or undefined → the built-in demo. */
  scriptPath?: string;
  /** When set, each received prompt is appended to this file as one JSON line. */
  scriptLogPath?: string;
}

/** Parsed scripts by real path, with the file version they were parsed from. */
const parsedScripts = new Map<string, { mtimeMs: number; size: number; script: Script }>();

const ZERO_USAGE: LanguageModelV3Usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 }
};

/**
 * A real AI SDK `LanguageModelV3` that replays a JSON script (see `scripted.md`). The
 * script is read on every call, so editing it takes effect on the next step; the position
 * comes from the prompt alone, so replay is deterministic across server restarts.
 */
export class ScriptedLanguageModel implements LanguageModelV3 {
  readonly specificationVersion = 'v3';
  readonly provider = 'cellmate.scripted';
  readonly supportedUrls = {};

  /** The script's confined path, resolved once per model (a model serves one turn). */
  private resolving: ReturnType<typeof resolveWorkspacePath> | undefined;

  constructor(
    readonly modelId: string,
    private readonly options: ScriptedModelOptions
  ) {}

  async doGenerate(_options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
    throw new Error('The scripted provider only streams (doGenerate is not supported).');
  }

  async doStream(options: LanguageModelV3CallOptions): Promise<LanguageModelV3StreamResult> {
    // The built-in demo follows the notebook the person has open (named in the prompt's context).
    const script = this.options.scriptPath?.trim()
      ? await this.loadScript(options.abortSignal)
      : demoScript(options.prompt);
    const position = scriptPosition(options.prompt);
    if (this.options.scriptLogPath) {
      const tools = (options.tools ?? []).map((t) => t.name);
      const line = JSON.stringify({ ...position, tools, prompt: options.prompt });
      await appendFile(this.options.scriptLogPath, `${line}\n`, 'utf8');
    }
    const usage = script.reportUsage ? estimatedUsage(options) : ZERO_USAGE;
    // A compaction's summary request (CTX-3) answers from the prompt, not the script.
    if ((options.providerOptions as { cellmate?: { purpose?: unknown } } | undefined)?.cellmate?.purpose === 'summary')
      return {
        stream: streamStep({ text: scriptedSummary(options), chunkDelayMs: 0 }, position, options.abortSignal, usage)
      };
    // The Auto reviewer's request (SIDE-1) answers from the script's `sidecar` rules and the record it was sent.
    if (
      (options.providerOptions as { cellmate?: { purpose?: unknown } } | undefined)?.cellmate?.purpose === 'sidecar'
    ) {
      const verdict = scriptedVerdict(script, sentRecord(options));
      if (verdict.delayMs > 0) await sleep(verdict.delayMs, options.abortSignal);
      return { stream: streamStep({ text: verdict.text, chunkDelayMs: 0 }, position, options.abortSignal, usage) };
    }
    const step = selectStep(script, position) ?? { text: EXHAUSTED_TEXT };
    return { stream: streamStep(step, position, options.abortSignal, usage) };
  }

  private async loadScript(signal: AbortSignal | undefined): Promise<Script> {
    const scriptPath = this.options.scriptPath!.trim();
    const shown = JSON.stringify(scriptPath);
    this.resolving ??= resolveWorkspacePath(this.options.workspace, scriptPath);
    const resolved = await this.resolving.catch((error: unknown) => {
      this.resolving = undefined;
      throw new Error(`Scripted provider: cannot use script ${shown}: ${(error as Error).message}`);
    });
    // Parsed once per version of the file: a stat per step instead of read + JSON + schema
    // (edits still apply from the next step — they change the mtime or size). A synchronous
    // stat: a few microseconds, against a thread-pool round trip that the benchmarks of the
    // product's own per-step cost would count as the product's.
    let info: { mtimeMs: number; size: number } | undefined;
    try {
      info = statSync(resolved.absolute, { throwIfNoEntry: false });
    } catch {
      info = undefined; // the read below says why
    }
    const cached = info && parsedScripts.get(resolved.absolute);
    if (info && cached && cached.mtimeMs === info.mtimeMs && cached.size === info.size) return cached.script;
    let json: unknown;
    try {
      json = JSON.parse(await readFile(resolved.absolute, { encoding: 'utf8', signal }));
    } catch (error) {
      throw new Error(
        `Scripted provider: cannot load script ${shown} (workspace ${this.options.workspace}): ${(error as Error).message}. ` +
          'Fix the file or clear the script path to use the built-in demo.'
      );
    }
    const script = parseScript(json, `Scripted provider: ${shown}`);
    if (info) parsedScripts.set(resolved.absolute, { mtimeMs: info.mtimeMs, size: info.size, script });
    return script;
  }
}

/** The stream parts of one scripted step, text paced by `chunkDelayMs`, honouring abort. */
function streamStep(
  step: ScriptStep,
  position: ScriptPosition,
  signal: AbortSignal | undefined,
  usage: LanguageModelV3Usage = ZERO_USAGE
): ReadableStream<LanguageModelV3StreamPart> {
  const delay = step.chunkDelayMs ?? DEFAULT_CHUNK_DELAY_MS;
  const parts: Array<{ part: LanguageModelV3StreamPart; paced: boolean }> = [];
  const push = (part: LanguageModelV3StreamPart, paced = false): void => {
    parts.push({ part, paced });
  };
  push({ type: 'stream-start', warnings: [] });
  push({ type: 'response-metadata', id: `scripted-${position.turn}-${position.step}`, modelId: 'scripted' });
  const textId = `text-${position.turn}-${position.step}`;
  if (step.text) {
    push({ type: 'text-start', id: textId });
    for (const chunk of chunkText(step.text)) push({ type: 'text-delta', id: textId, delta: chunk }, true);
    push({ type: 'text-end', id: textId });
  }
  if (step.error !== undefined) {
    push({ type: 'error', error: new Error(step.error) }, true);
    push({ type: 'finish', usage: ZERO_USAGE, finishReason: { unified: 'error', raw: 'scripted-error' } });
  } else {
    (step.toolCalls ?? []).forEach((call, index) => {
      push({
        type: 'tool-call',
        toolCallId: `call_t${position.turn}_s${position.step}_${index}`,
        toolName: call.toolName,
        input: JSON.stringify(call.input ?? {})
      });
    });
    const calls = (step.toolCalls ?? []).length > 0;
    const output =
      usage === ZERO_USAGE
        ? 0
        : Math.ceil(((step.text ?? '').length + JSON.stringify(step.toolCalls ?? []).length) / 4);
    push({
      type: 'finish',
      usage: { ...usage, outputTokens: { total: output, text: output, reasoning: 0 } },
      finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: undefined }
    });
  }

  let index = 0;
  return new ReadableStream<LanguageModelV3StreamPart>({
    async pull(controller) {
      const next = parts[index++];
      if (!next) {
        controller.close();
        return;
      }
      if (next.paced && delay > 0) {
        try {
          await sleep(delay, signal);
        } catch (error) {
          controller.error(error);
          return;
        }
      }
      if (signal?.aborted) {
        controller.error(signal.reason);
        return;
      }
      controller.enqueue(stampSentAt(next.part));
    }
  });
}

/**
 * The placeholder a script's text may contain for measuring delivery (`npm run bench -- turn`):
 * it is replaced, as its chunk leaves the provider, by the wall-clock time in milliseconds
 * with microseconds (`performance.timeOrigin + performance.now()`), so a client can tell how
 * long the delta took to reach it. Only the scripted provider does this.
 */
export const SENT_AT_PLACEHOLDER = '{{sent_at}}';

function stampSentAt(part: LanguageModelV3StreamPart): LanguageModelV3StreamPart {
  if (part.type !== 'text-delta' || !part.delta.includes(SENT_AT_PLACEHOLDER)) return part;
  const now = (performance.timeOrigin + performance.now()).toFixed(3);
  return { ...part, delta: part.delta.replaceAll(SENT_AT_PLACEHOLDER, now) };
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A usage report for a scripted request (a script with `"reportUsage": true`), so the
 * context meter and the turn's usage line show as with a real model: input tokens counted as the request's characters / 4 (no tokenizer: the
 * figure only has to grow with the prompt, deterministically).
 */
function estimatedUsage(options: LanguageModelV3CallOptions): LanguageModelV3Usage {
  const chars = JSON.stringify(options.prompt).length + JSON.stringify(options.tools ?? []).length;
  const input = Math.ceil(chars / 4);
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 0, text: 0, reasoning: 0 }
  };
}

/** The record inside the reviewer's request (`<record>…</record>`), parsed; undefined when absent. */
function sentRecord(options: LanguageModelV3CallOptions): unknown {
  const text = options.prompt
    .filter((m) => m.role === 'user')
    .map((m) =>
      typeof m.content === 'string' ? m.content : m.content.map((p) => (p.type === 'text' ? p.text : '')).join('')
    )
    .join('\n');
  const match = /<record>\n([\s\S]*)\n<\/record>/.exec(text);
  try {
    return match ? (JSON.parse(match[1]!) as unknown) : undefined;
  } catch {
    return undefined;
  }
}

/** The scripted model's summary: the first line of each message it was asked to summarise, bounded. */
function scriptedSummary(options: LanguageModelV3CallOptions): string {
  const text = options.prompt
    .filter((m) => m.role === 'user')
    .map((m) =>
      typeof m.content === 'string' ? m.content : m.content.map((p) => (p.type === 'text' ? p.text : '')).join(' ')
    )
    .join('\n');
  const asked = text
    .split('\n')
    .filter((l) => l.startsWith('Person: '))
    .map((l) => `- ${l.slice(8, 200)}`);
  return ["Summary (scripted provider): the conversation so far, in the person's words:", ...asked.slice(-12)].join(
    '\n'
  );
}
