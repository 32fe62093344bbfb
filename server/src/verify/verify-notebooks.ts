/**
 * Verifies several notebooks: each in its own fresh kernel (`run-notebook.ts`), at most
 * `parallel` at once, and keeps each run's outputs in a copy of the notebook under
 * `.cellmate/verify/<run>/` — the notebooks themselves are only read. A person may later
 * accept a copy's outputs into its notebook ({@link acceptOutputs}).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { NbOutput } from './normalise.js';
import { runNotebook, type FreshKernelLauncher, type RunnableNotebook } from './run-notebook.js';
import type { NotebookVerdict } from './verdicts.js';

/** Where the runs' outputs are kept, workspace-relative. */
export const VERIFY_DIR = '.cellmate/verify';

/** Runs whose outputs are kept; older ones are removed when a run starts. */
export const KEPT_RUNS = 20;

/** Notebooks at once by default: one kernel per core, at most four. */
export function defaultParallel(): number {
  return Math.max(1, Math.min(4, os.availableParallelism?.() ?? os.cpus().length));
}

export interface VerifyOptions {
  workspace: string;
  /** Workspace-relative notebook paths (already confined and judged by the caller). */
  notebooks: readonly string[];
  launch: FreshKernelLauncher;
  idleTimeoutMs: number;
  signal: AbortSignal;
  parallel?: number;
  continueOnError?: boolean;
  /** Each notebook's verdict as it finishes (progress). */
  onNotebook?: (verdict: NotebookVerdict, done: number, total: number) => void;
}

export interface VerifyRun {
  runId: string;
  /** In the order asked. */
  notebooks: NotebookVerdict[];
}

/** A notebook read for a run, or why it cannot be. */
async function load(absolute: string): Promise<{ nb: RunnableNotebook & Record<string, unknown> } | { error: string }> {
  let text: string;
  try {
    text = await readFile(absolute, 'utf8');
  } catch {
    return { error: 'it does not exist or cannot be read' };
  }
  try {
    const nb = JSON.parse(text) as RunnableNotebook & Record<string, unknown>;
    if (
      !nb ||
      typeof nb !== 'object' ||
      !Array.isArray(nb.cells) ||
      nb.cells.some((c) => !c || typeof c !== 'object' || typeof c.cell_type !== 'string')
    ) {
      return { error: 'it is not an nbformat 4 notebook (no "cells" list)' };
    }
    return { nb };
  } catch (e) {
    return { error: `it is not valid JSON (${(e as Error).message})` };
  }
}

/** Runs the notebooks (see the module comment); never writes to them. */
export async function verifyNotebooks(opts: VerifyOptions): Promise<VerifyRun> {
  await pruneRuns(opts.workspace);
  const runId = `${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}-${randomBytes(3).toString('hex')}`;
  const results: NotebookVerdict[] = new Array(opts.notebooks.length);
  // Kernels exit while the next notebooks run; all have exited before this returns.
  const stopping: Array<Promise<void>> = [];
  let next = 0;
  let done = 0;
  const worker = async (): Promise<void> => {
    while (next < opts.notebooks.length) {
      const i = next++;
      const relative = opts.notebooks[i]!;
      results[i] = await verifyOne(relative, runId, opts, (p) => stopping.push(p));
      opts.onNotebook?.(results[i]!, ++done, opts.notebooks.length);
    }
  };
  const parallel = Math.max(1, Math.min(opts.parallel ?? defaultParallel(), opts.notebooks.length));
  try {
    await Promise.all(Array.from({ length: parallel }, worker));
  } finally {
    await Promise.all(stopping);
  }
  return { runId, notebooks: results };
}

/** Removes all but the newest {@link KEPT_RUNS} - 1 runs' copies (run ids sort by time). */
async function pruneRuns(workspace: string): Promise<void> {
  const root = path.join(workspace, VERIFY_DIR);
  const runs = (await readdir(root).catch(() => [] as string[])).filter((r) => /^[0-9TZ]+-[0-9a-f]{6}$/.test(r)).sort();
  await Promise.all(
    runs
      .slice(0, Math.max(0, runs.length - (KEPT_RUNS - 1)))
      .map((r) => rm(path.join(root, r), { recursive: true, force: true }))
  );
}

async function verifyOne(
  relative: string,
  runId: string,
  opts: VerifyOptions,
  onStopping: (stopped: Promise<void>) => void
): Promise<NotebookVerdict> {
  const absolute = path.join(opts.workspace, relative);
  const loaded = await load(absolute);
  if ('error' in loaded)
    return { path: relative, status: 'could-not-run', seconds: 0, cells: [], reason: loaded.error };
  const { verdict, outputs } = await runNotebook({
    relative,
    notebook: loaded.nb,
    cwd: path.dirname(absolute),
    launch: opts.launch,
    idleTimeoutMs: opts.idleTimeoutMs,
    signal: opts.signal,
    onStopping,
    ...(opts.continueOnError ? { continueOnError: true } : {})
  });
  if (outputs.size === 0) return verdict;
  // The copy: the notebook as read, each run cell's outputs and count replaced.
  const copy = structuredClone(loaded.nb) as RunnableNotebook & Record<string, unknown>;
  for (const [index, o] of outputs) {
    const cell = copy.cells[index] as Record<string, unknown>;
    cell.outputs = o.outputs;
    cell.execution_count = o.executionCount;
  }
  const saved = path.posix.join(VERIFY_DIR, runId, relative.split(path.sep).join('/'));
  try {
    await mkdir(path.dirname(path.join(opts.workspace, saved)), { recursive: true });
    await writeFile(path.join(opts.workspace, saved), `${JSON.stringify(copy, null, 1)}\n`);
    return { ...verdict, outputsPath: saved };
  } catch {
    return verdict;
  }
}

/** Why {@link acceptOutputs} refused. */
export class AcceptOutputsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AcceptOutputsError';
  }
}

/**
 * The notebook text with a run's outputs put into the cells whose source is still the one
 * that ran (matched by id, else by position); cells edited since keep theirs. Pure: the
 * caller writes it (through the edits path, with its stale check).
 */
export function withAcceptedOutputs(
  current: string,
  savedCopy: string
): { text: string; cells: number; skipped: number } {
  let nb: { cells: Array<Record<string, unknown>> };
  let copy: { cells: Array<Record<string, unknown>> };
  try {
    nb = JSON.parse(current);
    copy = JSON.parse(savedCopy);
  } catch (e) {
    throw new AcceptOutputsError(`the notebook or the run's copy is not valid JSON (${(e as Error).message})`);
  }
  if (!Array.isArray(nb?.cells) || !Array.isArray(copy?.cells))
    throw new AcceptOutputsError('the notebook or the run\'s copy has no "cells" list');
  let cells = 0;
  let skipped = 0;
  copy.cells.forEach((ran, i) => {
    if (ran.cell_type !== 'code' || !Array.isArray(ran.outputs)) return;
    const target =
      (typeof ran.id === 'string' ? nb.cells.find((c) => c.id === ran.id) : undefined) ??
      (ran.id === undefined ? nb.cells[i] : undefined);
    const src = (c: Record<string, unknown>): string =>
      Array.isArray(c.source) ? c.source.join('') : String(c.source ?? '');
    if (!target || target.cell_type !== 'code' || src(target) !== src(ran)) {
      skipped++;
      return;
    }
    target.outputs = ran.outputs as NbOutput[];
    target.execution_count = ran.execution_count ?? null;
    cells++;
  });
  const indent = /^\{\n( +)"/.exec(current)?.[1]?.length ?? 1;
  return { text: `${JSON.stringify(nb, null, indent)}\n`, cells, skipped };
}
