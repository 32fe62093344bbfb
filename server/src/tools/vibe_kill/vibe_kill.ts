import { z } from 'zod';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool, type ToolDefinition } from '../../gate/define-tool.js';
import { describeWorker, type WorkerPort } from '../vibe_spawn/worker-port.js';
import { workerIdParameter } from '../vibe_send/vibe_send.js';

export const vibeKillParameters = z.strictObject({ worker_id: workerIdParameter });

/** `vibe_kill` (VIBE-2): aborts a worker's run and shuts its private kernel down. */
export function createVibeKillTool(workers: WorkerPort): ToolDefinition<typeof vibeKillParameters> {
  return defineTool({
    name: 'vibe_kill',
    tier: 'read', // VIBE-1 (see vibe_spawn): stopping work changes nothing in the workspace
    description: TOOL_DESCRIPTIONS.vibe_kill,
    parameters: vibeKillParameters,
    examples: [{ args: { worker_id: 'w-1a2b3c4d' }, comment: 'stop a worker that went the wrong way' }],
    parallelSafe: false,
    timeoutMs: 30_000,
    async execute(args, ctx) {
      const { worker, killed, kernelPids } = await workers.kill(ctx, args.worker_id);
      const kernel = kernelPids.length > 0 ? ` Its kernel (pid ${kernelPids.join(', ')}) was shut down.` : '';
      return {
        title: `worker ${worker.id}: ${killed ? 'killed' : worker.state}`,
        output: killed
          ? `Killed ${describeWorker(worker)}.${kernel}${worker.lastResult ? `\nLast result:\n${worker.lastResult}` : ''}`
          : `Worker ${worker.id} was already ${worker.state}; nothing to stop.${kernel}`,
        metadata: { workerId: worker.id, worker, killed, kernelPids }
      };
    }
  });
}
