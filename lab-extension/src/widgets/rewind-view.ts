/**
 * "Undo this turn's changes" / "Rewind to here" under a user message:
 * the preview of what will be restored — the diff cards' renderer, read-only, from what is
 * there now back to the checkpoint —, each file the person changed since the agent's edit
 * called out, the note that the kernel keeps its state (with the names the undone cells had
 * set), then Restore / Cancel. Conflicts are never overwritten by the plain Restore: a
 * separate button says it overwrites. Everything goes in as text.
 */
import type { RewindPreview, RewindResult } from '@cellmate/protocol';
import type { TranslationBundle } from '@jupyterlab/translation';

import { renderDiff } from './diff-view';

/** What the rewind view asks of the server. */
export interface IRewindActions {
  preview(itemId: string, scope: 'turn' | 'from'): Promise<RewindPreview>;
  apply(
    itemId: string,
    scope: 'turn' | 'from',
    options: { overwrite: boolean; conversation: boolean }
  ): Promise<RewindResult>;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

function button(label: string, className: string, title: string): HTMLButtonElement {
  const b = el('button', `jp-Button jp-mod-styled ${className}`, label);
  b.type = 'button';
  b.title = title;
  return b;
}

/**
 * Builds the preview box for a user message: loads the preview, then offers the restore.
 * `onDone` runs after a rewind (the pane refreshes which turns can still be undone).
 */
export function renderRewind(
  itemId: string,
  scope: 'turn' | 'from',
  actions: IRewindActions,
  trans: TranslationBundle,
  onClose: () => void,
  onDone: (result: RewindResult) => void
): HTMLElement {
  const node = el('div', 'jp-cellmate-rewind');
  node.dataset.scope = scope;
  node.dataset.state = 'loading';
  node.appendChild(
    el(
      'div',
      'jp-cellmate-rewind-title',
      scope === 'turn' ? trans.__("Undo this turn's changes") : trans.__('Rewind to here')
    )
  );
  const state = el('div', 'jp-cellmate-rewind-state', trans.__('Reading what would be restored…'));
  state.setAttribute('role', 'status');
  node.appendChild(state);
  void actions.preview(itemId, scope).then(
    (preview) => show(preview),
    (error) => {
      node.dataset.state = 'error';
      state.textContent = error instanceof Error ? error.message : String(error);
      const close = button(trans.__('Close'), 'jp-mod-reject', trans.__('Close this box'));
      close.addEventListener('click', onClose);
      node.appendChild(close);
    }
  );

  const show = (preview: RewindPreview): void => {
    node.dataset.state = 'preview';
    state.textContent = preview.summary;
    if (preview.files.length > 0) {
      const diff = renderDiff({ kind: 'diff', editId: '', summary: '', expiresAt: 0, files: preview.files }, { trans });
      diff.classList.add('jp-cellmate-rewind-diff');
      node.appendChild(diff);
    }
    for (const f of preview.files) {
      if (f.action === 'conflict' || f.action === 'unavailable' || f.action === 'remove') {
        const line = el('div', `jp-cellmate-rewind-file jp-mod-${f.action}`);
        line.dataset.path = f.path;
        line.dataset.action = f.action;
        line.textContent =
          f.action === 'conflict'
            ? trans.__('%1: %2. Restoring it would overwrite that change.', f.path, f.why ?? '')
            : f.action === 'remove'
              ? trans.__('%1 will be deleted (%2).', f.path, f.why ?? '')
              : trans.__('%1 cannot be restored: %2.', f.path, f.why ?? '');
        node.appendChild(line);
      }
    }
    const kernel = el(
      'div',
      'jp-cellmate-rewind-kernel',
      preview.kernelNames.length
        ? trans.__(
            "The kernel's state is not rewound: it keeps %1, set by the cells being undone.",
            preview.kernelNames.join(', ')
          )
        : trans.__("The kernel's state is not rewound: whatever the undone code ran stays in the kernel.")
    );
    node.appendChild(kernel);
    let conversation: HTMLInputElement | undefined;
    if (scope === 'from') {
      const label = el('label', 'jp-cellmate-rewind-conversation');
      conversation = document.createElement('input');
      conversation.type = 'checkbox';
      label.append(
        conversation,
        document.createTextNode(` ${trans.__('Also remove the conversation from this message on')}`)
      );
      node.appendChild(label);
    }
    const bar = el('div', 'jp-cellmate-rewind-actions');
    const conflicts = preview.files.some((f) => f.action === 'conflict');
    const restorable = preview.files.some((f) => f.action === 'restore' || f.action === 'remove');
    const restore = button(
      conflicts ? trans.__('Restore, keep my changes') : trans.__('Restore'),
      'jp-mod-accept jp-cellmate-rewind-restore',
      trans.__('Put the files and notebooks back as they were before')
    );
    const update = (): void => {
      restore.disabled = !restorable && !conversation?.checked;
    };
    update();
    conversation?.addEventListener('change', update);
    const overwrite = button(
      trans.__('Restore and overwrite my changes'),
      'jp-mod-warn jp-cellmate-rewind-overwrite',
      trans.__('Also restore the files changed since the agent edited them')
    );
    overwrite.hidden = !conflicts;
    const cancel = button(
      trans.__('Cancel'),
      'jp-mod-reject jp-cellmate-rewind-cancel',
      trans.__('Close without restoring')
    );
    const act = async (force: boolean): Promise<void> => {
      restore.disabled = overwrite.disabled = cancel.disabled = true;
      state.textContent = trans.__('Restoring…');
      try {
        const result = await actions.apply(itemId, scope, {
          overwrite: force,
          conversation: conversation?.checked ?? false
        });
        node.dataset.state = 'done';
        state.textContent = result.message;
        bar.remove();
        onDone(result);
      } catch (error) {
        node.dataset.state = 'error';
        state.textContent = error instanceof Error ? error.message : String(error);
        restore.disabled = overwrite.disabled = cancel.disabled = false;
      }
    };
    restore.addEventListener('click', () => void act(false));
    overwrite.addEventListener('click', () => void act(true));
    cancel.addEventListener('click', onClose);
    bar.append(restore, overwrite, cancel);
    node.appendChild(bar);
  };
  return node;
}
