import { z } from 'zod';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool, type ToolDefinition } from '../../gate/define-tool.js';
import { describeWorker, type WorkerPort } from '../vibe_spawn/worker-port.js';
import { workerIdParameter } from '../vibe_send/vibe_send.js';

/** The longest one `vibe_wait` blocks (HARN-9: bounded); call again to keep waiting. */
export const MAX_WAIT_SECONDS = 600;
export const DEFAULT_WAIT_SECONDS = 60;

export const vibeWaitParameters = z.strictObject({
  worker_id: workerIdParameter,
  timeout_seconds: z
    .number({ error: 'must be a number of seconds' })
    .min(0, { error: 'must be at least 0' })
    .max(MAX_WAIT_SECONDS, { error: `must be at most ${MAX_WAIT_SECONDS}; call vibe_wait again to wait longer` })
    .default(DEFAULT_WAIT_SECONDS)
    .describe(
      `How long to wait at most, in seconds (0 = just look). Default ${DEFAULT_WAIT_SECONDS}, at most ${MAX_WAIT_SECONDS}.`
    )
});

/** `vibe_wait` (VIBE-2): blocks until the worker's run ends or the timeout passes (then "still running"). */
export function createVibeWaitTool(workers: WorkerPort): ToolDefinition<typeof vibeWaitParameters> {
  return defineTool({
    name: 'vibe_wait',
    tier: 'read',
    description: TOOL_DESCRIPTIONS.vibe_wait,
    parameters: vibeWaitParameters,
    examples: [
      { args: { worker_id: 'w-1a2b3c4d' }, comment: 'wait up to a minute for the result' },
      { args: { worker_id: 'w-1a2b3c4d', timeout_seconds: 0 }, comment: 'just look whether it is done' }
    ],
    timeoutMs: (MAX_WAIT_SECONDS + 30) * 1000,
    async execute(args, ctx) {
      const { worker, finished } = await workers.wait(ctx, args.worker_id, args.timeout_seconds * 1000);
      if (!finished) {
        return {
          title: `worker ${worker.id}: still running`,
          output: `Still running: ${describeWorker(worker)}. Nothing is lost by waiting again: call vibe_wait with worker_id "${worker.id}" later (or vibe_kill to stop it).`,
          metadata: { workerId: worker.id, worker, finished }
        };
      }
      return {
        title: `worker ${worker.id}: ${worker.state}`,
        output: `${describeWorker(worker)}.\nResult:\n${worker.lastResult ?? '(no text)'}`,
        metadata: { workerId: worker.id, worker, finished }
      };
    }
  });
}
