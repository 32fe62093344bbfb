/**
 * `kernel_state` (read tier): the focused notebook's live kernel against its cells
 * (`server/src/context/kernel-state.ts`). Reads the cells from the pane's open document
 * (unsaved edits and execution counts as the person sees them), else from disk; asks the
 * kernel silently. Python only: the JS kernel keeps no input history to compare with.
 */
import { readFile } from 'node:fs/promises';
import type { KernelClient } from '@cellmate/kernel-bridge';
import type { NotebookCellData } from '@cellmate/protocol';
import { z } from 'zod';
import { analyseKernelState, formatKernelState, kernelFacts, type StateCell } from '../../context/kernel-state.js';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool, type ToolContext } from '../../gate/define-tool.js';
import { ToolInputError } from '../../base/tool-errors.js';
import type { NotebookPort } from '../../notebooks/pane-hub.js';
import { resolveWorkspacePath } from '../../workspace/workspace-path.js';
import type { KernelManager } from '../../kernels/kernel-manager.js';

/** The notebook kernel a call looks at. */
export interface KernelStatePort {
  /** The kernel of the notebook focused in the window of the call's turn, if any. */
  focused(
    ctx: ToolContext
  ): Promise<{ client: KernelClient; notebookPath: string; language: 'python' | 'javascript' } | undefined>;
}

/** The port over a kernel manager: the focused notebook's kernel (Python first, then JavaScript) for the call's chat. */
export function focusedKernels(kernels: Pick<KernelManager, 'focusedKernel' | 'acquire'>): KernelStatePort {
  return {
    focused: async (ctx) => {
      for (const language of ['python', 'javascript'] as const) {
        const ref = kernels.focusedKernel(ctx.chatId, language);
        if (!ref?.notebookPath) continue;
        const { handle } = await kernels.acquire(ctx.chatId, language);
        return { client: handle.session.client, notebookPath: ref.notebookPath, language };
      }
      return undefined;
    }
  };
}

export const kernelStateParameters = z.strictObject({
  path: z
    .string()
    .min(1)
    .refine((p) => p.endsWith('.ipynb'), { error: 'must name an .ipynb file' })
    .optional()
    .describe('The notebook (default: the one focused in JupyterLab; it must be that one).')
});

async function cellsOf(
  port: NotebookPort | undefined,
  relative: string,
  absolute: string,
  ctx: ToolContext
): Promise<NotebookCellData[]> {
  const pane = await port?.find(relative, ctx.signal).catch(() => undefined);
  if (pane) return (await pane.request('notebook/read', { path: relative }, ctx.signal)).cells;
  const nb = JSON.parse(await readFile(absolute, 'utf8')) as { cells?: Array<Record<string, unknown>> };
  return (nb.cells ?? []).map((c, i) => ({
    id: typeof c.id === 'string' ? c.id : `#${i + 1}`,
    cell_type: c.cell_type as NotebookCellData['cell_type'],
    source: Array.isArray(c.source) ? c.source.join('') : String(c.source ?? ''),
    metadata: {},
    execution_count: typeof c.execution_count === 'number' ? c.execution_count : null
  }));
}

/** Builds the tool around the focused kernel and the notebook port. */
export function createKernelStateTool(options: { kernels: KernelStatePort; port?: NotebookPort }) {
  return defineTool({
    name: 'kernel_state',
    tier: 'read',
    description: TOOL_DESCRIPTIONS.kernel_state,
    parameters: kernelStateParameters,
    examples: [{ args: {}, comment: 'before trusting a variable in the notebook the person works in' }],
    timeoutMs: 30_000,
    paths: (args) => [args.path],
    async execute(args, ctx) {
      const kernel = await options.kernels.focused(ctx);
      if (!kernel)
        throw new ToolInputError(
          'kernel_state looks at the kernel of the notebook focused in JupyterLab, and no notebook with a running kernel is focused in the window this turn came from. Ask the person to open the notebook and start its kernel.'
        );
      const target = await resolveWorkspacePath(ctx.workspace, kernel.notebookPath);
      if (args.path) {
        const asked = await resolveWorkspacePath(ctx.workspace, args.path);
        if (asked.relative !== target.relative)
          throw new ToolInputError(
            `${asked.relative} is not the focused notebook (${target.relative}); kernel_state can only read the focused notebook's kernel. Ask the person to focus ${asked.relative}.`
          );
      }
      if (kernel.language !== 'python')
        throw new ToolInputError(
          `${target.relative} runs a ${kernel.language} kernel; kernel_state reads Python kernels (IPython keeps the input history it compares with).`
        );
      const cells: StateCell[] = (await cellsOf(options.port, target.relative, target.absolute, ctx))
        .map((c, index) => ({ c, index }))
        .filter(({ c }) => c.cell_type === 'code')
        .map(({ c, index }) => ({
          index,
          id: c.id,
          source: c.source,
          executionCount: typeof c.execution_count === 'number' ? c.execution_count : null
        }));
      const facts = await kernelFacts(kernel.client, cells, ctx.signal);
      if (!facts)
        throw new ToolInputError(
          `The kernel of ${target.relative} did not answer (busy with a long cell, or not IPython); try again when it is idle.`
        );
      const report = analyseKernelState(cells, facts);
      return {
        title: `${target.relative}: ${report.findings.length ? `${report.staleCells.length} stale cell${report.staleCells.length === 1 ? '' : 's'}` : 'kernel matches the notebook'}`,
        output: formatKernelState(target.relative, cells, facts, report),
        metadata: {
          notebook: target.relative,
          staleCells: report.staleCells,
          findings: report.findings,
          orphanNames: report.orphanNames
        }
      };
    }
  });
}
