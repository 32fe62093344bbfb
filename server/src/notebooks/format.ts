/**
 * Notebook cells as the model reads them: numbered from 1, with ids, sources, and outputs
 * sized for a context window (each output's text kept to {@link MAX_OUTPUT_CHARS} by the
 * shaping module's explicit `cut`; images and HTML named, never inlined). Pure.
 */
import type { EvalOutcome } from '@cellmate/kernel-bridge';
import type { NotebookCellData } from '@cellmate/protocol';
import { cut as cutText } from '../workspace/output-shaping.js';

export const MAX_OUTPUT_CHARS = 2_000;

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;

const text = (v: unknown): string => (typeof v === 'string' ? v : Array.isArray(v) ? v.join('') : JSON.stringify(v));

/** How a cut output's text ends by default: where the whole output can be seen. */
export const OUTPUT_REST = 'call notebook_read on this cell (offset = its number, limit 1) for the whole output';

/** How a notebook output is kept short: its budget and what its cut marker says. */
export interface OutputCut {
  /** Characters of one output's text shown. Default {@link MAX_OUTPUT_CHARS}; `Infinity`: no cut. */
  maxChars?: number;
  /** The marker's pointer to the rest, for the cell numbered `n` (from 1). */
  rest?: (n: number) => string;
}

/** One nbformat output as a few lines of text; `n` is its cell's number (for the cut marker). */
export function describeOutput(output: unknown, n = 0, how: OutputCut = {}): string {
  const max = how.maxChars ?? MAX_OUTPUT_CHARS;
  const cut = (s: string): string => cutText(s, max, how.rest?.(n) ?? OUTPUT_REST);
  const o = (output ?? {}) as Record<string, unknown>;
  switch (o.output_type) {
    case 'stream':
      return cut(text(o.text).replace(ANSI, '').replace(/\n$/, ''));
    case 'error':
      return cut(`${String(o.ename)}: ${String(o.evalue)}`.replace(ANSI, ''));
    case 'execute_result':
    case 'display_data': {
      const data = (o.data ?? {}) as Record<string, unknown>;
      const image = Object.keys(data).find((m) => m.startsWith('image/'));
      if (image) return `[${image} output]`;
      if (data['text/plain'] !== undefined) return cut(text(data['text/plain']));
      if (data['text/html'] !== undefined) return `[HTML output, ${text(data['text/html']).length} characters]`;
      return `[${Object.keys(data).join(', ') || 'empty'} output]`;
    }
    default:
      return '[unknown output]';
  }
}

/** Cells `from`…`to` (array indices, `to` exclusive) of a notebook for the model, labelled `[1]`, `[2]` … */
export function describeCells(
  cells: readonly NotebookCellData[],
  from = 0,
  to = cells.length,
  how: OutputCut = {}
): string {
  return cellEntries(cells, from, to, how).join('\n');
}

/** One text per cell (for paging), as {@link describeCells} shows them. */
export function cellEntries(
  cells: readonly NotebookCellData[],
  from = 0,
  to = cells.length,
  how: OutputCut = {}
): string[] {
  const entries: string[] = [];
  for (let i = from; i < Math.min(to, cells.length); i++) {
    const lines: string[] = [];
    const c = cells[i]!;
    const mark =
      (c.metadata as { cellmate?: { created_by?: string } }).cellmate?.created_by === 'agent'
        ? ', made by the agent'
        : '';
    const exec = c.cell_type === 'code' ? `, execution_count ${c.execution_count ?? 'none'}` : '';
    lines.push(`[${i + 1}] id=${c.id} ${c.cell_type}${exec}${mark}`);
    lines.push(c.source.length ? c.source.replace(/^/gm, '    ') : '    (empty)');
    const outs = c.outputs ?? [];
    if (outs.length) {
      lines.push('  outputs:');
      for (const o of outs) lines.push(describeOutput(o, i + 1, how).replace(/^/gm, '    '));
    }
    entries.push(lines.join('\n'));
  }
  return entries;
}

/** An eval outcome's outputs as nbformat outputs (for writing a closed notebook's cell). */
export function toNbformatOutputs(outcome: EvalOutcome): unknown[] {
  return outcome.outputs.map((o) => {
    if (o.type === 'stream') return { output_type: 'stream', name: o.name, text: o.text };
    if (o.type === 'error') return { output_type: 'error', ename: o.ename, evalue: o.evalue, traceback: o.traceback };
    return o.result
      ? { output_type: 'execute_result', data: o.data, metadata: {}, execution_count: outcome.executionCount ?? null }
      : { output_type: 'display_data', data: o.data, metadata: {} };
  });
}
