/**
 * Tool metrics view (SPEC HARN-7): per tool, calls, success rate, mean duration and
 * denials, what the Auto reviewer cleared, asked about or timed out on, and calls that did nothing because the policy withheld their files, from the companion server's audit log (`audit/metrics`). Opened by the palette
 * command **Cellmate: Show tool metrics** (`cellmate:show-metrics`) as a dialog.
 *
 * DOM hooks: `table.jp-cellmate-metrics`, one `tr[data-tool]` per tool.
 */
import type { ToolMetrics } from '@cellmate/protocol';
import { Dialog, showDialog } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';
import { formatDuration } from './tool-card';

/** A table widget for one metrics answer (pure DOM, text only). */
export function createMetricsTable(metrics: ToolMetrics, trans: TranslationBundle): Widget {
  // The person's approval wait, apart from run time: "2 calls, mean 8.1 s".
  const waited = (row: (typeof metrics.rows)[number]): string =>
    row.waitedCalls
      ? trans._n('%1 call, mean %2', '%1 calls, mean %2', row.waitedCalls, formatDuration(row.meanWaitMs ?? 0))
      : '—';
  const widget = new Widget();
  widget.addClass('jp-cellmate-metrics-view');
  const table = document.createElement('table');
  table.className = 'jp-cellmate-metrics';
  const head = table.createTHead().insertRow();
  for (const label of [
    trans.__('Tool'),
    trans.__('Calls'),
    trans.__('Success'),
    trans.__('Mean run time'),
    trans.__('Waited for you'),
    trans.__('Errors'),
    trans.__('Denied'),
    trans.__('Withheld'),
    trans.__('Auto-allowed'),
    trans.__('Auto asked'),
    trans.__('Auto timed out')
  ]) {
    const th = document.createElement('th');
    th.textContent = label;
    head.appendChild(th);
  }
  const body = table.createTBody();
  for (const row of metrics.rows) {
    const tr = body.insertRow();
    tr.dataset.tool = row.tool;
    const cells = [
      row.tool,
      String(row.calls),
      `${Math.round(row.successRate * 100)}%`,
      `${row.meanDurationMs} ms`,
      waited(row),
      String(row.errors),
      String(row.denied),
      String(row.withheld),
      String(row.autoAllowed ?? 0),
      String(row.autoAsked ?? 0),
      String(row.autoTimedOut ?? 0)
    ];
    for (const text of cells) {
      tr.insertCell().textContent = text;
    }
  }
  if (metrics.rows.length === 0) {
    const empty = document.createElement('p');
    empty.textContent = trans.__('No tool calls recorded yet.');
    widget.node.appendChild(empty);
  }
  const note = document.createElement('p');
  note.className = 'jp-cellmate-metrics-note';
  note.textContent = trans.__('All chats in this workspace, from .cellmate/audit/*.jsonl.');
  widget.node.append(table, note);
  return widget;
}

/** Fetches the metrics and opens a dialog with them (resolves once it is shown). */
export async function showMetricsDialog(
  fetchMetrics: () => Promise<ToolMetrics>,
  trans: TranslationBundle
): Promise<void> {
  const metrics = await fetchMetrics();
  void showDialog({
    title: trans.__('Cellmate tool metrics'),
    body: createMetricsTable(metrics, trans),
    buttons: [Dialog.okButton({ label: trans.__('Close') })]
  });
}
