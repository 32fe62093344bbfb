/**
 * MCP servers view: each configured server (`~/.cellmate/mcp.json`,
 * `<workspace>/.cellmate/mcp.json`) with its transport, state, restarts, tool count and the
 * tools it could not register, from `mcp/servers`, and above it what is wrong with the config
 * files (`mcp/config-problems`). Opened by the palette command **Show Cellmate MCP Servers**
 * (`cellmate:show-mcp-servers`) as a dialog.
 *
 * DOM hooks: `table.jp-cellmate-mcp-servers`, one `tr[data-server][data-state]` per server;
 * `ul.jp-cellmate-mcp-problems`, one `li` per config problem.
 */
import type { McpServerStatus } from '@cellmate/protocol';
import { Dialog, showDialog } from '@jupyterlab/apputils';
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';

/** A table widget for one `mcp/servers` answer and the config problems (pure DOM, text only). */
export function createMcpServersTable(
  servers: readonly McpServerStatus[],
  trans: TranslationBundle,
  configProblems: readonly string[] = []
): Widget {
  const widget = new Widget();
  widget.addClass('jp-cellmate-mcp-view');
  // A file that does not parse defines no servers: say so before any "none configured".
  if (configProblems.length > 0) {
    const list = document.createElement('ul');
    list.className = 'jp-cellmate-mcp-problems';
    for (const problem of configProblems) {
      const li = document.createElement('li');
      li.textContent = problem;
      list.appendChild(li);
    }
    widget.node.appendChild(list);
  }
  if (servers.length === 0) {
    const empty = document.createElement('p');
    empty.textContent =
      configProblems.length > 0
        ? trans.__('No MCP servers are available until the config above is fixed.')
        : trans.__(
            'No MCP servers are configured. Add them to ~/.cellmate/mcp.json or .cellmate/mcp.json ({"mcpServers": {…}}).'
          );
    widget.node.appendChild(empty);
    return widget;
  }
  const table = document.createElement('table');
  table.className = 'jp-cellmate-mcp-servers jp-cellmate-metrics';
  const head = table.createTHead().insertRow();
  for (const label of [
    trans.__('Server'),
    trans.__('Transport'),
    trans.__('State'),
    trans.__('Restarts'),
    trans.__('Tools'),
    trans.__('Problems')
  ]) {
    const th = document.createElement('th');
    th.textContent = label;
    head.appendChild(th);
  }
  const body = table.createTBody();
  for (const s of servers) {
    const tr = body.insertRow();
    tr.dataset.server = s.name;
    tr.dataset.state = s.state;
    tr.title = s.file;
    const state = s.error ? `${s.state}: ${s.error}` : s.state;
    for (const text of [s.name, s.transport, state, String(s.restarts), String(s.tools), s.problems.join('\n')]) {
      tr.insertCell().textContent = text;
    }
  }
  const note = document.createElement('p');
  note.className = 'jp-cellmate-metrics-note';
  note.textContent = trans.__('Servers start when the agent first searches for or calls one of their tools.');
  widget.node.append(table, note);
  return widget;
}

/** Fetches the list and opens a dialog with it (resolves once it is shown). */
export async function showMcpServersDialog(
  fetchServers: () => Promise<McpServerStatus[]>,
  trans: TranslationBundle,
  fetchConfigProblems: () => Promise<string[]> = async () => []
): Promise<void> {
  const [servers, problems] = await Promise.all([fetchServers(), fetchConfigProblems()]);
  void showDialog({
    title: trans.__('Cellmate MCP servers'),
    body: createMcpServersTable(servers, trans, problems),
    buttons: [Dialog.okButton({ label: trans.__('Close') })]
  });
}
