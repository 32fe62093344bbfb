/**
 * The `diff` display (SPEC EDIT-3): a staged edit as a unified diff per file — per cell for
 * a notebook — each file collapsible, with Accept / Discard buttons that resolve the edit
 * on the server (`edit/resolve`), so the person can resolve instead of the model. Diff text
 * goes in as text only (never HTML).
 */
import type { DiffDisplay } from '@cellmate/protocol';
import type { TranslationBundle } from '@jupyterlab/translation';

/** What the diff view needs: translations, and the server call behind its buttons. */
export interface IDiffViewContext {
  readonly trans: TranslationBundle;
  /** Absent: the diff is read-only (no buttons). */
  readonly resolveEdit?: (editId: string, action: 'accept' | 'discard') => Promise<{ state: string; message: string }>;
}

/** A staged edit's diff with its buttons (the `diff` renderer of `tool-displays.ts`). */
export function renderDiff(display: DiffDisplay, { trans, resolveEdit }: IDiffViewContext): HTMLElement {
  const node = document.createElement('div');
  node.className = 'jp-cellmate-diff';
  node.dataset.displayKind = 'diff';
  node.dataset.editId = String(display.editId);
  const head = document.createElement('div');
  head.className = 'jp-cellmate-diff-summary';
  head.textContent = String(display.summary ?? '');
  node.appendChild(head);
  for (const file of Array.isArray(display.files) ? display.files : []) {
    const details = document.createElement('details');
    details.className = 'jp-cellmate-diff-file';
    details.open = true;
    details.dataset.path = String(file.path);
    const summary = document.createElement('summary');
    summary.textContent = String(file.path);
    details.appendChild(summary);
    if (Array.isArray(file.cells)) {
      for (const cell of file.cells) {
        const heading = document.createElement('div');
        heading.className = 'jp-cellmate-diff-cell';
        heading.textContent = cell.id
          ? trans.__('Cell %1 (id %2)', cell.index + 1, cell.id)
          : trans.__('Cell %1', cell.index + 1);
        if (cell.note) {
          const note = document.createElement('span');
          note.className = 'jp-cellmate-diff-note';
          note.textContent = ` — ${String(cell.note)}`;
          heading.appendChild(note);
        }
        details.append(heading);
        if (cell.diff) {
          details.appendChild(diffBlock(cell.diff));
        }
      }
    } else {
      details.appendChild(diffBlock(file.diff ?? ''));
    }
    node.appendChild(details);
  }
  const state = document.createElement('div');
  state.className = 'jp-cellmate-diff-state';
  state.setAttribute('role', 'status');
  if (resolveEdit) {
    const actions = document.createElement('div');
    actions.className = 'jp-cellmate-diff-actions';
    const accept = button(
      trans.__('Accept'),
      'jp-mod-accept',
      trans.__('Write every change of this edit (all or nothing)')
    );
    const discard = button(trans.__('Discard'), 'jp-mod-reject', trans.__('Drop this edit; nothing is written'));
    const act = async (action: 'accept' | 'discard'): Promise<void> => {
      accept.disabled = discard.disabled = true;
      state.textContent = action === 'accept' ? trans.__('Applying…') : trans.__('Discarding…');
      const outcome = await resolveEdit(String(display.editId), action);
      state.textContent = outcome.message;
      node.dataset.state = outcome.state;
      // A write that failed (and was rolled back) leaves the edit staged: it can be tried again.
      if (outcome.state === 'error' && /still staged/.test(outcome.message)) {
        accept.disabled = discard.disabled = false;
      } else {
        // Decided: the buttons go; the state line says what happened.
        actions.remove();
      }
    };
    accept.addEventListener('click', () => void act('accept'));
    discard.addEventListener('click', () => void act('discard'));
    actions.append(accept, discard);
    node.appendChild(actions);
  }
  node.appendChild(state);
  return node;
}

function diffBlock(diff: string): HTMLElement {
  const pre = document.createElement('pre');
  pre.className = 'jp-cellmate-diff-hunks';
  for (const line of String(diff).split('\n')) {
    const row = document.createElement('span');
    row.className = line.startsWith('@@')
      ? 'jp-cellmate-diff-hunk'
      : line.startsWith('+')
        ? 'jp-cellmate-diff-add'
        : line.startsWith('-')
          ? 'jp-cellmate-diff-del'
          : 'jp-cellmate-diff-ctx';
    row.textContent = `${line}\n`;
    pre.appendChild(row);
  }
  return pre;
}

function button(label: string, mod: string, title: string): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  // JupyterLab's own styled buttons: jp-mod-accept is the primary one, jp-mod-reject the secondary.
  b.className = `jp-cellmate-diff-button jp-mod-styled ${mod}`;
  b.textContent = label;
  b.title = title;
  return b;
}
