import { z } from 'zod';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool, type ToolDefinition } from '../../gate/define-tool.js';
import { describeWorker, type WorkerPort } from '../vibe_spawn/worker-port.js';

export const workerIdParameter = z
  .string({ error: 'must be the worker_id vibe_spawn returned, e.g. "w-1a2b3c4d"' })
  .trim()
  .min(1, { error: 'must not be empty' })
  .max(64, { error: 'must be at most 64 characters' })
  .describe('The worker_id vibe_spawn returned.');

export const vibeSendParameters = z.strictObject({
  worker_id: workerIdParameter,
  message: z
    .string({ error: 'must be a string' })
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(50_000, { error: 'must be at most 50,000 characters' })
    .describe("More instructions, appended to the worker's brief.")
});

/** `vibe_send` (VIBE-2): appends to a worker's brief and reruns it (after its current run, if one is going). */
export function createVibeSendTool(workers: WorkerPort): ToolDefinition<typeof vibeSendParameters> {
  return defineTool({
    name: 'vibe_send',
    tier: 'read', // VIBE-1 (see vibe_spawn)
    description: TOOL_DESCRIPTIONS.vibe_send,
    parameters: vibeSendParameters,
    examples: [
      {
        args: { worker_id: 'w-1a2b3c4d', message: 'Also cover the empty-file case, then report again.' },
        comment: 'a follow-up after reading its result'
      }
    ],
    parallelSafe: false,
    timeoutMs: 30_000,
    async execute(args, ctx) {
      const worker = await workers.send(ctx, args.worker_id, args.message);
      return {
        title: `worker ${worker.id}: message sent`,
        output:
          `Sent to ${describeWorker(worker)}. ${worker.state === 'running' ? 'It works on it now (or right after its current run);' : ''} call vibe_wait with worker_id "${worker.id}" for the new result.`.replace(
            / +/g,
            ' '
          ),
        metadata: { workerId: worker.id, worker }
      };
    }
  });
}
