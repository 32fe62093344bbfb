import type { ToolMetricsRow } from '@cellmate/protocol';
import type { AuditEntry } from '../ports/gate-ports.js';

/**
 * Per-tool calls, success rate and mean run time (HARN-7), with the person's approval wait
 * apart (calls that waited, their mean wait), and what the Auto reviewer did with them
 * (SIDE-1: cleared, handed to the person, timed out). Pure; rows sorted by tool.
 */
export function computeMetrics(
  entries: Iterable<Pick<AuditEntry, 'tool' | 'status' | 'durationMs' | 'waitMs' | 'sidecar'>>
): ToolMetricsRow[] {
  const acc = new Map<
    string,
    {
      calls: number;
      ok: number;
      errors: number;
      denied: number;
      withheld: number;
      total: number;
      waited: number;
      wait: number;
      autoAllowed: number;
      autoAsked: number;
      autoTimedOut: number;
    }
  >();
  for (const e of entries) {
    const row = acc.get(e.tool) ?? {
      calls: 0,
      ok: 0,
      errors: 0,
      denied: 0,
      withheld: 0,
      total: 0,
      waited: 0,
      wait: 0,
      autoAllowed: 0,
      autoAsked: 0,
      autoTimedOut: 0
    };
    const review = e.sidecar?.outcome;
    if (review === 'allow') row.autoAllowed += 1;
    else if (review === 'timeout') row.autoTimedOut += 1;
    else if (review !== undefined) row.autoAsked += 1;
    row.calls += 1;
    row.total += e.durationMs;
    if (typeof e.waitMs === 'number' && e.waitMs > 0) {
      row.waited += 1;
      row.wait += e.waitMs;
    }
    if (e.status === 'ok') row.ok += 1;
    else if (e.status === 'denied') row.denied += 1;
    else if (e.status === 'withheld') row.withheld += 1;
    else row.errors += 1;
    acc.set(e.tool, row);
  }
  return [...acc.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([tool, r]) => ({
      tool,
      calls: r.calls,
      ok: r.ok,
      errors: r.errors,
      denied: r.denied,
      withheld: r.withheld,
      successRate: r.calls === 0 ? 0 : Math.round((r.ok / r.calls) * 1000) / 1000,
      meanDurationMs: r.calls === 0 ? 0 : Math.round(r.total / r.calls),
      waitedCalls: r.waited,
      meanWaitMs: r.waited === 0 ? 0 : Math.round(r.wait / r.waited),
      autoAllowed: r.autoAllowed,
      autoAsked: r.autoAsked,
      autoTimedOut: r.autoTimedOut
    }));
}
