/**
 * The live kernel's hidden state against the notebook (Python): which cells changed since
 * they last ran, which ran out of order, which names the kernel holds that no current cell
 * defines (a deleted or edited cell left them), and the cells that use such state. The
 * kernel itself parses each cell (`ast`, after IPython's own magic transform) and reads
 * its raw input history, silently (`runSilent`: no history, no count, no globals); the
 * comparison is pure ({@link analyseKernelState}).
 */
import type { KernelClient } from '@cellmate/kernel-bridge';
import { runSilent } from './kernel-inspect.js';

/** A code cell as the notebook holds it now. */
export interface StateCell {
  index: number;
  id: string;
  source: string;
  executionCount: number | null;
}

/** What the kernel reports. */
export interface KernelFacts {
  /** Raw source by execution count (IPython's input history). */
  history: Record<string, string>;
  /** The kernel's execution count now. */
  count: number;
  /** User names in the namespace (hidden, `_` and IPython's own left out). */
  names: string[];
  /** Per cell (same order as asked): names it assigns / uses at any depth; `error` when it does not parse. */
  cells: Array<{ assigned: string[]; used: string[]; error?: string }>;
}

const PY_STATE = String.raw`
import ast as _a, builtins as _b, json as _j
def _names(src):
    try:
        tree = _a.parse(_ip.transform_cell(src))
    except Exception as e:
        return {"assigned": [], "used": [], "error": type(e).__name__}
    assigned, used = set(), set()
    for n in _a.walk(tree):
        if isinstance(n, _a.Name):
            (assigned if isinstance(n.ctx, (_a.Store, _a.Del)) else used).add(n.id)
        elif isinstance(n, (_a.FunctionDef, _a.AsyncFunctionDef, _a.ClassDef)):
            assigned.add(n.name)
        elif isinstance(n, (_a.Import, _a.ImportFrom)):
            for al in n.names:
                if al.name != "*":
                    assigned.add(al.asname or al.name.split(".")[0])
        elif isinstance(n, _a.arg):
            assigned.add(n.arg)
    return {"assigned": sorted(assigned), "used": sorted(u for u in used if not hasattr(_b, u))}
def _facts(sources):
    hm = _ip.history_manager
    raw = hm.input_hist_raw
    hidden = _ip.user_ns_hidden
    names = sorted(k for k in _ip.user_ns if not k.startswith("_") and k not in hidden and k not in ("In", "Out", "exit", "quit", "get_ipython"))
    return {"history": {str(i): s for i, s in enumerate(raw) if i > 0}, "count": _ip.execution_count, "names": names, "cells": [_names(s) for s in sources]}
`;

/** Asks the kernel for its facts about these cells; undefined when the kernel could not answer. */
export async function kernelFacts(
  client: KernelClient,
  cells: readonly StateCell[],
  signal?: AbortSignal
): Promise<KernelFacts | undefined> {
  const code = `exec(${JSON.stringify(PY_STATE)} + ${JSON.stringify(`\nprint("\\x1eCELLMATE" + _j.dumps(_facts(${JSON.stringify(cells.map((c) => c.source))})))`)}, {"_ip": get_ipython()})`;
  return runSilent<KernelFacts>(client, code, signal);
}

/** One finding about a cell. */
export interface StateFinding {
  kind: 'edited-since-run' | 'out-of-order' | 'not-run-in-kernel' | 'uses-orphan-state' | 'depends-on-stale';
  cell: { index: number; id: string };
  detail: string;
}

/** The comparison (see the module comment). */
export interface KernelStateReport {
  findings: StateFinding[];
  /** Names the kernel holds that no current cell assigns. */
  orphanNames: string[];
  /** Cells whose result may not match the kernel (edited, out of order, or fed by either). */
  staleCells: number[];
}

const clip = (s: string): string => (s.length > 60 ? `${s.slice(0, 59)}…` : s).replace(/\s+/g, ' ');

/** Compares the notebook's cells with the kernel's facts (pure). */
export function analyseKernelState(cells: readonly StateCell[], facts: KernelFacts): KernelStateReport {
  const findings: StateFinding[] = [];
  const stale = new Set<number>();
  const ref = (c: StateCell): { index: number; id: string } => ({ index: c.index, id: c.id });
  const norm = (s: string): string => s.replace(/\s+$/gm, '').trim();
  for (const c of cells) {
    if (c.executionCount === null || c.executionCount === undefined) continue;
    const ran = facts.history[String(c.executionCount)];
    if (ran === undefined) {
      findings.push({
        kind: 'not-run-in-kernel',
        cell: ref(c),
        detail: `shows execution count ${c.executionCount}, which this kernel never ran (it restarted since): its output is not this kernel's state`
      });
      stale.add(c.index);
    } else if (norm(ran) !== norm(c.source)) {
      findings.push({
        kind: 'edited-since-run',
        cell: ref(c),
        detail: `edited after it ran as [${c.executionCount}]: the kernel holds the state of the old source ("${clip(norm(ran).split('\n')[0] ?? '')}")`
      });
      stale.add(c.index);
    }
  }
  // Out of order: a cell that ran before a cell above it ran (counts should grow top to bottom).
  const ranCells = cells.filter(
    (c) => typeof c.executionCount === 'number' && facts.history[String(c.executionCount)] !== undefined
  );
  for (let i = 0; i < ranCells.length; i++) {
    const c = ranCells[i]!;
    const later = ranCells.slice(0, i).filter((above) => above.executionCount! > c.executionCount!);
    if (later.length) {
      const a = later[0]!;
      findings.push({
        kind: 'out-of-order',
        cell: ref(c),
        detail: `ran as [${c.executionCount}], before cell ${a.index + 1} above it ([${a.executionCount}]): top-to-bottom order would run them the other way`
      });
      stale.add(c.index);
    }
  }
  const byIndex = new Map(cells.map((c, i) => [c.index, facts.cells[i] ?? { assigned: [], used: [] }]));
  const definedNow = new Set(cells.flatMap((c) => byIndex.get(c.index)!.assigned));
  const orphanNames = facts.names.filter((n) => !definedNow.has(n));
  const orphans = new Set(orphanNames);
  for (const c of cells) {
    const used = byIndex.get(c.index)!.used;
    const fromNowhere = used.filter((n) => orphans.has(n));
    if (fromNowhere.length) {
      findings.push({
        kind: 'uses-orphan-state',
        cell: ref(c),
        detail: `uses ${fromNowhere.join(', ')}, which the kernel holds but no current cell defines (a deleted or edited cell left ${fromNowhere.length === 1 ? 'it' : 'them'}): it fails after a restart`
      });
      stale.add(c.index);
    }
  }
  // Cells fed by a stale one: they use a name a stale cell assigns (and no fresh cell above them does).
  for (const c of cells) {
    if (stale.has(c.index)) continue;
    const used = new Set(byIndex.get(c.index)!.used);
    const sources = cells.filter(
      (s) => s.index !== c.index && stale.has(s.index) && byIndex.get(s.index)!.assigned.some((n) => used.has(n))
    );
    if (sources.length) {
      const names = [...new Set(sources.flatMap((s) => byIndex.get(s.index)!.assigned.filter((n) => used.has(n))))];
      findings.push({
        kind: 'depends-on-stale',
        cell: ref(c),
        detail: `uses ${names.join(', ')} from stale cell${sources.length === 1 ? '' : 's'} ${sources.map((s) => s.index + 1).join(', ')}`
      });
    }
  }
  findings.sort((a, b) => a.cell.index - b.cell.index);
  return { findings, orphanNames, staleCells: [...stale].sort((a, b) => a - b) };
}

/** The model's text of a report. */
export function formatKernelState(
  notebook: string,
  cells: readonly StateCell[],
  facts: KernelFacts,
  report: KernelStateReport
): string {
  const ran = cells.filter((c) => c.executionCount !== null).length;
  const lines = [
    `${notebook}: ${cells.length} code cells, ${ran} with an execution count; the kernel is at [${facts.count}] with ${facts.names.length} user names.`
  ];
  if (report.findings.length === 0)
    lines.push(
      'The kernel matches the notebook: no cell edited since it ran, none out of order, no name left by a deleted cell.'
    );
  for (const f of report.findings)
    lines.push(
      `- cell ${f.cell.index + 1}${f.cell.id.startsWith('#') ? '' : ` [id=${f.cell.id}]`} ${f.kind}: ${f.detail}`
    );
  if (report.orphanNames.length)
    lines.push(
      `Names in the kernel no current cell defines: ${report.orphanNames.slice(0, 40).join(', ')}${report.orphanNames.length > 40 ? ', …' : ''}.`
    );
  if (report.findings.length)
    lines.push(
      'Before trusting a variable from these cells, re-run them top to bottom (or verify the notebook in a fresh kernel with notebook_verify).'
    );
  return lines.join('\n');
}
