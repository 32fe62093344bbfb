/**
 * The one way a tool runs code in a kernel: `eval` and `notebook_run` on a closed
 * notebook both go through {@link KernelRunner.run}, so they pick the kernel the same way
 * (the focused notebook's of the turn's window, else the chat's private one; replaced after
 * it died), share the idle budget (SPEC EVAL-6), route a cell's `tool()` calls back into
 * the registry as actor `kernel` in the calling turn's context, report the last printed
 * line as progress, and mark a dead or stuck kernel broken so the next run replaces it.
 */
import {
  DEFAULT_IDLE_TIMEOUT_MS,
  type ToolChannelResponse,
  type EvalLanguage,
  type EvalOutcome
} from '@cellmate/kernel-bridge';
import path from 'node:path';
import type { AcquiredKernel, KernelManager } from '../../kernels/kernel-manager.js';
import type { ToolContext } from '../../gate/define-tool.js';
import { ToolInputError } from '../../base/tool-errors.js';
import type { ToolRegistry } from '../../gate/registry.js';

/** The kernel is paused in its debugger (debug run_cell stopped at a line); the run was refused, nothing ran. */
export class KernelPausedError extends ToolInputError {
  constructor(message: string) {
    super(message);
    this.name = 'KernelPausedError';
  }
}

/** Options of {@link createKernelRunner}. */
export interface KernelRunnerOptions {
  kernels: KernelManager;
  /** The registry `tool()` calls re-enter (the one the calling tool is registered in). */
  registry: () => ToolRegistry;
  /** Idle budget (SPEC EVAL-6). Default 5 minutes. */
  idleTimeoutMs?: number;
}

/** One cell's run: the kernel it ran in, notes about that kernel, and the outcome. */
export interface KernelRun extends AcquiredKernel {
  outcome: EvalOutcome;
}

/** Runs cells for tools (see the module comment). */
export interface KernelRunner {
  readonly idleTimeoutMs: number;
  run(ctx: ToolContext, cell: { code: string; language: EvalLanguage; reset?: boolean }): Promise<KernelRun>;
}

/** Builds the runner around a kernel manager. */
export function createKernelRunner(options: KernelRunnerOptions): KernelRunner {
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  return {
    idleTimeoutMs,
    async run(ctx, cell) {
      const { handle, notes } = await options.kernels.acquire(kernelOwner(ctx), cell.language, { reset: cell.reset });
      // A cell paused in the kernel's debugger holds the kernel: queueing behind it would hang.
      const paused = handle.pausedInDebugger?.();
      if (paused)
        throw new KernelPausedError(
          `${paused}. Nothing else can run in that kernel until the debugged cell goes on: call debug continue (or step) until it finishes, or debug terminate, then run this again.`
        );
      const outcome = await handle.session.run({
        code: cell.code,
        idleTimeoutMs,
        signal: ctx.signal,
        onToolCall: (name, toolArgs) => toolChannelCall(options.registry(), name, toolArgs, ctx),
        // The pane shows the last line a long cell printed.
        onOutput: ctx.progress
          ? (o) => {
              if (o.type !== 'stream') return;
              const line = o.text
                .split('\n')
                .filter((l) => l.trim())
                .at(-1);
              if (line !== undefined) ctx.progress?.({ lastLine: line });
            }
          : undefined
      });
      if (outcome.status === 'kernel-died' || outcome.status === 'stuck') handle.broken = true;
      return { handle, notes, outcome };
    }
  };
}

/**
 * Whose kernels a call uses: a background worker's own private kernel (keyed by its id, so
 * `vibe_kill` can free it), unless it shares its parent chat's; else the chat's.
 */
export function kernelOwner(ctx: Pick<ToolContext, 'chatId' | 'worker'>): string {
  return ctx.worker && !ctx.worker.sharesKernel ? ctx.worker.id : ctx.chatId;
}

/**
 * One `tool()` call from a cell — including the cell's shell magics, which the helper
 * sends as `shell` calls (EVAL-5): the registry, as the kernel, in the calling turn's
 * context (surface, policy, approvals, audit). The caller's per-path gate is not passed
 * on: the registry builds the kernel call's own. A result cut by output shaping names its
 * saved full text, so `x = !cmd` still gets every line.
 */
export async function toolChannelCall(
  registry: ToolRegistry,
  name: string,
  args: unknown,
  ctx: ToolContext
): Promise<ToolChannelResponse> {
  // The eval card's own review state is not the kernel call's: its Auto review reaches the
  // person, if at all, through the approval card.
  const { callId: _modelCallId, isPathAllowed: _callersGate, review: _evalCardReview, ...rest } = ctx;
  const r = await registry.call(name, args, { ...rest, actor: 'kernel' });
  if (!r.ok) return { ok: false, error: r.output };
  const saved = r.metadata?.savedPath;
  return {
    ok: true,
    output: r.output,
    title: r.title,
    ...(typeof saved === 'string' ? { fullOutputFile: path.resolve(ctx.workspace, saved) } : {})
  };
}
