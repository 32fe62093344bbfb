import { z } from 'zod';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool, type ToolDefinition } from '../../gate/define-tool.js';
import { describeWorker, type WorkerPort } from '../vibe_spawn/worker-port.js';

export const vibeListParameters = z.strictObject({});

/** Characters of each worker's last result `vibe_list` shows (vibe_wait gives the whole). */
const RESULT_PREVIEW = 300;

/** `vibe_list` (VIBE-2): this chat's workers with tier, state, elapsed time and last result. */
export function createVibeListTool(workers: WorkerPort): ToolDefinition<typeof vibeListParameters> {
  return defineTool({
    name: 'vibe_list',
    tier: 'read',
    description: TOOL_DESCRIPTIONS.vibe_list,
    parameters: vibeListParameters,
    examples: [{ args: {}, comment: 'which workers run, and what they reported' }],
    timeoutMs: 10_000,
    async execute(_args, ctx) {
      const all = workers.list(ctx.chatId);
      if (all.length === 0)
        return {
          title: 'no workers',
          output: 'This chat has no workers. Start one with vibe_spawn.',
          metadata: { workers: [] }
        };
      const lines = all.map((w) => {
        const result = w.lastResult
          ? `\n  last result: ${w.lastResult.length > RESULT_PREVIEW ? `${w.lastResult.slice(0, RESULT_PREVIEW)}… (vibe_wait with timeout_seconds 0 gives all of it)` : w.lastResult}`
          : '';
        return `- ${describeWorker(w)}${result}`;
      });
      return {
        title: `${all.length} worker${all.length === 1 ? '' : 's'}`,
        output: `${all.length} worker${all.length === 1 ? '' : 's'} in this chat:\n${lines.join('\n')}`,
        metadata: { workers: all }
      };
    }
  });
}
