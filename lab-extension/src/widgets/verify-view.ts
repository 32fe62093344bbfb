/**
 * The `verify` card (`notebook_verify`): one row per notebook — ✓ ok, ✗ error, ~ changed,
 * ! could not run — expanding to its code cells, each a link that opens the notebook at
 * that cell; "Accept new outputs" on a notebook whose run kept its outputs writes them into
 * the notebook (`verify/accept`), the only way they get there. Text only (textContent).
 */
import type { VerifyDisplay } from '@cellmate/protocol';
import type { IToolDisplayRenderer, IToolDisplayView } from './tool-display-types';

const MARK: Record<string, string> = {
  ok: '✓',
  error: '✗',
  changed: '~',
  'could-not-run': '!',
  aborted: '■',
  'not-run': '–'
};

/** Renders `verify` displays. */
export const verifyDisplayRenderer: IToolDisplayRenderer<'verify'> = {
  kind: 'verify',
  render(display: VerifyDisplay, { trans, openLocation, acceptVerifyOutputs }): IToolDisplayView {
    const node = document.createElement('div');
    node.className = 'jp-cellmate-verify';
    node.dataset.displayKind = 'verify';
    const notebooks = Array.isArray(display.notebooks) ? display.notebooks : [];
    for (const nb of notebooks) {
      const status = String(nb.status);
      const details = document.createElement('details');
      details.className = 'jp-cellmate-verify-notebook';
      details.dataset.path = String(nb.path);
      details.dataset.status = status;
      // A failing notebook opens by itself: its failing cell is what the person looks for.
      details.open = status === 'error';
      const summary = document.createElement('summary');
      const mark = document.createElement('span');
      mark.className = `jp-cellmate-verify-mark jp-mod-${status}`;
      mark.textContent = MARK[status] ?? '?';
      mark.title = status;
      const name = document.createElement('span');
      name.className = 'jp-cellmate-verify-path';
      name.textContent = String(nb.path);
      const note = document.createElement('span');
      note.className = 'jp-cellmate-verify-note';
      note.textContent = `${status}${typeof nb.seconds === 'number' ? ` · ${nb.seconds} s` : ''}${nb.reason ? ` — ${String(nb.reason)}` : ''}`;
      summary.append(mark, name, note);
      details.appendChild(summary);
      const list = document.createElement('ul');
      list.className = 'jp-cellmate-verify-cells';
      for (const cell of Array.isArray(nb.cells) ? nb.cells : []) {
        const li = document.createElement('li');
        li.className = 'jp-cellmate-verify-cell';
        li.dataset.status = String(cell.status);
        li.dataset.cellIndex = String(cell.index);
        const cmark = document.createElement('span');
        cmark.className = `jp-cellmate-verify-mark jp-mod-${String(cell.status)}`;
        cmark.textContent = MARK[String(cell.status)] ?? '?';
        cmark.title = String(cell.status);
        const label = trans.__('cell %1', Number(cell.index) + 1);
        let target: HTMLElement;
        if (openLocation) {
          const link = document.createElement('a');
          link.href = '#';
          link.className = 'jp-cellmate-verify-link';
          link.title = trans.__('Open the notebook at this cell');
          link.addEventListener('click', (event) => {
            event.preventDefault();
            openLocation({
              path: String(nb.path),
              line: 1,
              cell: { index: Number(cell.index), id: String(cell.id) },
              text: ''
            });
          });
          target = link;
        } else {
          target = document.createElement('span');
        }
        target.textContent = label;
        li.append(cmark, target);
        const detail = document.createElement('code');
        detail.className = 'jp-cellmate-verify-detail';
        detail.textContent = cell.detail ? String(cell.detail) : String(cell.status);
        li.appendChild(detail);
        li.title = String(cell.status);
        list.appendChild(li);
      }
      details.appendChild(list);
      if (acceptVerifyOutputs && nb.outputsPath && (status === 'changed' || status === 'ok')) {
        const state = document.createElement('div');
        state.className = 'jp-cellmate-verify-state';
        state.setAttribute('role', 'status');
        const accept = document.createElement('button');
        accept.type = 'button';
        accept.className = 'jp-cellmate-verify-accept jp-mod-styled jp-mod-accept';
        accept.textContent = trans.__('Accept new outputs');
        accept.title = trans.__("Write this run's outputs into %1", String(nb.path));
        accept.addEventListener('click', async () => {
          accept.disabled = true;
          state.textContent = trans.__('Writing…');
          const outcome = await acceptVerifyOutputs(String(display.runId), String(nb.path));
          state.textContent = outcome.message;
          if (outcome.state === 'error') {
            accept.disabled = false;
          } else {
            accept.remove();
          }
        });
        details.append(accept, state);
      }
      node.appendChild(details);
    }
    const failing = notebooks.filter((n) => n.status === 'error' || n.status === 'could-not-run').length;
    const changed = notebooks.filter((n) => n.status === 'changed').length;
    return {
      node,
      summary: failing
        ? trans._n('%1 notebook failing', '%1 notebooks failing', failing)
        : changed
          ? trans._n('%1 notebook changed', '%1 notebooks changed', changed)
          : trans._n('%1 notebook ok', '%1 notebooks ok', notebooks.length),
      openByDefault: true,
      dispose: () => node.remove()
    };
  }
};
