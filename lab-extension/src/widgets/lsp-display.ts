/**
 * The `lsp` card: locations as links — `file:line` opens the file at that line,
 * `notebook.ipynb cell N line M` opens the notebook and scrolls to the cell — and the new
 * diagnostics an edit card lists, each with its severity icon. Text only (textContent): no
 * server string is parsed as HTML.
 */
import type { LspDisplay, LspDisplayLocation } from '@cellmate/protocol';
import { errorIcon, infoIcon, type LabIcon } from '@jupyterlab/ui-components';
import type { IToolDisplayRenderer, IToolDisplayView } from './tool-display-types';

/** JupyterLab's own icons (a font may lack emoji); the severity is also the element's title. */
const SEVERITY_ICON: Record<NonNullable<LspDisplayLocation['severity']>, LabIcon> = {
  error: errorIcon,
  warning: errorIcon,
  info: infoIcon,
  hint: infoIcon
};

/** The link text of a location. */
export function locationLabel(l: LspDisplayLocation): string {
  return l.cell ? `${l.path} cell ${l.cell.index + 1} line ${l.line}` : `${l.path}:${l.line}`;
}

/** Renders `lsp` displays; links call `context.openLocation` (absent: plain text). */
export const lspDisplayRenderer: IToolDisplayRenderer<'lsp'> = {
  kind: 'lsp',
  render(display: LspDisplay, { trans, openLocation }): IToolDisplayView {
    const node = document.createElement('div');
    node.className = 'jp-cellmate-lsp';
    node.dataset.displayKind = 'lsp';
    node.dataset.action = display.action;
    const locations = Array.isArray(display.locations) ? display.locations : [];
    if (display.action === 'new-diagnostics') {
      const heading = document.createElement('div');
      heading.className = 'jp-cellmate-tool-heading';
      heading.textContent = trans.__('New diagnostics');
      node.appendChild(heading);
    }
    const list = document.createElement('ul');
    list.className = 'jp-cellmate-lsp-locations';
    for (const l of locations) {
      const li = document.createElement('li');
      li.className = 'jp-cellmate-lsp-location';
      if (l.severity) {
        li.dataset.severity = l.severity;
        const mark = document.createElement('span');
        mark.className = `jp-cellmate-lsp-severity jp-cellmate-lsp-severity-${l.severity}`;
        (SEVERITY_ICON[l.severity] ?? infoIcon).element({ container: mark, height: '14px', width: '14px' });
        mark.title = l.severity;
        li.appendChild(mark);
      }
      const label = locationLabel(l);
      if (openLocation) {
        const link = document.createElement('a');
        link.className = 'jp-cellmate-lsp-link';
        link.href = '#';
        link.textContent = label;
        link.title = l.cell ? trans.__('Open the notebook at this cell') : trans.__('Open the file at this line');
        link.dataset.path = l.path;
        link.dataset.line = String(l.line);
        if (l.cell) {
          link.dataset.cellIndex = String(l.cell.index);
          link.dataset.cellId = l.cell.id;
        }
        link.addEventListener('click', (event) => {
          event.preventDefault();
          openLocation(l);
        });
        li.appendChild(link);
      } else {
        const span = document.createElement('span');
        span.textContent = label;
        li.appendChild(span);
      }
      const rest = [l.note, l.text].filter(Boolean).join(' — ');
      if (rest) {
        const text = document.createElement('code');
        text.className = 'jp-cellmate-lsp-text';
        text.textContent = rest;
        li.appendChild(text);
      }
      list.appendChild(li);
    }
    node.appendChild(list);
    if (typeof display.total === 'number' && display.total > locations.length) {
      const more = document.createElement('div');
      more.className = 'jp-cellmate-lsp-more';
      more.textContent = trans.__('%1 more not shown', display.total - locations.length);
      node.appendChild(more);
    }
    const n = locations.length;
    return {
      node,
      summary:
        display.action === 'new-diagnostics'
          ? trans._n('%1 new diagnostic', '%1 new diagnostics', n)
          : trans._n('%1 location', '%1 locations', n),
      openByDefault:
        display.action === 'new-diagnostics' || display.action === 'references' || display.action === 'definition',
      dispose: () => node.remove()
    };
  }
};
