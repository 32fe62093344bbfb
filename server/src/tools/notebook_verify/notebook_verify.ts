/**
 * `notebook_verify` (exec tier): runs notebooks in fresh private kernels and compares their
 * outputs with the stored ones (`server/src/verify/`). Only reads the notebooks; the run's
 * outputs go to a copy beside the run. Kernels come from the kernel manager
 * (`launchFresh`), so the companion's exit ends them too.
 */
import { DEFAULT_IDLE_TIMEOUT_MS } from '@cellmate/kernel-bridge';
import { z } from 'zod';
import type { VerifyDisplay } from '@cellmate/protocol';
import type { KernelManager } from '../../kernels/kernel-manager.js';
import { defaultParallel, verifyNotebooks } from '../../verify/verify-notebooks.js';
import type { NotebookVerdict } from '../../verify/verdicts.js';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool, pathAllowed, type ToolContext } from '../../gate/define-tool.js';
import { ToolInputError } from '../../base/tool-errors.js';
import { walkFiles } from '../../workspace/walk.js';
import { resolveWorkspacePath } from '../../workspace/workspace-path.js';
import { formatVerify } from './format.js';

/** Time of one whole call: the idle budget bounds each cell, this only stops a runaway call. */
const NO_TIMEOUT_MS = 2 ** 31 - 1;
/** Notebooks one call runs at most (a folder with more is refused, with the count). */
export const MAX_NOTEBOOKS = 200;

const notebookPath = z
  .string({ error: 'must be a notebook path relative to the workspace, e.g. "analysis.ipynb"' })
  .min(1)
  .refine((p) => p.endsWith('.ipynb'), { error: 'must name an .ipynb file' });

export const notebookVerifyParameters = z
  .strictObject({
    notebooks: z
      .array(notebookPath)
      .min(1)
      .max(MAX_NOTEBOOKS)
      .optional()
      .describe('Notebooks to run, relative to the workspace.'),
    folder: z
      .string()
      .min(1)
      .optional()
      .describe('Run every notebook under this folder (e.g. "." for the whole workspace).'),
    continue_on_error: z
      .boolean()
      .default(false)
      .describe('Run the cells after an error too (default: they are reported as not-run).')
  })
  .refine((a) => (a.notebooks === undefined) !== (a.folder === undefined), {
    error: 'give either "notebooks" (a list of .ipynb paths) or "folder", not both and not neither'
  });

export interface NotebookVerifyOptions {
  kernels: Pick<KernelManager, 'launchFresh'>;
  /** Idle budget per cell (SPEC EVAL-6). Default 5 minutes, as eval's. */
  idleTimeoutMs?: number;
  /** Notebooks at once. Default: one per core, at most four. */
  parallel?: number;
}

/** The notebooks a call names, confined, judged by the call's gate, without duplicates. */
async function notebooksOf(
  args: z.output<typeof notebookVerifyParameters>,
  ctx: ToolContext
): Promise<{ paths: string[]; withheld: number }> {
  const paths: string[] = [];
  let withheld = 0;
  if (args.notebooks) {
    for (const p of args.notebooks) {
      const r = await resolveWorkspacePath(ctx.workspace, p);
      if (!r.exists)
        throw new ToolInputError(`${p} does not exist. Check the path with glob "**/*.ipynb"; nothing was run.`);
      if (!paths.includes(r.relative)) paths.push(r.relative);
    }
    return { paths, withheld };
  }
  const root = await resolveWorkspacePath(ctx.workspace, args.folder!);
  if (!root.exists)
    throw new ToolInputError(
      `Folder not found: "${args.folder}". Paths are relative to the workspace root; nothing was run.`
    );
  const prefix = root.relative === '.' ? '' : `${root.relative}/`;
  for await (const rel of walkFiles(root.absolute, root.absolute, ctx.signal)) {
    if (!rel.endsWith('.ipynb')) continue;
    if (pathAllowed(ctx, `${prefix}${rel}`)) paths.push(`${prefix}${rel}`);
    else withheld++;
  }
  paths.sort();
  if (paths.length > MAX_NOTEBOOKS)
    throw new ToolInputError(
      `${args.folder} holds ${paths.length} notebooks, more than ${MAX_NOTEBOOKS} at once: name a smaller folder or list the notebooks; nothing was run.`
    );
  return { paths, withheld };
}

/** The card's display of a run. */
export function verifyDisplay(runId: string, notebooks: readonly NotebookVerdict[]): VerifyDisplay {
  return {
    kind: 'verify',
    runId,
    notebooks: notebooks.map((n) => ({
      path: n.path,
      status: n.status,
      seconds: Math.round(n.seconds * 10) / 10,
      ...(n.reason ? { reason: n.reason } : {}),
      ...(n.outputsPath ? { outputsPath: n.outputsPath } : {}),
      cells: n.cells.map((c) => ({
        index: c.index,
        id: c.id,
        status: c.status,
        ...(c.error
          ? { detail: `${c.error.ename}: ${c.error.evalue}`.slice(0, 300) }
          : c.difference
            ? { detail: c.difference }
            : {})
      }))
    }))
  };
}

/** Builds the tool around the kernel manager (registered only when kernels are). */
export function createNotebookVerifyTool(options: NotebookVerifyOptions) {
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  return defineTool({
    name: 'notebook_verify',
    tier: 'exec',
    description: TOOL_DESCRIPTIONS.notebook_verify,
    parameters: notebookVerifyParameters,
    examples: [
      {
        args: { notebooks: ['analysis.ipynb', 'reports/q3.ipynb'] },
        comment: 'the notebooks a change touched (an edit result names them)'
      },
      { args: { folder: 'notebooks' }, comment: 'every notebook under a folder' }
    ],
    timeoutMs: NO_TIMEOUT_MS,
    // Stop kills the kernels at once; the result still comes back, saying which notebooks were stopped.
    abortGraceMs: 5_000,
    paths: (args) => [...(args.notebooks ?? []), args.folder],
    async execute(args, ctx) {
      const { paths, withheld } = await notebooksOf(args, ctx);
      if (paths.length === 0) {
        return {
          title: 'notebook_verify: no notebooks',
          output: `No notebooks under ${args.folder}${withheld ? ` (${withheld} withheld by the policy)` : ''}; nothing was run.`,
          metadata: { notebooks: [] }
        };
      }
      const run = await verifyNotebooks({
        workspace: ctx.workspace,
        notebooks: paths,
        launch: (language, cwd, signal) => options.kernels.launchFresh(language, cwd, signal),
        idleTimeoutMs,
        signal: ctx.signal,
        parallel: options.parallel ?? defaultParallel(),
        continueOnError: args.continue_on_error,
        onNotebook: (n, done, total) => ctx.progress?.({ lastLine: `${done}/${total} ${n.path}: ${n.status}` })
      });
      const f = formatVerify(run.runId, run.notebooks, { withheld, idleTimeoutMs });
      return {
        title: f.title,
        output: f.output,
        display: verifyDisplay(run.runId, run.notebooks),
        metadata: { runId: run.runId, notebooks: run.notebooks }
      };
    }
  });
}
