/**
 * Runs one notebook top to bottom in a fresh kernel and judges each code cell against its
 * stored outputs — what `jupyter nbconvert --execute` does, plus the comparison. The code
 * runs as written (IPython's own magics, no Cellmate helper, no stdin: an `input()` fails as
 * it does under nbclient), each cell under the idle budget (SPEC EVAL-6). The kernel is
 * stopped whatever happened (awaited here, or by the caller through `onStopping`); an
 * abort kills it at once.
 */
import type { EvalLanguage, LaunchedKernel } from '@cellmate/kernel-bridge';
import { isMsgType, type AnyMessage } from '@cellmate/kernel-bridge';
import { outputDifference } from './compare.js';
import { joinText, type NbOutput } from './normalise.js';
import type { CellVerdict, NotebookVerdict, VerifiedCell } from './verdicts.js';

/** Starts a fresh kernel of a language with `cwd` as its working directory. */
export type FreshKernelLauncher = (
  language: EvalLanguage,
  cwd: string,
  signal?: AbortSignal
) => Promise<LaunchedKernel>;

/** A parsed notebook as far as a run needs it. */
export interface RunnableNotebook {
  cells: Array<{ cell_type: string; id?: string; source: string | string[]; outputs?: NbOutput[] }>;
  metadata?: { kernelspec?: { name?: string; language?: string }; language_info?: { name?: string } };
}

export interface RunNotebookOptions {
  relative: string;
  notebook: RunnableNotebook;
  /** The notebook's folder (absolute): the kernel's working directory. */
  cwd: string;
  launch: FreshKernelLauncher;
  idleTimeoutMs: number;
  signal: AbortSignal;
  /** Run the cells after an error too (default: they are `not-run`). */
  continueOnError?: boolean;
  /** How long an interrupted cell may take to stop before the kernel is killed. */
  interruptGraceMs?: number;
  /**
   * Takes the kernel's shutdown instead of waiting for it here, so the caller's next
   * notebook starts while this kernel exits; the caller awaits it before it returns.
   */
  onStopping?: (stopped: Promise<void>) => void;
}

/** The run's verdicts, and every code cell's new outputs by cell index (for the saved copy). */
export interface NotebookRun {
  verdict: NotebookVerdict;
  outputs: Map<number, { outputs: NbOutput[]; executionCount: number | null }>;
}

const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;
/** Frames of a traceback a result keeps: the last ones say where it failed. */
const KEPT_FRAMES = 3;

/** The kernel language a notebook asks for, or undefined when Cellmate has no kernel for it. */
export function notebookLanguage(nb: RunnableNotebook): EvalLanguage | undefined {
  const spec = nb.metadata?.kernelspec;
  const name = (spec?.name ?? '').toLowerCase();
  const language = (spec?.language ?? nb.metadata?.language_info?.name ?? '').toLowerCase();
  if (name === 'cellmate-js' || language === 'javascript') return 'javascript';
  if (name.startsWith('python') || language === 'python' || (!name && !language)) return 'python';
  return undefined;
}

const cellRef = (cell: { id?: string }, index: number): string =>
  typeof cell.id === 'string' && cell.id ? cell.id : `#${index + 1}`;

/** nbformat output of one IOPub message (undefined: not an output; 'clear': clear_output). */
function toNbOutput(msg: AnyMessage): NbOutput | 'clear' | undefined {
  if (isMsgType(msg, 'stream')) return { output_type: 'stream', name: msg.content.name, text: msg.content.text };
  if (isMsgType(msg, 'execute_result'))
    return {
      output_type: 'execute_result',
      data: msg.content.data,
      metadata: msg.content.metadata ?? {},
      execution_count: msg.content.execution_count
    };
  if (isMsgType(msg, 'display_data'))
    return { output_type: 'display_data', data: msg.content.data, metadata: msg.content.metadata ?? {} };
  if (isMsgType(msg, 'error'))
    return {
      output_type: 'error',
      ename: msg.content.ename,
      evalue: msg.content.evalue,
      traceback: msg.content.traceback
    };
  if (isMsgType(msg, 'clear_output')) return 'clear';
  return undefined;
}

/** The last frames of a traceback, colours removed, each cut to a few lines. */
export function lastFrames(traceback: readonly string[]): string[] {
  return traceback
    .map((f) => f.replace(ANSI, '').trimEnd())
    .filter((f) => f.trim())
    .slice(-KEPT_FRAMES)
    .map((f) => {
      const lines = f.split('\n');
      return lines.length > 8 ? [...lines.slice(0, 3), '…', ...lines.slice(-4)].join('\n') : f;
    });
}

/** Runs the notebook (see the module comment); never throws for the notebook's own failures. */
export async function runNotebook(opts: RunNotebookOptions): Promise<NotebookRun> {
  const started = Date.now();
  const outputs: NotebookRun['outputs'] = new Map();
  const code = opts.notebook.cells.map((c, index) => ({ c, index })).filter(({ c }) => c.cell_type === 'code');
  const cells: VerifiedCell[] = code.map(({ c, index }) => ({
    index,
    id: cellRef(c, index),
    status: 'not-run' as CellVerdict
  }));
  const verdict = (status: NotebookVerdict['status'], extra: Partial<NotebookVerdict> = {}): NotebookRun => ({
    verdict: { path: opts.relative, status, seconds: (Date.now() - started) / 1000, cells, ...extra },
    outputs
  });
  const language = notebookLanguage(opts.notebook);
  const specName = opts.notebook.metadata?.kernelspec?.name ?? 'python3';
  if (!language)
    return verdict('could-not-run', {
      reason: `its kernel "${specName}" is not one Cellmate can start (python3 or cellmate-js)`
    });
  if (opts.signal.aborted) return verdict('aborted', { reason: 'the run was stopped before this notebook started' });

  let kernel: LaunchedKernel;
  try {
    kernel = await opts.launch(language, opts.cwd, opts.signal);
  } catch (e) {
    if (opts.signal.aborted) return verdict('aborted', { reason: 'the run was stopped while its kernel started' });
    return verdict('could-not-run', {
      reason: `its ${language} kernel did not start: ${String((e as Error).message).split('\n')[0]}`
    });
  }
  // An abort while the kernel started fired no listener yet: end it here.
  if (opts.signal.aborted) {
    kernel.dispose();
    return verdict('aborted', { reason: 'the run was stopped while its kernel started' });
  }
  const kill = (): void => kernel.dispose();
  opts.signal.addEventListener('abort', kill, { once: true });
  let status: NotebookVerdict['status'] = 'ok';
  let reason: string | undefined;
  try {
    for (let i = 0; i < code.length; i++) {
      const { c, index } = code[i]!;
      const cell = cells[i]!;
      if (status === 'error' && !opts.continueOnError) break;
      const run = await runCell(kernel, joinText(c.source), opts);
      outputs.set(index, { outputs: run.outputs, executionCount: run.executionCount });
      cell.seconds = run.seconds;
      if (run.stop) {
        cell.status = 'error';
        cell.error = {
          ename: run.stop === 'idle-timeout' ? 'IdleTimeout' : run.stop === 'aborted' ? 'Aborted' : 'KernelDied',
          evalue: run.why,
          frames: []
        };
        status = run.stop === 'aborted' ? 'aborted' : 'error';
        reason = run.why;
        break;
      }
      const err = run.outputs.find((o) => o.output_type === 'error');
      if (run.failed || err) {
        cell.status = 'error';
        cell.error = {
          ename: err?.ename ?? 'Error',
          evalue: err?.evalue ?? '',
          frames: lastFrames(err?.traceback ?? [])
        };
        status = 'error';
        continue;
      }
      const difference = outputDifference(c.outputs ?? [], run.outputs, [opts.cwd]);
      if (difference) {
        cell.status = 'changed';
        cell.difference = difference;
        if (status === 'ok') status = 'changed';
      } else cell.status = 'ok';
    }
  } finally {
    opts.signal.removeEventListener('abort', kill);
    const stopped = kernel.shutdown(1000).catch(() => undefined);
    if (opts.onStopping) opts.onStopping(stopped);
    else await stopped;
  }
  return verdict(status, { kernel: `${specName} (${language})`, ...(reason ? { reason } : {}) });
}

interface CellRun {
  outputs: NbOutput[];
  executionCount: number | null;
  failed: boolean;
  seconds: number;
  /** Why the run of the notebook stops at this cell (not the cell's own exception). */
  stop?: 'idle-timeout' | 'aborted' | 'kernel-died';
  why: string;
}

async function runCell(kernel: LaunchedKernel, source: string, opts: RunNotebookOptions): Promise<CellRun> {
  const started = Date.now();
  let cellOutputs: NbOutput[] = [];
  let timer: NodeJS.Timeout | undefined;
  let stop: CellRun['stop'];
  let giveUp: () => void = () => undefined;
  const gaveUp = new Promise<'gave-up'>((resolve) => (giveUp = () => resolve('gave-up')));
  const idle = opts.idleTimeoutMs;
  const halt = (why: 'idle-timeout' | 'aborted'): void => {
    if (stop) return;
    stop = why;
    clearTimeout(timer);
    kernel.client.interrupt().catch(() => undefined);
    // A cell that ignores the interrupt (or an abort, which killed the kernel) ends the notebook's run.
    setTimeout(giveUp, why === 'aborted' ? 0 : (opts.interruptGraceMs ?? 10_000)).unref();
  };
  const arm = (): void => {
    clearTimeout(timer);
    if (!stop) timer = setTimeout(() => halt('idle-timeout'), idle);
  };
  const onAbort = (): void => halt('aborted');
  opts.signal.addEventListener('abort', onAbort, { once: true });
  arm();
  try {
    const running = kernel.client.execute(source, {
      allowStdin: false,
      storeHistory: true,
      stopOnError: false,
      onIOPub: (msg) => {
        const o = toNbOutput(msg);
        if (o === 'clear') cellOutputs = [];
        else if (o) {
          const last = cellOutputs[cellOutputs.length - 1];
          if (o.output_type === 'stream' && last?.output_type === 'stream' && last.name === o.name)
            last.text = joinText(last.text) + joinText(o.text);
          else cellOutputs.push(o);
        }
        if (o) arm();
      }
    });
    running.catch(() => undefined);
    const r = await Promise.race([running, gaveUp]).catch((e: unknown) => e as Error);
    const seconds = (Date.now() - started) / 1000;
    if (
      r === 'gave-up' ||
      r instanceof Error ||
      kernel.process.exitCode !== null ||
      kernel.process.signalCode !== null
    ) {
      const why =
        stop === 'aborted'
          ? 'the run was stopped (the turn was aborted)'
          : stop === 'idle-timeout'
            ? `no output for ${Math.round(idle / 1000)} s (the idle budget): the cell was interrupted and did not stop`
            : 'the kernel died while running this cell';
      return { outputs: cellOutputs, executionCount: null, failed: true, seconds, stop: stop ?? 'kernel-died', why };
    }
    if (stop) {
      const why =
        stop === 'aborted'
          ? 'the run was stopped (the turn was aborted)'
          : `no output for ${Math.round(idle / 1000)} s (the idle budget): the cell was interrupted`;
      return {
        outputs: cellOutputs,
        executionCount: r.reply.content.execution_count ?? null,
        failed: true,
        seconds,
        stop,
        why
      };
    }
    return {
      outputs: cellOutputs,
      executionCount: r.reply.content.execution_count ?? null,
      failed: r.reply.content.status !== 'ok',
      seconds,
      why: ''
    };
  } finally {
    clearTimeout(timer);
    opts.signal.removeEventListener('abort', onAbort);
  }
}
