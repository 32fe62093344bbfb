/**
 * `notebook_accept_outputs` (write tier): a `notebook_verify` run's kept outputs into the
 * notebook — what the verify card's "Accept new outputs" calls as actor `user`, so deny
 * rules, the write hook and the audit log apply to the click as to any write.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { AcceptOutputsError, VERIFY_DIR, withAcceptedOutputs } from '../../verify/verify-notebooks.js';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool } from '../../gate/define-tool.js';
import { ToolInputError } from '../../base/tool-errors.js';
import { resolveForWrite, writeFileAtomic } from '../../workspace/file-io.js';
import type { NotebookPort } from '../../notebooks/pane-hub.js';

export const notebookAcceptOutputsParameters = z.strictObject({
  run_id: z.string().regex(/^[0-9TZ]+-[0-9a-f]{6}$/, {
    error: 'must be the run id a notebook_verify result names, e.g. "20260101T120000-a1b2c3"'
  }),
  path: z
    .string()
    .min(1)
    .refine((p) => p.endsWith('.ipynb'), { error: 'must name an .ipynb file' })
    .describe('The notebook, relative to the workspace.')
});

/** Builds the tool; `port` says whether a pane has the notebook open (then it is refused). */
export function createNotebookAcceptOutputsTool(options: { port?: NotebookPort } = {}) {
  return defineTool({
    name: 'notebook_accept_outputs',
    tier: 'write',
    description: TOOL_DESCRIPTIONS.notebook_accept_outputs,
    parameters: notebookAcceptOutputsParameters,
    examples: [
      {
        args: { run_id: '20260101T120000-a1b2c3', path: 'analysis.ipynb' },
        comment: 'the person asked to keep the new outputs of that run'
      }
    ],
    timeoutMs: 30_000,
    paths: (args) => [args.path],
    async execute(args, ctx) {
      const target = await resolveForWrite(ctx.workspace, args.path);
      if (!target.exists) throw new ToolInputError(`${args.path} does not exist; nothing was written.`);
      const copyPath = path.join(ctx.workspace, VERIFY_DIR, args.run_id, ...target.relative.split('/'));
      const copy = await readFile(copyPath, 'utf8').catch(() => undefined);
      if (copy === undefined)
        throw new ToolInputError(
          `Run ${args.run_id} kept no outputs for ${target.relative} (its copy is gone or the notebook did not run); run notebook_verify again. Nothing was written.`
        );
      // An open notebook's document would overwrite the file on its next save: the person saves or closes it first.
      const open = await options.port?.find(target.relative, ctx.signal).catch(() => undefined);
      if (open)
        throw new ToolInputError(
          `${target.relative} is open in JupyterLab: close it (saving what you want to keep) and accept again, so the open document does not overwrite the accepted outputs. Nothing was written.`
        );
      const current = await readFile(target.absolute, 'utf8');
      let merged: ReturnType<typeof withAcceptedOutputs>;
      try {
        merged = withAcceptedOutputs(current, copy);
      } catch (e) {
        if (e instanceof AcceptOutputsError)
          throw new ToolInputError(`${target.relative}: ${e.message}. Nothing was written.`);
        throw e;
      }
      if (merged.cells === 0)
        throw new ToolInputError(
          `No cell of ${target.relative} still has the source that ran in ${args.run_id} (${merged.skipped} edited since): run notebook_verify again. Nothing was written.`
        );
      await writeFileAtomic(target.absolute, merged.text);
      const skipped = merged.skipped
        ? `; ${merged.skipped} cell${merged.skipped === 1 ? '' : 's'} edited since the run kept ${merged.skipped === 1 ? 'its' : 'their'} outputs`
        : '';
      return {
        title: `${target.relative}: accepted the outputs of ${merged.cells} cells`,
        output: `Wrote the outputs of run ${args.run_id} into ${merged.cells} code cells of ${target.relative}${skipped}.`,
        metadata: { cells: merged.cells, skipped: merged.skipped }
      };
    }
  });
}
