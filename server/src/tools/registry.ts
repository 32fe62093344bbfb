import type { ToolActor } from '@cellmate/protocol';
import { jsonSchema, tool, type Tool } from 'ai';
import { Emitter, type Event } from 'vscode-jsonrpc/node.js';
import { z } from 'zod';
import type { ToolContext, ToolDefinition, ToolOutput, ToolTier } from './define-tool.js';
import { FatalToolError, ToolInputError } from './errors.js';
import { shapeOutput } from './output-shaping.js';
import { formatValidationError } from './validation-message.js';

/** Default per-call budget when a tool sets no `timeoutMs`. */
export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;

/** The outcome of one {@link ToolRegistry.call}. Fatal errors are thrown instead. */
export type ToolCallResult =
  | ({ ok: true; durationMs: number } & ToolOutput)
  | {
      ok: false;
      /** `error`: the model gets `output` and may try again; `aborted`: stopped by the user. */
      status: 'error' | 'aborted';
      /** The message the model receives as the tool's result. */
      output: string;
      title: string;
      durationMs: number;
    };

/** Which tools a surface (a mode, a sub-agent) may see. Seam for SPEC TIER-2/MODE-2. */
export interface ToolSurface {
  /** Highest tier visible; `exec` sees everything. */
  maxTier: ToolTier;
}

const TIER_RANK: Record<ToolTier, number> = { read: 0, write: 1, exec: 2 };

/** One finished call, for logging and (later) the audit trail and metrics (SPEC HARN-7). */
export interface ToolCallRecord {
  name: string;
  actor: ToolActor;
  chatId: string;
  /** `ok`, `error` (the model got an error result), `aborted`, or `fatal` (ended the turn). */
  status: 'ok' | 'error' | 'aborted' | 'fatal';
  durationMs: number;
}

/**
 * The one wrapper every tool call goes through: lookup → argument validation → timeout →
 * execute → timing; errors are classified into respond-to-model and fatal (thrown).
 * Later seams (policy, approval, audit, output shaping) slot in around `execute` here.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition>();
  private readonly callEmitter = new Emitter<ToolCallRecord>();

  /** Fires after every call (success or failure). */
  readonly onDidCall: Event<ToolCallRecord> = this.callEmitter.event;

  constructor(tools: Iterable<ToolDefinition> = []) {
    for (const t of tools) this.register(t);
  }

  /** Adds a tool; names are unique. */
  register(definition: ToolDefinition): void {
    if (this.tools.has(definition.name)) throw new Error(`Tool "${definition.name}" is already registered.`);
    this.tools.set(definition.name, definition);
  }

  /** Tools visible on a surface, sorted by name. */
  list(surface: ToolSurface = { maxTier: 'exec' }): ToolDefinition[] {
    return [...this.tools.values()]
      .filter((t) => TIER_RANK[t.tier] <= TIER_RANK[surface.maxTier])
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The JSON schema the model sees for one tool (snapshot-tested). */
  inputJsonSchema(name: string): Record<string, unknown> {
    const definition = this.tools.get(name);
    if (!definition) throw new Error(`No tool "${name}".`);
    // `$schema` is noise for providers (and some strict validators reject unknown keywords).
    const { $schema: _dialect, ...schema } = z.toJSONSchema(definition.parameters, { io: 'input' }) as Record<string, unknown>;
    return schema;
  }

  /** The description the model sees: the tool's text plus its example calls. */
  modelDescription(name: string): string {
    const definition = this.tools.get(name);
    if (!definition) throw new Error(`No tool "${name}".`);
    const examples = definition.examples
      .map((e) => `- ${e.comment}: ${definition.name}(${JSON.stringify(e.args)})`)
      .join('\n');
    return examples ? `${definition.description.trim()}\n\nExample calls:\n${examples}` : definition.description.trim();
  }

  /**
   * The AI SDK tool set, declared without `execute` so the agent loop owns execution.
   * Schemas are passed as plain JSON schema without a validator: the registry is the one
   * place arguments are validated (with model-actionable messages).
   */
  toAiSdkTools(surface?: ToolSurface): Record<string, Tool> {
    const set: Record<string, Tool> = {};
    for (const definition of this.list(surface)) {
      set[definition.name] = tool({
        description: this.modelDescription(definition.name),
        inputSchema: jsonSchema(this.inputJsonSchema(definition.name))
      });
    }
    return set;
  }

  /**
   * Calls a tool by name with unvalidated arguments.
   * @throws FatalToolError when the failure must end the turn
   */
  async call(name: string, rawArgs: unknown, ctx: ToolContext): Promise<ToolCallResult> {
    try {
      const result = await this.callUnobserved(name, rawArgs, ctx);
      this.callEmitter.fire({ name, actor: ctx.actor, chatId: ctx.chatId, status: result.ok ? 'ok' : result.status, durationMs: result.durationMs });
      return result;
    } catch (error) {
      this.callEmitter.fire({ name, actor: ctx.actor, chatId: ctx.chatId, status: 'fatal', durationMs: 0 });
      throw error;
    }
  }

  /** Stops notifying observers. */
  dispose(): void {
    this.callEmitter.dispose();
  }

  private async callUnobserved(name: string, rawArgs: unknown, ctx: ToolContext): Promise<ToolCallResult> {
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    const definition = this.tools.get(name);
    if (!definition) {
      const names = this.list().map((t) => t.name).join(', ') || '(none)';
      return fail('error', `Unknown tool "${name}". Available tools: ${names}. Call one of these instead.`, name, elapsed());
    }
    const parsed = definition.parameters.safeParse(rawArgs);
    if (!parsed.success) {
      return fail('error', formatValidationError(name, parsed.error, rawArgs), `${name}: invalid arguments`, elapsed());
    }
    if (ctx.signal.aborted) return fail('aborted', 'The user stopped the turn before this tool ran.', name, elapsed());

    const timeoutMs = definition.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
    const signal = AbortSignal.any([ctx.signal, timeout.signal]);
    try {
      const output = await raceAbort(definition.execute(parsed.data, { ...ctx, signal }), signal);
      if ((definition.outputShaping ?? 'auto') === 'auto') {
        const shaped = await shapeOutput(output.output, { workspace: ctx.workspace, toolName: name });
        if (shaped.truncated) {
          return {
            ok: true, durationMs: elapsed(), ...output, output: shaped.output,
            metadata: { ...output.metadata, truncated: true, savedPath: shaped.savedPath, totalLines: shaped.totalLines, totalChars: shaped.totalChars }
          };
        }
      }
      return { ok: true, durationMs: elapsed(), ...output };
    } catch (error) {
      if (error instanceof FatalToolError) throw error;
      if (ctx.signal.aborted) return fail('aborted', 'The user stopped this tool call before it finished.', name, elapsed());
      if (timeout.signal.aborted) {
        return fail('error', `${name} timed out after ${timeoutMs} ms and was stopped. Try a smaller request.`, name, elapsed());
      }
      const message = error instanceof ToolInputError ? error.message : `${name} failed: ${describe(error)}`;
      return fail('error', message, name, elapsed());
    } finally {
      clearTimeout(timer);
    }
  }
}

function fail(status: 'error' | 'aborted', output: string, title: string, durationMs: number): ToolCallResult {
  return { ok: false, status, output, title, durationMs };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Settles with the promise, or rejects as soon as the signal aborts (tools that ignore it). */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      }
    );
  });
}
