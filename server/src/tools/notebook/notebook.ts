/**
 * Notebook tools: `notebook_read` (read), `notebook_edit` (write),
 * `notebook_run` (exec). When a pane has the notebook open, reads, edits and runs go
 * through that pane's open document (the notebook port): the user sees the change at once,
 * an edit is one undoable step, and cells run in the notebook's own kernel. Otherwise the
 * `.ipynb` is edited on disk atomically (ids, metadata and the nbformat minor version kept)
 * and cells run through eval's kernel path (`tools/eval/kernel-runner.ts`: the same kernel
 * choice, idle budget, `tool()` bridge and dead-kernel handling), their outputs written back.
 */
import { readFile } from 'node:fs/promises';
import {
  NotebookEditError,
  type CellmateCellMark,
  type EvalKernelInfo,
  type NotebookCellData,
  type NotebookEditOp
} from '@cellmate/protocol';
import { z } from 'zod';
import { notebookEditPreview } from './edit-preview.js';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool, type ToolContext } from '../../gate/define-tool.js';
import { ToolInputError } from '../../base/tool-errors.js';
import { resolveForWrite, writeFileAtomic } from '../../workspace/file-io.js';
import { resolveWorkspacePath } from '../../workspace/workspace-path.js';
import type { KernelRunner } from '../eval/kernel-runner.js';
import { page, saveFullOutput } from '../../workspace/output-shaping.js';
import { cellEntries, describeOutput, toNbformatOutputs } from '../../notebooks/format.js';
import {
  applyEdits,
  findCell,
  parseNotebook,
  serializeNotebook,
  sourceText,
  toCellData,
  type IpynbNotebook
} from '../../notebooks/ipynb.js';

/** Character budget of one page of cells (50 cells with a few cut outputs each fit). */
const MAX_NOTEBOOK_PAGE_CHARS = 50_000;
import type { NotebookPort, PaneTarget } from '../../notebooks/pane-hub.js';

/** The three sections of `notebook.md`, split on `<!-- tool_name -->` lines. */
function section(name: string): string {
  const md = TOOL_DESCRIPTIONS.notebook;
  const start = md.indexOf(`<!-- ${name} -->`);
  const rest = md.slice(start + name.length + 9);
  const end = rest.indexOf('<!-- notebook_');
  return (end >= 0 ? rest.slice(0, end) : rest).trim();
}

const ipynbPath = z
  .string({ error: 'must be a notebook path relative to the workspace, e.g. "analysis.ipynb"' })
  .min(1)
  .refine((p) => p.endsWith('.ipynb'), { error: 'must name an .ipynb file' })
  .describe('Notebook path relative to the workspace, e.g. "analysis.ipynb".');
const cellType = z.enum(['code', 'markdown', 'raw']);
const cellId = z
  .string()
  .min(1)
  .describe('A cell id from notebook_read (or "#<n>", the cell number counting from 1, in notebooks without ids).');

export const notebookReadParameters = z.strictObject({
  path: ipynbPath,
  offset: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('Number of the first cell to return (cells count from 1). Default 1.'),
  limit: z.number().int().min(1).max(200).optional().describe('Maximum cells to return. Default 50.')
});

const editSchema = z.discriminatedUnion('action', [
  z.strictObject({
    action: z.literal('insert'),
    index: z
      .number()
      .int()
      .min(0)
      .describe('How many cells come before the first new one (0 = top; the cell count = append).'),
    cells: z
      .array(z.strictObject({ cell_type: cellType.default('code'), source: z.string() }))
      .min(1)
      .max(50)
  }),
  z.strictObject({ action: z.literal('replace'), cell_id: cellId, source: z.string(), cell_type: cellType.optional() }),
  z.strictObject({ action: z.literal('delete'), cell_id: cellId }),
  z.strictObject({ action: z.literal('move'), cell_id: cellId, to_index: z.number().int().min(0) })
]);

export const notebookEditParameters = z.strictObject({
  path: ipynbPath,
  edits: z.array(editSchema).min(1).max(50).describe('Applied in order, all or nothing, as one undoable step.')
});

export const notebookRunParameters = z.strictObject({
  path: ipynbPath,
  cell_ids: z.array(cellId).min(1).max(50).describe('Code cells to run, in this order.')
});

export interface NotebookToolsOptions {
  port: NotebookPort;
  /**
   * Runs cells of notebooks no pane has open — eval's kernel path (kernel choice, idle
   * budget, `tool()` and shell magics back into the registry as `shell`, EVAL-5).
   */
  runner?: KernelRunner;
}

function toOps(edits: z.output<typeof notebookEditParameters>['edits']): NotebookEditOp[] {
  return edits.map((e) => {
    switch (e.action) {
      case 'insert':
        return {
          op: 'insert',
          index: e.index,
          cells: e.cells.map((c) => ({ cell_type: c.cell_type, source: c.source }))
        };
      case 'replace':
        return {
          op: 'replace',
          cellId: e.cell_id,
          source: e.source,
          ...(e.cell_type ? { cellType: e.cell_type } : {})
        };
      case 'delete':
        return { op: 'delete', cellId: e.cell_id };
      case 'move':
        return { op: 'move', cellId: e.cell_id, toIndex: e.to_index };
    }
  });
}

async function loadDisk(absolute: string, relative: string): Promise<IpynbNotebook> {
  let text: string;
  try {
    text = await readFile(absolute, 'utf8');
  } catch {
    throw new ToolInputError(
      `${relative} does not exist. Create notebooks with the write tool, or check the path with glob "*.ipynb".`
    );
  }
  try {
    return parseNotebook(text);
  } catch (e) {
    throw new ToolInputError(
      `${relative} is not a valid nbformat 4 notebook: ${(e as Error).message}. It was not changed.`
    );
  }
}

async function openIn(port: NotebookPort, relative: string, ctx: ToolContext): Promise<PaneTarget | undefined> {
  return port.find(relative, ctx.signal).catch(() => undefined);
}

/** Builds the three notebook tools around a notebook port (and kernels for closed notebooks). */
export function createNotebookTools(options: NotebookToolsOptions) {
  const read = defineTool({
    name: 'notebook_read',
    tier: 'read',
    description: section('notebook_read'),
    parameters: notebookReadParameters,
    examples: [
      { args: { path: 'analysis.ipynb' }, comment: 'all cells (up to 50) with ids and outputs' },
      { args: { path: 'analysis.ipynb', offset: 51, limit: 50 }, comment: 'the next 50 cells' }
    ],
    timeoutMs: 30_000,
    paths: (args) => [args.path],
    // notebook_read pages itself (offset/limit over cells, explicit note).
    outputShaping: 'paged',
    async execute(args, ctx) {
      const resolved = await resolveWorkspacePath(ctx.workspace, args.path);
      const pane = await openIn(options.port, resolved.relative, ctx);
      let cells: NotebookCellData[];
      let where: string;
      if (pane) {
        cells = (await pane.request('notebook/read', { path: resolved.relative }, ctx.signal)).cells;
        where = 'open in JupyterLab (the live document, including unsaved changes)';
      } else {
        const nb = await loadDisk(resolved.absolute, resolved.relative);
        cells = nb.cells.map((_, i) => toCellData(nb, i));
        where = 'on disk (not open in JupyterLab)';
      }
      const offset = args.offset ?? 1;
      const limit = args.limit ?? 50;
      const header = `${resolved.relative}: ${cells.length} cells, ${where}.`;
      const entries = await pageEntries(cells, offset - 1, offset - 1 + limit, header, ctx.workspace);
      const p = page({
        entries,
        offset,
        limit,
        total: cells.length,
        maxChars: MAX_NOTEBOOK_PAGE_CHARS,
        noun: { one: 'cell', many: 'cells' },
        tool: 'notebook_read'
      });
      return {
        title: `${resolved.relative} (${cells.length} cells)`,
        output: `${header}${p.text ? `\n${p.text}` : ''}`,
        metadata: { open: !!pane }
      };
    }
  });

  const edit = defineTool({
    name: 'notebook_edit',
    tier: 'write',
    description: section('notebook_edit'),
    parameters: notebookEditParameters,
    examples: [
      {
        args: {
          path: 'analysis.ipynb',
          edits: [{ action: 'insert', index: 2, cells: [{ cell_type: 'code', source: 'df.describe()' }] }]
        },
        comment: 'insert a code cell before the third cell'
      },
      {
        args: { path: 'analysis.ipynb', edits: [{ action: 'replace', cell_id: 'a1b2c3d4', source: 'df = load()' }] },
        comment: 'rewrite one cell (its outputs are cleared)'
      },
      {
        args: {
          path: 'analysis.ipynb',
          edits: [
            { action: 'move', cell_id: 'a1b2c3d4', to_index: 0 },
            { action: 'delete', cell_id: 'e5f6a7b8' }
          ]
        },
        comment: 'reorder and delete in one step'
      }
    ],
    timeoutMs: 30_000,
    paths: (args) => [args.path],
    // The cells as the edit will see them: the open document's, else the file's.
    async preview(args, ctx) {
      const resolved = await resolveForWrite(ctx.workspace, args.path);
      const pane = await openIn(options.port, resolved.relative, ctx);
      const cells = pane
        ? (await pane.request('notebook/read', { path: resolved.relative }, ctx.signal)).cells
        : (await loadDisk(resolved.absolute, resolved.relative)).cells;
      const { file, where } = notebookEditPreview(resolved.relative, cells, toOps(args.edits));
      return { summary: `notebook_edit · ${where}`, files: [file] };
    },
    async execute(args, ctx) {
      const resolved = await resolveForWrite(ctx.workspace, args.path);
      const ops = toOps(args.edits);
      const mark: CellmateCellMark = { created_by: 'agent', chat: ctx.chatId };
      const pane = await openIn(options.port, resolved.relative, ctx);
      const summary = args.edits
        .map((e) => (e.action === 'insert' ? `insert ${e.cells.length} at ${e.index}` : `${e.action} ${e.cell_id}`))
        .join(', ');
      if (pane) {
        let r: { insertedIds: string[]; cellCount: number };
        try {
          r = await pane.request('notebook/edit', { path: resolved.relative, ops, mark }, ctx.signal);
        } catch (e) {
          throw new ToolInputError(
            `Could not edit ${resolved.relative} in JupyterLab: ${(e as Error).message}. Nothing was changed.`
          );
        }
        return {
          title: `${resolved.relative}: ${summary}`,
          output: `Edited ${resolved.relative} in the open notebook (${summary}); it now has ${r.cellCount} cells. ${
            r.insertedIds.length ? `New cell ids: ${r.insertedIds.join(', ')}. ` : ''
          }The user sees the change at once and can undo it; the file on disk changes when the notebook is saved.`,
          // changedFiles: the open document changed (not yet the disk); the write hook reads it through the pane.
          metadata: { open: true, insertedIds: r.insertedIds, changedFiles: [resolved.relative] }
        };
      }
      const nb = await loadDisk(resolved.absolute, resolved.relative);
      let result: ReturnType<typeof applyEdits>;
      try {
        result = applyEdits(nb, ops, mark);
      } catch (e) {
        if (e instanceof NotebookEditError)
          throw new ToolInputError(`${e.message}. Nothing was changed; call notebook_read for the current cells.`);
        throw e;
      }
      await writeFileAtomic(resolved.absolute, serializeNotebook(result.notebook));
      return {
        title: `${resolved.relative}: ${summary}`,
        output: `Edited ${resolved.relative} on disk (${summary}); it now has ${result.notebook.cells.length} cells. ${
          result.insertedIds.length ? `New cell ids: ${result.insertedIds.join(', ')}.` : ''
        }`.trim(),
        metadata: { open: false, insertedIds: result.insertedIds, changedFiles: [resolved.relative] }
      };
    }
  });

  const run = defineTool({
    name: 'notebook_run',
    tier: 'exec',
    description: section('notebook_run'),
    parameters: notebookRunParameters,
    examples: [
      { args: { path: 'analysis.ipynb', cell_ids: ['a1b2c3d4', 'e5f6a7b8'] }, comment: 'run two cells in order' }
    ],
    // Cells may run long; the user's Stop interrupts them.
    timeoutMs: 2 ** 31 - 1,
    abortGraceMs: 5_000,
    paths: (args) => [args.path],
    async execute(args, ctx) {
      const resolved = await resolveForWrite(ctx.workspace, args.path);
      const pane = await openIn(options.port, resolved.relative, ctx);
      if (pane) {
        const r = await pane.request('notebook/run', { path: resolved.relative, cellIds: args.cell_ids }, ctx.signal);
        return runResult(resolved.relative, r.cells, r.status, 'in the open notebook, with its kernel');
      }
      if (!options.runner)
        throw new ToolInputError(
          `${resolved.relative} is not open in JupyterLab and this server has no kernels; open the notebook to run its cells.`
        );
      const nb = await loadDisk(resolved.absolute, resolved.relative);
      for (const id of args.cell_ids) {
        const i = findCell(nb, id);
        if (i < 0)
          throw new ToolInputError(`No cell with id "${id}" in ${resolved.relative}; call notebook_read for the ids.`);
        if (nb.cells[i]!.cell_type !== 'code')
          throw new ToolInputError(`Cell "${id}" is a ${nb.cells[i]!.cell_type} cell; only code cells run.`);
      }
      // The notebook's language decides the kernel: Cellmate's JS kernel for JavaScript notebooks.
      const spec = (nb.metadata.kernelspec ?? {}) as { name?: string; language?: string };
      const language =
        spec.language?.toLowerCase() === 'javascript' || spec.name === 'cellmate-js' ? 'javascript' : 'python';
      const ran: Array<{ id: string; outputs: unknown[]; count: number | null }> = [];
      let status: RunStatus = 'ok';
      let kernel: EvalKernelInfo | undefined;
      const notes: string[] = [];
      for (const id of args.cell_ids) {
        const cell = nb.cells[findCell(nb, id)]!;
        // The same kernel path as eval: kernel choice and replacement, idle budget, tool() bridge.
        const r = await options.runner.run(ctx, { code: sourceText(cell.source), language });
        kernel = r.handle.info;
        notes.push(...r.notes, ...r.outcome.notes);
        ran.push({ id, outputs: toNbformatOutputs(r.outcome), count: r.outcome.executionCount ?? null });
        if (r.outcome.status !== 'ok') {
          status = r.outcome.status;
          break;
        }
      }
      // Write the outputs into the file as it is now (someone may have changed it meanwhile).
      const now = await loadDisk(resolved.absolute, resolved.relative);
      for (const r of ran) {
        const i = findCell(now, r.id);
        if (i >= 0) now.cells[i] = { ...now.cells[i]!, outputs: r.outputs, execution_count: r.count };
      }
      await writeFileAtomic(resolved.absolute, serializeNotebook(now));
      const cells = ran.map((r) => toCellData(now, Math.max(0, findCell(now, r.id))));
      const where = kernel
        ? `on disk, in the ${kernel.name} kernel (${kernel.origin === 'notebook' ? `of ${kernel.notebookPath ?? 'the focused notebook'}` : 'private to this chat'})`
        : 'on disk';
      return {
        ...runResult(resolved.relative, cells, status, where, { notes, idleTimeoutMs: options.runner.idleTimeoutMs }),
        metadata: { open: false, status, changedFiles: [resolved.relative] }
      };
    }
  });

  return [read, edit, run] as const;
}

/**
 * The cells of one notebook_read page. An output over its budget is cut (the shaping
 * module's `cut`); then the uncut page is saved once under `.cellmate/outputs/` and each cut
 * marker names the `read` call that shows that cell whole.
 */
async function pageEntries(
  cells: NotebookCellData[],
  from: number,
  to: number,
  header: string,
  workspace: string
): Promise<string[]> {
  const shown = cellEntries(cells, from, to);
  const full = cellEntries(cells, from, to, { maxChars: Infinity });
  if (shown.every((e, i) => e === full[i])) return shown;
  let saved: string;
  try {
    saved = await saveFullOutput(workspace, 'notebook_read', [header, ...full].join('\n'));
  } catch {
    return cellEntries(cells, from, to, {
      rest: () => 'the whole output could not be saved; print the part you need with eval'
    });
  }
  const lineOf = new Map<number, number>();
  let line = 2; // line 1 is the header
  full.forEach((entry, i) => {
    lineOf.set(from + i + 1, line);
    line += entry.split('\n').length;
  });
  return cellEntries(cells, from, to, {
    rest: (n) => `the whole output: call read with {"path": "${saved}", "offset": ${lineOf.get(n)}}`
  });
}

/** Why a run stopped: the pane's statuses plus those of eval's kernel path (closed notebooks). */
type RunStatus = 'ok' | 'error' | 'aborted' | 'idle-timeout' | 'kernel-died' | 'stuck';

/** The last line of a run's result: why it stopped, truthfully. */
export function stopLine(status: RunStatus, idleTimeoutMs?: number): string | undefined {
  switch (status) {
    case 'ok':
      return undefined;
    case 'error':
      return '[A cell raised an error; later cells did not run.]';
    case 'aborted':
      return '[Interrupted: the user stopped the turn; the kernel was interrupted and later cells did not run.]';
    case 'idle-timeout':
      return `[Interrupted: the cell printed nothing for ${Math.round((idleTimeoutMs ?? 0) / 1000)} s (the idle budget); the kernel and its state are kept; later cells did not run. Print progress, or split the work.]`;
    case 'kernel-died':
      return '[The kernel died while running the cell (crash, out of memory, or killed); its state is lost and later cells did not run. The next run starts a fresh kernel.]';
    case 'stuck':
      return '[The cell did not stop after an interrupt; later cells did not run. The kernel will be restarted on the next run (state lost).]';
  }
}

function runResult(
  path: string,
  cells: NotebookCellData[],
  status: RunStatus,
  where: string,
  extra: { notes?: string[]; idleTimeoutMs?: number } = {}
) {
  const lines = [`Ran ${cells.length} cell(s) of ${path} ${where}.`];
  for (const n of extra.notes ?? []) lines.push(`Note: ${n}`);
  for (const c of cells) {
    lines.push(`[id=${c.id}] execution_count ${c.execution_count ?? 'none'}`);
    for (const o of c.outputs ?? [])
      lines.push(
        describeOutput(o, 0, {
          rest: () => `call notebook_read on cell ${c.id} (offset = its number, limit 1) for the whole output`
        }).replace(/^/gm, '    ')
      );
    if (!c.outputs?.length) lines.push('    (no output)');
  }
  const stop = stopLine(status, extra.idleTimeoutMs);
  if (stop) lines.push(stop);
  return {
    title: `${path}: ran ${cells.length} cell(s)${status === 'ok' ? '' : ` — ${status}`}`,
    output: lines.join('\n')
  };
}
