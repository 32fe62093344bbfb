/**
 * "Fix with Cellmate" / "Explain" on a failing cell: the block the model receives with the
 * person's one-line request. It carries the cell, its error and traceback, the names the
 * failing line reads with the cells they come from (`structural/graph/def-use.ts`), the
 * live kernel's facts about those names (type, shape, columns — the same silent inspection
 * as `@` mentions), and the turn's instructions: find the cause before editing, which is
 * often an earlier cell than the one that raised. Pure apart from the two callbacks.
 */
import type { CellAssist, NotebookCellData } from '@cellmate/protocol';
import { cellNames, traceOrigins, type NameOrigin } from '../structural/graph/def-use.js';

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;
/** Characters of the traceback kept (its end is where the error is). */
const TRACEBACK_CHARS = 4_000;
/** Names the kernel is asked about. */
const MAX_FACTS = 8;

interface ErrorOutput {
  ename: string;
  evalue: string;
  traceback: string[];
}

/** The error a cell's outputs hold, if any. */
export function cellError(cell: Pick<NotebookCellData, 'outputs'>): ErrorOutput | undefined {
  for (const o of cell.outputs ?? []) {
    const out = o as Record<string, unknown>;
    if (out.output_type === 'error') {
      const tb = Array.isArray(out.traceback) ? out.traceback.map(String) : [];
      return { ename: String(out.ename ?? ''), evalue: String(out.evalue ?? ''), traceback: tb };
    }
  }
  return undefined;
}

/**
 * The failing line of the cell (1-based) from IPython's traceback: the first frame of the
 * executed cell (`Cell In[5], line 3`, IPython 8; `Input In [5] … line 3` before), else
 * the first `---->` arrow, else undefined.
 */
export function failingLine(traceback: readonly string[]): number | undefined {
  const text = traceback.join('\n').replace(ANSI, '');
  const frame = /(?:Cell In\s*\[\d*\]|Input In\s*\[\d*\])[^\n]*?line (\d+)/.exec(text);
  if (frame) return Number(frame[1]);
  const arrow = /^-+>\s*(\d+)/m.exec(text);
  return arrow ? Number(arrow[1]) : undefined;
}

/** Where the asked-about cell is now: by id when the pane gave one, else by index. */
export function findAssistCell(cells: readonly NotebookCellData[], assist: CellAssist): number | undefined {
  if (assist.cellId) {
    const i = cells.findIndex((c) => c.id === assist.cellId);
    if (i >= 0) return i;
  }
  return assist.cell < cells.length ? assist.cell : undefined;
}

export interface AssistInputs {
  notebookPath: string;
  cells: readonly NotebookCellData[];
  assist: CellAssist;
  /** The kernel's facts about these names (one summary each), or none when no kernel answers. */
  kernelFacts: (names: string[]) => Promise<string[]>;
}

/** The block appended to the person's request for a Fix or Explain turn. */
export async function cellAssistBlock(inputs: AssistInputs): Promise<string> {
  const { notebookPath, cells, assist } = inputs;
  const index = findAssistCell(cells, assist);
  if (index === undefined)
    return `The cell to ${assist.action} (number ${assist.cell + 1}) is not in ${notebookPath} any more: read the notebook with notebook_read and ask which cell was meant.`;
  const cell = cells[index]!;
  const n = index + 1;
  const error = cellError(cell);
  const lines: string[] = [];
  lines.push(assist.action === 'fix' ? fixInstructions(notebookPath, n) : explainInstructions(notebookPath, n));
  lines.push('', `Cell [${n}] (id ${cell.id}), ${cell.cell_type}:`, indent(cell.source || '(empty)'));
  if (!error) {
    lines.push('', 'It shows no error output now (it may not have run since it failed, or it ran without an error).');
    return lines.join('\n');
  }
  lines.push('', `Its error: ${error.ename}: ${error.evalue}`.replace(ANSI, ''));
  const tb = error.traceback.join('\n').replace(ANSI, '');
  if (tb)
    lines.push(
      'Traceback:',
      indent(tail(tb, `call notebook_read with {"path": "${notebookPath}", "offset": ${n}, "limit": 1} for all of it`))
    );

  const line = failingLine(error.traceback);
  const names =
    cell.cell_type === 'code'
      ? await cellNames(cells.map((c) => ({ cellType: c.cell_type, source: c.source }))).catch(() => undefined)
      : undefined;
  const own = names?.[index];
  const lineNames = own ? (line !== undefined ? (own.readsByLine.get(line) ?? []) : own.reads) : [];
  if (line !== undefined)
    lines.push(
      '',
      `The failing line is line ${line} of cell [${n}]: ${(cell.source.split('\n')[line - 1] ?? '').trim()}`
    );
  if (names && lineNames.length) {
    const origins = traceOrigins(names, index, lineNames);
    lines.push('', `Names ${line !== undefined ? 'that line' : 'the cell'} reads: ${lineNames.join(', ')}.`);
    lines.push(
      origins.length
        ? `Where they come from (cells above [${n}], read from the sources: candidates to check, not proof):\n${origins.map((o) => originLine(o, cells)).join('\n')}`
        : `None of them is assigned in a cell above [${n}].`
    );
    const asked = [...new Set([...lineNames, ...origins.map((o) => o.name)])].slice(0, MAX_FACTS);
    const facts = await inputs.kernelFacts(asked).catch(() => []);
    lines.push(
      '',
      facts.length
        ? `The kernel holds now (read silently; the notebook is untouched):\n${facts.map(indent).join('\n')}`
        : 'The kernel holds none of these names now (it may have restarted): run the cells above first to inspect them.'
    );
  }
  return lines.join('\n');
}

function originLine(o: NameOrigin, cells: readonly NotebookCellData[]): string {
  const at = (is: number[]) => is.map((i) => `[${i + 1}]${cells[i]?.id ? ` (id ${cells[i]!.id})` : ''}`).join(', ');
  const parts = [
    o.boundIn.length ? `assigned in ${at(o.boundIn)}` : '',
    o.changedIn.length ? `changed in ${at(o.changedIn)}` : ''
  ].filter(Boolean);
  return `- ${o.name}: ${parts.join('; ')}${o.builtFrom.length ? `; built from ${o.builtFrom.slice(0, 8).join(', ')}` : ''}`;
}

/**
 * A long traceback (pandas' chained KeyError runs to many frames) keeps the last exception
 * from the cell's own frame on — the line of the cell and the error — and, past the budget,
 * that frame's start and the traceback's end; the markers say what is left out (HARN-2).
 */
function tail(text: string, rest: string): string {
  if (text.length <= TRACEBACK_CHARS) return text;
  const frames = [...text.matchAll(/^.*(?:Cell In\s*\[\d*\]|Input In\s*\[\d*\]).*$/gm)];
  const from = frames.length ? frames[frames.length - 1]!.index : 0;
  const kept = text.slice(from);
  const skipped =
    from > 0
      ? `[cut: the first ${from} of ${text.length} characters not shown (earlier exceptions and frames); ${rest}]\n`
      : '';
  if (kept.length <= TRACEBACK_CHARS) return `${skipped}${kept}`;
  const head = Math.floor(TRACEBACK_CHARS * 0.4);
  const end = TRACEBACK_CHARS - head;
  return `${skipped}${kept.slice(0, head)}\n[cut: ${kept.length - head - end} characters of library frames not shown; ${rest}]\n${kept.slice(-end)}`;
}

function indent(s: string): string {
  return s.replace(/^/gm, '    ');
}

function fixInstructions(path: string, n: number): string {
  return [
    `Fix the error of cell [${n}] in ${path}. Find the root cause before editing anything: the line that raised is often only where a wrong value made in an earlier cell shows up.`,
    `1. Walk back through the cells that make the names involved (listed below) and inspect their values in the kernel with eval (print shapes, columns, dtypes, a few rows; do not re-run the user's cells just to look).`,
    `2. When inspection is not enough, use the debug tool on the notebook's kernel: a breakpoint in the suspect cell, then run it.`,
    `3. Propose the fix with notebook_edit on the cell where the cause lies — an earlier cell when the cause is there, not a patch in cell [${n}] around it — and run it with notebook_run from that cell through [${n}].`,
    `4. Say in two sentences which cell held the cause and why.`
  ].join('\n');
}

function explainInstructions(path: string, n: number): string {
  return [
    `Explain the error of cell [${n}] in ${path}. Do not edit or run anything (this turn cannot).`,
    `Say what went wrong and where the cause lies: walk back through the cells that make the names involved (listed below) and the kernel's facts about them; the line that raised is often only where a wrong value from an earlier cell shows up.`,
    `End with the change that would fix it and the cell it belongs in.`
  ].join('\n');
}
