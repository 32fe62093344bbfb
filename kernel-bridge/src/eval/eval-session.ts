/**
 * One eval on one kernel (SPEC EVAL-1…6): magic rewriting, the kernel-side helper
 * (injected on first use), the `tool()` bridge over stdin, output capture and the idle
 * budget. Evals on one session are serialized.
 */
import { isKernelBridgeError } from '../common/errors.js';
import { isMsgType, type AnyMessage, type Message, type MimeBundle } from '../messaging/messages.js';
import { ToolChannelEndpoint, parseToolChannelPrompt, type ToolChannelResponse } from '../tool-channel/channel.js';
import { JS_HELPER } from '../tool-channel/js-helper.js';
import { PYTHON_HELPER } from '../tool-channel/python-helper.js';
import { describeRewrites, rewriteMagics, type EvalLanguage } from '../magics/rewrite-magics.js';
import type { KernelClient } from './kernel-client.js';

/** Default idle budget: 5 minutes without output (SPEC EVAL-6). */
export const DEFAULT_IDLE_TIMEOUT_MS = 5 * 60_000;
/** How long an interrupted cell may take to end before the session gives up on it. */
export const INTERRUPT_GRACE_MS = 10_000;

/** Request metadata that marks the agent's execute requests (the bridge checks it). */
export const AGENT_REQUEST_METADATA = { cellmate: { bridge: true } } as const;

export type EvalOutput =
  | { type: 'stream'; name: 'stdout' | 'stderr'; text: string }
  | { type: 'display'; data: MimeBundle; /** true for the cell's last value */ result: boolean }
  | { type: 'error'; ename: string; evalue: string; traceback: string[] };

export type EvalStatus =
  /** Ran to the end. */
  | 'ok'
  /** The cell raised. */
  | 'error'
  /** No output for longer than the idle budget: interrupted. */
  | 'idle-timeout'
  /** Stopped by the caller's signal (the user's abort): interrupted. */
  | 'aborted'
  /** The kernel died while running the cell. */
  | 'kernel-died'
  /** Interrupted but did not stop within the grace period: the kernel must be restarted. */
  | 'stuck';

export interface EvalOutcome {
  status: EvalStatus;
  outputs: EvalOutput[];
  /** One line per rewritten magic (SPEC EVAL-4, HARN-2). */
  rewrites: string[];
  /** Things the result must say (e.g. an `input()` the agent's cell could not answer). */
  notes: string[];
  executionCount?: number;
  /** Number of `tool()` calls the cell made. */
  bridgeCalls: number;
}

export interface EvalRequest {
  code: string;
  /** Time without output before the cell is interrupted. Default {@link DEFAULT_IDLE_TIMEOUT_MS}. */
  idleTimeoutMs?: number;
  /** Aborting interrupts the cell. */
  signal?: AbortSignal;
  /** Runs one `tool(name, args)` call from the cell. */
  onToolCall?: (name: string, args: unknown) => Promise<ToolChannelResponse>;
  /** Each output as it arrives. */
  onOutput?: (output: EvalOutput) => void;
}

export class EvalSession {
  private helperReady = false;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly client: KernelClient,
    readonly language: EvalLanguage
  ) {}

  /** Forget the helper (after the kernel restarted): it is injected again on the next eval. */
  kernelRestarted(): void {
    this.helperReady = false;
  }

  /** Runs one cell; evals on this session run one at a time, in call order. */
  run(req: EvalRequest): Promise<EvalOutcome> {
    const next = this.queue.then(() => this.runNow(req));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async ensureHelper(): Promise<void> {
    if (this.helperReady) return;
    const code = this.language === 'python' ? PYTHON_HELPER : JS_HELPER;
    const r = await this.client.execute(code, {
      silent: true,
      storeHistory: false,
      allowStdin: false,
      timeoutMs: 60_000
    });
    if (r.reply.content.status !== 'ok') {
      const c = r.reply.content as { ename?: string; evalue?: string };
      throw new Error(`could not set up the Cellmate helper in the kernel: ${c.ename ?? 'error'}: ${c.evalue ?? ''}`);
    }
    this.helperReady = true;
  }

  private async runNow(req: EvalRequest): Promise<EvalOutcome> {
    const { code, rewrites } = rewriteMagics(req.code, this.language);
    const outcome: EvalOutcome = {
      status: 'ok',
      outputs: [],
      rewrites: describeRewrites(rewrites),
      notes: [],
      bridgeCalls: 0
    };
    if (req.signal?.aborted) return { ...outcome, status: 'aborted' };
    try {
      await this.ensureHelper();
    } catch (e) {
      if (isKernelBridgeError(e, 'kernel_dead')) return { ...outcome, status: 'kernel-died' };
      throw e;
    }

    const idleMs = req.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    let inFlight = 0;
    let timer: NodeJS.Timeout | undefined;
    let stopping: 'idle-timeout' | 'aborted' | undefined;
    let giveUp: (() => void) | undefined;
    const gaveUp = new Promise<'stuck'>((resolve) => (giveUp = () => resolve('stuck')));
    let graceTimer: NodeJS.Timeout | undefined;
    // On a shared (notebook) kernel our request may wait behind the user's cell: the idle
    // budget starts, and an interrupt is sent, only once the kernel runs *our* request
    // (IOPub busy for it), so we never interrupt the user's own cell.
    let started = false;
    const interrupt = (): void => {
      this.client.interrupt().catch(() => undefined);
      graceTimer = setTimeout(() => giveUp?.(), INTERRUPT_GRACE_MS);
    };
    const stop = (why: 'idle-timeout' | 'aborted'): void => {
      if (stopping) return;
      stopping = why;
      clearTimeout(timer);
      if (started) interrupt();
    };
    const arm = (): void => {
      clearTimeout(timer);
      if (started && inFlight === 0 && !stopping) timer = setTimeout(() => stop('idle-timeout'), idleMs);
    };
    const markStarted = (): void => {
      if (started) return;
      started = true;
      if (stopping) interrupt();
      else arm();
    };
    const onAbort = (): void => stop('aborted');
    req.signal?.addEventListener('abort', onAbort, { once: true });

    const push = (o: EvalOutput): void => {
      const last = outcome.outputs[outcome.outputs.length - 1];
      if (o.type === 'stream' && last?.type === 'stream' && last.name === o.name) last.text += o.text;
      else outcome.outputs.push(o);
      req.onOutput?.(o);
    };
    const onIOPub = (msg: AnyMessage): void => {
      if (isMsgType(msg, 'status') && msg.content.execution_state === 'busy') markStarted();
      const o = toOutput(msg);
      if (o) markStarted();
      if (o === 'clear') {
        outcome.outputs = outcome.outputs.filter((x) => x.type === 'error');
        arm();
      } else if (o) {
        push(o);
        arm();
      }
    };
    const endpoint = new ToolChannelEndpoint(async (name, args) => {
      outcome.bridgeCalls++;
      if (!req.onToolCall) return { ok: false, error: 'tool() is not available here' };
      return req.onToolCall(name, args);
    });
    const onInputRequest = async (r: Message<'input_request'>): Promise<string> => {
      const bridge = parseToolChannelPrompt(r.content.prompt);
      if (!bridge) {
        outcome.notes.push(
          `The cell asked for input (${JSON.stringify(r.content.prompt)}); eval cannot answer, so it got an empty string.`
        );
        return '';
      }
      markStarted();
      inFlight++;
      clearTimeout(timer); // the idle budget pauses while a bridge call is in flight
      try {
        return await endpoint.handle(bridge);
      } finally {
        inFlight--;
        arm();
      }
    };

    try {
      const running = this.client.execute(code, {
        metadata: { ...AGENT_REQUEST_METADATA },
        allowStdin: true,
        storeHistory: true,
        stopOnError: true,
        onIOPub,
        onInputRequest
      });
      running.catch(() => undefined);
      const r = await Promise.race([running, gaveUp]);
      if (r === 'stuck') return { ...outcome, status: 'stuck' };
      outcome.executionCount = r.reply.content.execution_count ?? undefined;
      if (stopping) outcome.status = stopping;
      else if (r.reply.content.status !== 'ok') {
        outcome.status = 'error';
        const c = r.reply.content as { ename?: string; evalue?: string; traceback?: string[] };
        if (!outcome.outputs.some((o) => o.type === 'error')) {
          outcome.outputs.push({
            type: 'error',
            ename: c.ename ?? 'Error',
            evalue: c.evalue ?? '',
            traceback: c.traceback ?? []
          });
        }
      }
      return outcome;
    } catch (e) {
      if (isKernelBridgeError(e, 'kernel_dead')) return { ...outcome, status: 'kernel-died' };
      throw e;
    } finally {
      clearTimeout(timer);
      clearTimeout(graceTimer);
      req.signal?.removeEventListener('abort', onAbort);
    }
  }
}

function toOutput(msg: AnyMessage): EvalOutput | 'clear' | undefined {
  if (isMsgType(msg, 'stream')) return { type: 'stream', name: msg.content.name, text: msg.content.text };
  if (isMsgType(msg, 'execute_result')) return { type: 'display', data: msg.content.data, result: true };
  if (isMsgType(msg, 'display_data') || isMsgType(msg, 'update_display_data')) {
    return { type: 'display', data: msg.content.data, result: false };
  }
  if (isMsgType(msg, 'error')) {
    return { type: 'error', ename: msg.content.ename, evalue: msg.content.evalue, traceback: msg.content.traceback };
  }
  if (isMsgType(msg, 'clear_output')) return 'clear';
  return undefined;
}
