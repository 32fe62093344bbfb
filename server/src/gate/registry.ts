import type { ToolActor } from '@cellmate/protocol';
import { Emitter, type Event } from 'vscode-jsonrpc/node.js';
import { z } from 'zod';
import type { ToolSurface } from '../ports/vocabulary.js';
import { evaluatePolicy } from '../policy/policy.js';
import { FULL_PROFILE, PINNED_TOOLS, projectSurface, type CapabilityProfile } from '../policy/profile.js';
import type { ToolContext, ToolDefinition, ToolOutput, ToolTier } from './define-tool.js';
import { FatalToolError, PathRefusedError, ToolInputError } from '../base/tool-errors.js';
import type {
  ApprovalPort,
  AuditDecision,
  AuditSink,
  PolicyPort,
  SidecarAudit,
  WriteHook
} from '../ports/gate-ports.js';
import type { AutoReviewerOptions } from './auto-review.js';
import { shapeOutput } from '../workspace/output-shaping.js';
import { raceAbort } from './race-abort.js';
import { canonicalPathSubjects, createPathGate, judgeCall } from './call-subjects.js';
import { CALL_TOOL } from './call-tool.js';
import { formatValidationError } from './validation-message.js';
import type { Redactor } from '../security/redaction.js';
import { withWriteRecorder, type CheckpointPort } from '../workspace/write-capture.js';
import { WithheldValues } from './withheld-values.js';
import { Breaker, breakerStopsTurn } from './breaker.js';
import {
  decideCall,
  decideSurface,
  withClasses,
  type CallActor,
  type CallVerdict,
  type JudgedCall
} from './decide-call.js';
import { Approver, type AskedCall } from './approval.js';

/** JSON schemas by zod schema (a tool's parameters never change once defined). */
const jsonSchemas = new WeakMap<z.ZodType, Record<string, unknown>>();

/** Default per-call budget when a tool sets no `timeoutMs`. */
export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;
/** Consecutive denials in one turn after which the person is asked whether to go on. */
export const CIRCUIT_BREAKER_DENIALS = 3;
/** The code of the FatalToolError that ends a turn when the person does not let it go on past the breaker. */
const BREAKER_STOP = 'circuit-breaker';

/** The outcome of one {@link ToolRegistry.call}. Fatal errors are thrown instead. */
export type ToolCallResult =
  | ({ ok: true; durationMs: number; waitMs?: number } & ToolOutput)
  | {
      ok: false;
      /** `error`: the model gets `output` and may try again; `aborted`: stopped by the user. */
      status: 'error' | 'aborted';
      /** The message the model receives as the tool's result. */
      output: string;
      title: string;
      /** Run time: the wait for a person's approval is not in it (see `waitMs`). */
      durationMs: number;
      /** How long the call waited for the person's approval (absent: it did not ask). */
      waitMs?: number;
      /** Set when the call was refused or denied before it ran. */
      denied?: boolean;
    };

export type { ToolSurface } from '../ports/vocabulary.js';
export { actionClassesOf } from './decide-call.js';

/**
 * Tools that exist only once something has started (MCP servers): registered as
 * deferred tools by {@link ToolSource.load}, which the registry runs on the first
 * `tool_search` and on a call of a name the source {@link ToolSource.owns}.
 */
export interface ToolSource {
  /** Whether a tool name may belong to this source (its `server__` prefix). */
  owns(name: string): boolean;
  /**
   * Registers the source's tools, or refreshes them when its server restarted or said its
   * list changed (idempotent and cheap otherwise; never throws: failures are its status).
   */
  load(sink: Pick<ToolRegistry, 'get' | 'register'>, signal: AbortSignal, name?: string): Promise<void>;
  /** Why an owned name is not a tool (its server failed, it lists no such tool), for the model. */
  explainMissing?(name: string): string | undefined;
}

/** One finished call, for logging, the audit trail and metrics (SPEC HARN-7). */
export interface ToolCallRecord {
  name: string;
  actor: ToolActor;
  chatId: string;
  /** `ok`, `withheld` (ran, did nothing: the policy withheld its files), `error` (the model got an error result), `aborted`, or `fatal` (ended the turn). */
  status: 'ok' | 'withheld' | 'error' | 'aborted' | 'fatal';
  /** Run time, without the wait for approval. */
  durationMs: number;
  /** The wait for the person's approval, when the call asked. */
  waitMs?: number;
  /** How the gate decided. */
  decision?: AuditDecision;
}

/** Clients of the wrapper; each is optional (a bare registry runs every valid call). */
export interface ToolRegistryOptions {
  /** The default surface when a call's context names none (default: everything). */
  profile?: CapabilityProfile;
  /**
   * Policy rules. Without it there is no policy gate (tests, embedding); the companion
   * server always passes one, so `ask` and `deny` apply there.
   */
  policy?: PolicyPort;
  /** Who approves `ask`. Without one, `ask` = deny (fail-closed). */
  approvals?: ApprovalPort;
  audit?: AuditSink;
  /** Runs after a write-tier tool changed files (LSP diagnostics seam). */
  writeHook?: WriteHook;
  /**
   * Hides known secret values in every result, error and progress line before anyone sees
   * them (see `security/redaction.ts`).
   */
  redactor?: Pick<Redactor, 'redact' | 'redactDeep'>;
  /** Auto approval's timeout and workspace trust (SIDE-1…3; the classifier comes with each call's context). */
  autoReview?: AutoReviewerOptions;
  /** Keeps what a turn's write/exec calls change, before they change it (checkpoints and rewind). */
  checkpoints?: CheckpointPort;
  /**
   * Builds `tool_search` over this registry (HARN-11), handed in by the tool table
   * (`tools/builtin-tools.ts`) because the gate imports no tool. Without it a deferred tool
   * or a tool source cannot be added: nothing could ever find their tools.
   */
  toolSearch?: (catalog: ToolRegistry) => ToolDefinition;
}

/** The policy gate's outcome: a failed result when the call must not run, else the path port. */
type GateOutcome =
  | { refused: Omit<Extract<ToolCallResult, { ok: false }>, 'durationMs'> }
  | { isPathAllowed?: (relative: string) => boolean };

/** The policy's look at a judged call. */
type JudgedPolicy = NonNullable<JudgedCall['policy']>;

/** How the gate decided, the Auto review when there was one (audit log), and how long the call waited for a person. */
interface GateNote {
  decision: AuditDecision;
  sidecar?: SidecarAudit;
  /** The person's approval wait, counted apart from run time. */
  waitMs: number;
}

/**
 * The one wrapper every tool call goes through, whoever makes it (model, kernel bridge,
 * user): lookup → surface/tier check → argument validation → path arguments canonicalised
 * through confinement → policy on those canonical subjects (allow / ask → approval card /
 * deny, with the dangerous-command floor and a circuit breaker) → timeout → execute
 * → write hook → output shaping (HARN-4) → audit entry and timing.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition>();
  private readonly callEmitter = new Emitter<ToolCallRecord>();
  private readonly breaker = new Breaker({ streak: CIRCUIT_BREAKER_DENIALS });
  private readonly options: ToolRegistryOptions;
  private readonly sources: ToolSource[] = [];
  private readonly approver: Approver;
  private readonly withheldValues = new WithheldValues();

  /** Fires after every call (success or failure). */
  readonly onDidCall: Event<ToolCallRecord> = this.callEmitter.event;

  constructor(tools: Iterable<ToolDefinition> = [], options: ToolRegistryOptions = {}) {
    this.options = options;
    this.approver = new Approver(options);
    for (const t of tools) this.register(t);
  }

  /**
   * Adds a tool; names are unique. A tool that asks to be deferred (HARN-11) brings
   * `tool_search` with it when the registry has none, so it can be loaded. Every tool is
   * registered here as it is built; it is held as a `ToolDefinition`, its argument type
   * forgotten (see `define-tool.ts` for why that needs no cast).
   */
  register<S extends z.ZodType>(definition: ToolDefinition<S>): void {
    if (this.tools.has(definition.name)) throw new Error(`Tool "${definition.name}" is already registered.`);
    if (definition.name === CALL_TOOL)
      throw new Error(
        `"${CALL_TOOL}" is reserved for the catalog's dispatcher (gate/call-tool.ts); choose another name.`
      );
    if (definition.deferred) this.ensureToolSearch(definition.name);
    this.tools.set(definition.name, definition);
  }

  /**
   * Adds a source of deferred tools (MCP servers). `tool_search` is registered now if it is
   * not yet, so the declared set is the same before and after the source's tools arrive.
   */
  addToolSource(source: ToolSource): void {
    this.ensureToolSearch('a tool source');
    this.sources.push(source);
  }

  /** Registers `tool_search` (from {@link ToolRegistryOptions.toolSearch}) unless there is one. */
  private ensureToolSearch(forWhat: string): void {
    if (this.tools.has('tool_search')) return;
    if (!this.options.toolSearch)
      throw new Error(
        `Cannot add ${forWhat}: deferred tools need tool_search, and this registry was built without toolSearch.`
      );
    this.register(this.options.toolSearch(this));
  }

  /** Whether any source of external tools was added (the catalog says so in its index). */
  get hasToolSources(): boolean {
    return this.sources.length > 0;
  }

  /** Lets every source (or those owning `name`) register its tools; `tool_search` calls it. */
  async loadSources(signal: AbortSignal, name?: string): Promise<void> {
    await Promise.all(
      this.sources.filter((s) => name === undefined || s.owns(name)).map((s) => s.load(this, signal, name))
    );
  }

  /** The registered definition, if any. */
  get(name: string): ToolDefinition | undefined {
    return this.tools.get(name);
  }

  /** Tools on a surface (deferred ones included), sorted by name. */
  list(surface: ToolSurface = this.options.profile ?? FULL_PROFILE): ToolDefinition[] {
    const profile = toProfile(surface);
    return projectSurface(
      [...this.tools.values()].map((t) => withClasses(t)),
      profile
    )
      .map((t) => this.tools.get(t.name)!)
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * The JSON schema the model sees for one tool (snapshot-tested). Computed once per
   * definition (every turn declares the tools; converting zod each time cost ~2 ms a turn):
   * treat the result as read-only.
   */
  inputJsonSchema(name: string): Record<string, unknown> {
    const definition = this.tools.get(name);
    if (!definition) throw new Error(`No tool "${name}".`);
    // A tool given as JSON Schema (an MCP server's) is shown to the model exactly as given.
    if (definition.inputSchema) return definition.inputSchema;
    let schema = jsonSchemas.get(definition.parameters);
    if (!schema) {
      // `$schema` is noise for providers (and some strict validators reject unknown keywords).
      const { $schema: _dialect, ...rest } = z.toJSONSchema(definition.parameters, { io: 'input' }) as Record<
        string,
        unknown
      >;
      schema = withoutSafeIntegerBounds(rest);
      jsonSchemas.set(definition.parameters, schema);
    }
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
   * Calls a tool by name with unvalidated arguments.
   * @throws FatalToolError when the failure must end the turn
   */
  async call(name: string, rawArgs: unknown, ctx: ToolContext): Promise<ToolCallResult> {
    const started = performance.now();
    const gate: GateNote = { decision: 'unchecked', waitMs: 0 };
    const redactor = this.options.redactor;
    const progress = ctx.progress;
    const safeCtx: ToolContext =
      redactor && progress
        ? {
            ...ctx,
            progress: (u) =>
              progress({
                ...u,
                ...(u.lastLine !== undefined ? { lastLine: redactor.redact(u.lastLine, { partialTail: true }) } : {})
              })
          }
        : ctx;
    try {
      const unwaited = await this.callUnobserved(name, rawArgs, safeCtx, gate);
      const raw = gate.waitMs > 0 ? { ...unwaited, waitMs: Math.round(gate.waitMs) } : unwaited;
      const result = redactor ? redactor.redactDeep(raw) : raw;
      this.report(
        name,
        rawArgs,
        ctx,
        gate,
        result.ok ? (result.outcome ?? 'ok') : result.denied ? 'denied' : result.status,
        result.durationMs,
        result.output,
        result.ok ? undefined : result.output
      );
      return result;
    } catch (error) {
      const message = redactor ? redactor.redact(describe(error)) : describe(error);
      // The breaker ends the turn on a refusal: the call itself never ran, so it is audited as denied.
      const status = error instanceof FatalToolError && error.code === BREAKER_STOP ? 'denied' : 'fatal';
      this.report(
        name,
        rawArgs,
        ctx,
        gate,
        status,
        Math.round(performance.now() - started - gate.waitMs),
        message,
        message
      );
      if (redactor && error instanceof FatalToolError && error.message !== message)
        throw new FatalToolError(message, error.code, { cause: error });
      throw error;
    }
  }

  /** Stops notifying observers. */
  dispose(): void {
    this.callEmitter.dispose();
  }

  private report(
    name: string,
    args: unknown,
    ctx: ToolContext,
    gate: GateNote,
    status: 'ok' | 'withheld' | 'error' | 'aborted' | 'fatal' | 'denied',
    durationMs: number,
    output: string,
    error?: string
  ): void {
    const decision = gate.decision;
    const sidecar =
      gate.sidecar && this.options.redactor ? this.options.redactor.redactDeep(gate.sidecar) : gate.sidecar;
    const waited = gate.waitMs > 0 ? { waitMs: Math.round(gate.waitMs) } : {};
    this.callEmitter.fire({
      name,
      actor: ctx.actor,
      chatId: ctx.chatId,
      status: status === 'denied' ? 'error' : status,
      durationMs,
      ...waited,
      decision
    });
    this.options.audit?.record({
      time: new Date().toISOString(),
      chatId: ctx.chatId,
      ...(ctx.turnId ? { turnId: ctx.turnId } : {}),
      ...(ctx.callId ? { callId: ctx.callId } : {}),
      actor: ctx.actor,
      tool: name,
      args,
      decision,
      status,
      summary: summarize(output),
      durationMs,
      ...waited,
      ...(error !== undefined ? { error: summarize(error, 500) } : {}),
      ...(ctx.worker ? { worker: ctx.worker.id } : {}),
      ...(sidecar ? { sidecar } : {})
    });
  }

  private async callUnobserved(
    name: string,
    rawArgs: unknown,
    ctx: ToolContext,
    gate: GateNote
  ): Promise<ToolCallResult> {
    const started = performance.now();
    // Run time: the person's approval wait is counted apart (gate.waitMs), never as the tool's time.
    const elapsed = (): number => Math.round(performance.now() - started - gate.waitMs);
    const profile = ctx.profile ?? this.options.profile ?? FULL_PROFILE;
    // A source's tool is (re)listed first: a restarted server may describe it differently.
    if (this.sources.some((s) => s.owns(name))) await this.loadSources(ctx.signal, name);
    const definition = this.tools.get(name);
    if (!definition) {
      gate.decision = 'unknown-tool';
      const why = this.sources.map((s) => s.explainMissing?.(name)).find((w) => w !== undefined);
      if (why) return fail('error', `Unknown tool "${name}": ${why}`, name, elapsed());
      const names =
        this.list(profile)
          .map((t) => t.name)
          .join(', ') || '(none)';
      return fail(
        'error',
        `Unknown tool "${name}". Available tools: ${names}. Call one of these instead.`,
        name,
        elapsed()
      );
    }
    // The surface first: a call off it is refused before its arguments are read.
    const offSurface = decideSurface(withClasses(definition), { kind: ctx.actor, profile });
    if (offSurface) {
      gate.decision = offSurface.decision;
      return this.denied(ctx, offSurface.message, name, elapsed());
    }
    const parsed = definition.parameters.safeParse(rawArgs);
    if (!parsed.success) {
      gate.decision = 'invalid-arguments';
      return fail('error', formatValidationError(name, parsed.error, rawArgs), `${name}: invalid arguments`, elapsed());
    }
    if (ctx.signal.aborted) return fail('aborted', 'The user stopped the turn before this tool ran.', name, elapsed());

    const gateResult = await this.checkPolicy(definition, parsed.data, rawArgs, ctx, gate);
    if ('refused' in gateResult) return { ...gateResult.refused, durationMs: elapsed() };
    // Folder walks ask the same rules per file (grep/glob withhold what is denied).
    if (gateResult.isPathAllowed) ctx = { ...ctx, isPathAllowed: gateResult.isPathAllowed };
    const policy = this.options.policy;
    if (definition.relaysServerText && policy) {
      let values: ReturnType<WithheldValues['collect']> | undefined;
      const callCtx = ctx;
      ctx = {
        ...ctx,
        withheldValues: () =>
          (values ??= policy
            .rules()
            .then((rules) =>
              this.withheldValues.collect(callCtx.workspace, rules, definition.name, definition.tier, callCtx.signal)
            ))
      };
    }

    await this.beforeWrite(definition, parsed.data, ctx);
    const timeoutMs = definition.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
    const signal = AbortSignal.any([ctx.signal, timeout.signal]);
    // Every write the call makes keeps the turn's checkpoint first (workspace/write-capture.ts).
    const recorder =
      definition.tier === 'read'
        ? undefined
        : this.options.checkpoints?.recorder({ chatId: ctx.chatId, turnId: ctx.turnId, workspace: ctx.workspace });
    try {
      const execution = withWriteRecorder(recorder, () => definition.execute(parsed.data, { ...ctx, signal }));
      const executed = await raceAbort(execution, signal, definition.abortGraceMs ?? 0).finally(() =>
        recorder?.settle().catch(() => undefined)
      );
      // Redacted before shaping: the full text shaping saves under .cellmate/outputs/ must not
      // hold a secret either (call() redacts the final result again, which is idempotent).
      const raw = this.options.redactor ? this.options.redactor.redactDeep(executed) : executed;
      if (ctx.signal.aborted) {
        // A tool that stops itself (abortGraceMs) reported what happened: the model and the card get it.
        const shaped = await shapeOutput(raw.output, { workspace: ctx.workspace, toolName: name, chatId: ctx.chatId });
        return { ok: false, status: 'aborted', output: shaped.output, title: raw.title, durationMs: elapsed() };
      }
      const output = await this.hideWithheldValues(
        definition,
        await this.afterWrite(definition, raw, ctx, signal),
        raw,
        ctx,
        signal
      );
      this.breaker.pass(ctx);
      if ((definition.outputShaping ?? 'auto') === 'auto') {
        const shaped = await shapeOutput(output.output, {
          workspace: ctx.workspace,
          toolName: name,
          chatId: ctx.chatId
        });
        if (shaped.truncated) {
          return {
            ok: true,
            durationMs: elapsed(),
            ...output,
            output: shaped.output,
            metadata: {
              ...output.metadata,
              truncated: true,
              savedPath: shaped.savedPath,
              totalLines: shaped.totalLines,
              totalChars: shaped.totalChars
            }
          };
        }
      }
      return { ok: true, durationMs: elapsed(), ...output };
    } catch (error) {
      if (error instanceof FatalToolError) throw error;
      if (ctx.signal.aborted)
        return fail('aborted', 'The user stopped this tool call before it finished.', name, elapsed());
      if (timeout.signal.aborted) {
        return fail(
          'error',
          `${name} timed out after ${timeoutMs} ms and was stopped. Try a smaller request.`,
          name,
          elapsed()
        );
      }
      const plain = error instanceof ToolInputError ? error.message : `${name} failed: ${describe(error)}`;
      const message = this.options.redactor ? this.options.redactor.redact(plain) : plain;
      const shaped = await shapeOutput(message, { workspace: ctx.workspace, toolName: name, chatId: ctx.chatId });
      return fail('error', shaped.output, name, elapsed());
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The policy gate: the call judged ({@link judge}), its verdict ({@link decideCall}), and
   * the verdict carried out. Returns a failed result when the call must not run, else the path port.
   */
  private async checkPolicy(
    definition: ToolDefinition,
    args: unknown,
    rawArgs: unknown,
    ctx: ToolContext,
    gate: GateNote
  ): Promise<GateOutcome> {
    const name = definition.name;
    let judged: JudgedCall;
    try {
      judged = await this.judge(definition, args, ctx);
    } catch (error) {
      if (!(error instanceof PathRefusedError)) throw error;
      gate.decision = 'refused-path';
      return { refused: { ok: false, status: 'error', output: error.message, title: `${name}: path refused` } };
    }
    const verdict = this.decide(judged, ctx);
    switch (verdict.kind) {
      case 'refuse':
        gate.decision = verdict.decision;
        return { refused: await this.denied(ctx, verdict.message, name) };
      case 'run':
        gate.decision = verdict.decision;
        return {
          isPathAllowed:
            verdict.reach && createPathGate(judged.policy!.rules, name, verdict.reach.tier, verdict.reach.kind)
        };
      case 'ask': {
        // decideCall asks, and hands out a path reach, only for a call the policy judged.
        const policy = judged.policy!;
        const outcome = await this.approver.ask(this.asked(definition, args, rawArgs, ctx, policy), verdict, gate);
        gate.decision = outcome.decision;
        // Stopped while it waited: aborted, not denied — nobody said no, and no denial counts towards the breaker.
        if (outcome.kind === 'stopped')
          return { refused: { ok: false, status: 'aborted', output: outcome.message, title: name } };
        if (outcome.kind === 'refuse') return { refused: await this.denied(ctx, outcome.message, name) };
        return { isPathAllowed: createPathGate(policy.rules, name, outcome.reach.tier, outcome.reach.kind) };
      }
    }
  }

  /**
   * What the gate knows about a call before deciding: path arguments resolved through
   * confinement into canonical subjects, the tool's own judgement and any `alsoJudgedAs`
   * (strictest wins). A pinned tool runs whatever the rules say, so it is not judged.
   * @throws PathRefusedError when a path argument escapes the workspace
   */
  private async judge(definition: ToolDefinition, args: unknown, ctx: ToolContext): Promise<JudgedCall> {
    const tool = withClasses(definition);
    const policy = this.options.policy;
    if (!policy || PINNED_TOOLS.has(definition.name)) return { tool };
    const rules = await policy.rules();
    const { judgement: chosen, decision, judgements } = await judgeCall(definition, args, ctx, rules);
    return { tool, policy: { rules, judgements, chosen, decision } };
  }

  private decide(judged: JudgedCall, ctx: ToolContext): CallVerdict {
    return decideCall(
      judged,
      this.actorOf(ctx),
      { workspace: ctx.workspace, workspaceTrusted: this.approver.auto.trusts(ctx.workspace) },
      { enabled: ctx.autoApproval?.enabled() ?? false, paused: this.approver.auto.isPaused(ctx) }
    );
  }

  private actorOf(ctx: ToolContext): CallActor {
    return { kind: ctx.actor, profile: ctx.profile ?? this.options.profile ?? FULL_PROFILE };
  }

  /**
   * Starts the Auto review of a call whose arguments just completed in the model's stream,
   * while the model keeps streaming (SIDE-2): the same surface, validation, judgement and
   * verdict {@link call} makes, stopping short of asking anyone. Resolves true when a review
   * started (the card then says "checking…"); {@link call} uses its verdict when the record
   * it builds then is the same. Never throws: whatever fails here is judged again by {@link call}.
   */
  async startReview(name: string, rawArgs: unknown, ctx: ToolContext): Promise<boolean> {
    try {
      if (!this.options.policy || !ctx.callId || !ctx.autoApproval?.enabled()) return false;
      const definition = this.tools.get(name);
      if (!definition || decideSurface(withClasses(definition), this.actorOf(ctx))) return false;
      const parsed = definition.parameters.safeParse(rawArgs);
      if (!parsed.success) return false;
      const judged = await this.judge(definition, parsed.data, ctx);
      const verdict = this.decide(judged, ctx);
      if (verdict.kind !== 'ask' || !judged.policy) return false;
      return await this.approver.startReview(this.asked(definition, parsed.data, rawArgs, ctx, judged.policy), verdict);
    } catch {
      return false;
    }
  }

  private asked(
    definition: ToolDefinition,
    args: unknown,
    rawArgs: unknown,
    ctx: ToolContext,
    judged: JudgedPolicy
  ): AskedCall {
    return { definition, args, rawArgs, ctx, mode: this.actorOf(ctx).profile.name, judged };
  }

  /**
   * Whether the policy lets `tool` touch a workspace path (canonicalised through
   * confinement first; a path outside is never allowed). The gate for context Cellmate
   * attaches itself (`@` mentions, the focused notebook): the same rules as the tool call.
   */
  async isPathAllowed(tool: string, input: string, workspace: string): Promise<boolean> {
    const definition = this.tools.get(tool);
    const policy = this.options.policy;
    let subjects: string[];
    try {
      subjects = await canonicalPathSubjects(workspace, [input]);
    } catch (error) {
      if (error instanceof PathRefusedError) return false;
      throw error;
    }
    if (!policy) return true;
    const rules = await policy.rules();
    return (
      evaluatePolicy(rules, { tool, tier: definition?.tier ?? 'read', subjects, subjectKind: 'path' }).action ===
      'allow'
    );
  }

  /** A denial result; counts towards the circuit breaker, which may end the turn. */
  private async denied(
    ctx: ToolContext,
    output: string,
    name: string,
    durationMs = 0
  ): Promise<Extract<ToolCallResult, { ok: false }>> {
    const { streak: count, tripped } = this.breaker.refuse(ctx);
    if (tripped && breakerStopsTurn(ctx.actor)) {
      const goOn = this.options.approvals
        ? await this.options.approvals
            .confirmContinue({ chatId: ctx.chatId, turnId: ctx.turnId, denials: count, last: output }, ctx.signal)
            .catch(() => false)
        : false;
      this.breaker.reset(ctx);
      if (!goOn) {
        throw new FatalToolError(
          `${count} tool calls in a row were refused or denied (last: ${output}). The turn stopped so you can decide how to continue.`,
          BREAKER_STOP
        );
      }
    }
    return { ok: false, status: 'error', output, title: `${name}: denied`, durationMs, denied: true };
  }

  /** The write hook's look at the files before a write-tier tool changes them. */
  private async beforeWrite(definition: ToolDefinition, args: unknown, ctx: ToolContext): Promise<void> {
    const hook = this.options.writeHook;
    // Write tier only: an exec tool (notebook_run) does not change the code a server checks.
    if (!hook?.beforeWrite || definition.tier !== 'write' || !definition.paths) return;
    const files = definition.paths(args).filter((p): p is string => typeof p === 'string');
    if (files.length === 0) return;
    await hook
      .beforeWrite({ tool: definition.name, files, workspace: ctx.workspace, chatId: ctx.chatId }, ctx.signal)
      .catch(() => undefined);
  }

  /** Write-time diagnostics after a change, or the late ones after any other call (WDIAG-1). */
  private async afterWrite(
    definition: ToolDefinition,
    output: ToolOutput,
    ctx: ToolContext,
    signal: AbortSignal
  ): Promise<ToolOutput> {
    const files = output.metadata?.changedFiles;
    const hook = this.options.writeHook;
    if (!hook) return output;
    const change = {
      tool: definition.name,
      files: Array.isArray(files) ? (files as string[]) : [],
      workspace: ctx.workspace,
      chatId: ctx.chatId
    };
    const extra =
      change.files.length > 0
        ? await hook.afterWrite(change, signal).catch(() => undefined)
        : await hook.pending?.(ctx.chatId).catch(() => undefined);
    if (!extra) return output;
    return {
      ...output,
      output: `${output.output}\n\n${extra.text}`,
      ...(extra.display && !output.display ? { display: extra.display } : {})
    };
  }

  /**
   * A result that relays language-server text (the tool's own, or write-time diagnostics the
   * hook added) without the literal values of deny-ruled files (`withheld-values.ts`).
   */
  private async hideWithheldValues(
    definition: ToolDefinition,
    output: ToolOutput,
    executed: ToolOutput,
    ctx: ToolContext,
    signal: AbortSignal
  ): Promise<ToolOutput> {
    const policy = this.options.policy;
    if (!policy || (!definition.relaysServerText && output === executed)) return output;
    const values = await this.withheldValues.collect(
      ctx.workspace,
      await policy.rules(),
      definition.name,
      definition.tier,
      signal
    );
    return values.hideDeep(output);
  }
}

function toProfile(surface: ToolSurface): CapabilityProfile {
  return { name: surface.name ?? `max-${surface.maxTier}`, ...surface };
}

/** Whether the tier may run alongside others (HARN-8). */
export function isParallelSafe(definition: Pick<ToolDefinition, 'tier' | 'parallelSafe'>): boolean {
  return definition.parallelSafe ?? definition.tier === ('read' satisfies ToolTier);
}

function fail(status: 'error' | 'aborted', output: string, title: string, durationMs: number): ToolCallResult {
  return { ok: false, status, output, title, durationMs };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function summarize(text: string, max = 200): string {
  const first = text.split('\n', 1)[0] ?? '';
  return first.length > max ? `${first.slice(0, max)}…` : first;
}

/**
 * The schema without the ±2^53−1 bounds zod writes on every `.int()`: they tell the model
 * nothing and cost ~10 tokens each in every request; arguments are still validated by zod.
 */
function withoutSafeIntegerBounds(schema: Record<string, unknown>): Record<string, unknown> {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value !== 'object' || value === null) return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if ((k === 'maximum' && v === Number.MAX_SAFE_INTEGER) || (k === 'minimum' && v === Number.MIN_SAFE_INTEGER))
        continue;
      out[k] = walk(v);
    }
    return out;
  };
  return walk(schema) as Record<string, unknown>;
}
