import type { WorkerSummary, WorkerTier } from '@cellmate/protocol';
import type { ToolContext } from '../../gate/define-tool.js';

/** A labelled piece of context handed to a worker (HARN-10): who it comes from. */
export interface WorkerContextSource {
  from: 'main-agent' | 'user' | 'tool-result';
  text: string;
  /** For tool results: which tool and call, e.g. `read notes.md`. */
  origin?: string;
}

/** What `vibe_spawn` asks for. */
export interface SpawnRequest {
  brief: string;
  label: string;
  tier: WorkerTier;
  shareKernel: boolean;
  /** The highest tool tier the worker may use, further limited by the parent's surface. */
  access?: 'read' | 'write' | 'exec';
  outputFormat?: string;
  context: readonly WorkerContextSource[];
}

/** How a wait ended: the worker reached a terminal state of its run, or the wait timed out. */
export interface WaitOutcome {
  worker: WorkerSummary;
  finished: boolean;
}

/**
 * What the `vibe_*` tools need of the workers (`server/src/workers/worker-service.ts`
 * implements it; VIBE-1…3). Every method is scoped to the calling chat (`ctx.chatId`): a
 * worker id of another chat is unknown here. Errors the model can fix are `ToolInputError`s.
 */
export interface WorkerPort {
  spawn(ctx: ToolContext, request: SpawnRequest): Promise<WorkerSummary>;
  send(ctx: ToolContext, workerId: string, message: string): Promise<WorkerSummary>;
  wait(ctx: ToolContext, workerId: string, timeoutMs: number): Promise<WaitOutcome>;
  kill(ctx: ToolContext, workerId: string): Promise<{ worker: WorkerSummary; killed: boolean; kernelPids: number[] }>;
  list(chatId: string): WorkerSummary[];
}

/** One worker in a line of text for the model. */
export function describeWorker(w: WorkerSummary): string {
  const secs = (w.elapsedMs / 1000).toFixed(1);
  return `${w.id} "${w.label}" — ${w.tier} tier (${w.model}), ${w.state}, ${secs} s, ${w.toolCalls} tool call${w.toolCalls === 1 ? '' : 's'}${w.sharesKernel ? ", shares the chat's kernel" : ''}`;
}
