/**
 * The `debug` renderer of the tool-card display registry (SPEC DBG): where the
 * session is stopped (file or notebook cell + line, with the source line), the stack, the
 * top frame's locals, and a Terminate button. A stop in a notebook cell asks the pane to
 * scroll the open notebook to that cell; a session in a notebook's own kernel asks it to
 * sync JupyterLab's debugger for that notebook (breakpoints in its gutter). Everything goes in as text (never HTML).
 */
import type { DebugDisplay } from '@cellmate/protocol';
import type { TranslationBundle } from '@jupyterlab/translation';

/** What a debug card can ask of the pane. */
export interface IDebugCardActions {
  /** Ends the chat's session if it is still `sessionId`; resolves true when it was ended. */
  terminate?(sessionId: string): Promise<boolean>;
  /** Scrolls the open notebook at `notebook` (workspace-relative) to cell `index` (0-based). */
  revealCell?(notebook: string, index: number): void;
  /**
   * Brings JupyterLab's own debugger for the open notebook at `notebook` in line with its
   * kernel's debugger (on/off, breakpoints in the gutter, the stopped frame).
   */
  syncNotebookDebugger?(
    notebook: string,
    breakpoints?: ReadonlyArray<{ source: string; lines: readonly number[] }>
  ): void;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** The card body for one display. */
export function renderDebugCard(
  display: DebugDisplay,
  trans: TranslationBundle,
  actions: IDebugCardActions = {}
): HTMLElement {
  const node = el('div', 'jp-cellmate-debug');
  node.dataset.displayKind = 'debug';
  node.dataset.state = String(display.state);
  // An earlier card of a session that has ended since: still the record of its stop, but ended.
  const sessionEnded = display.sessionEnded === true && display.state !== 'ended';
  node.dataset.sessionEnded = String(sessionEnded);
  node.dataset.sessionId = String(display.sessionId);
  const frames = Array.isArray(display.frames) ? display.frames : [];
  const top = frames[0];
  const where = el('div', 'jp-cellmate-debug-where');
  if (display.state === 'stopped' && top) {
    where.textContent = trans.__(
      'Stopped (%1) at %2, line %3',
      String(display.reason ?? ''),
      String(top.label),
      String(top.line)
    );
  } else {
    const states: Record<string, string> = {
      running: trans.__('Running'),
      finished: trans.__('Finished'),
      ended: trans.__('Ended'),
      stopped: trans.__('Stopped')
    };
    const why = display.state === 'ended' && display.reason ? ` (${String(display.reason)})` : '';
    where.textContent = `${states[display.state] ?? String(display.state)}${why} — ${String(display.adapter)}: ${String(display.target)}`;
  }
  if (sessionEnded) {
    const ended = el('span', 'jp-cellmate-debug-ended', ` — ${trans.__('session ended')}`);
    where.appendChild(ended);
  }
  node.appendChild(where);
  if (display.state === 'stopped' && top && typeof top.sourceLine === 'string') {
    const src = el('pre', 'jp-cellmate-debug-source');
    src.textContent = `${top.line} │ ${top.sourceLine}`;
    node.appendChild(src);
  }
  if (frames.length > 0) {
    node.appendChild(el('div', 'jp-cellmate-tool-heading', trans.__('Stack')));
    const list = el('ol', 'jp-cellmate-debug-stack');
    for (const f of frames) {
      list.appendChild(el('li', 'jp-cellmate-debug-frame', `${String(f.name)} — ${String(f.label)}:${String(f.line)}`));
    }
    node.appendChild(list);
  }
  const locals = Array.isArray(display.locals) ? display.locals : [];
  if (locals.length > 0) {
    node.appendChild(el('div', 'jp-cellmate-tool-heading', trans.__('Locals')));
    const table = el('table', 'jp-cellmate-debug-locals');
    for (const v of locals) {
      const row = document.createElement('tr');
      row.append(
        el('td', 'jp-cellmate-debug-name', String(v.name)),
        el('td', 'jp-cellmate-debug-type', v.type ? String(v.type) : ''),
        el('td', 'jp-cellmate-debug-value', String(v.value))
      );
      table.appendChild(row);
    }
    node.appendChild(table);
  }
  if (display.state !== 'ended' && !sessionEnded && actions.terminate) {
    const terminate = actions.terminate;
    const button = el(
      'button',
      'jp-Button jp-mod-styled jp-mod-warn jp-cellmate-debug-terminate',
      trans.__('Terminate')
    );
    button.type = 'button';
    button.title = trans.__('End this debug session and stop its debugger');
    button.addEventListener('click', () => {
      button.disabled = true;
      void terminate(String(display.sessionId)).then(
        (ended) => {
          button.textContent = ended ? trans.__('Terminated') : trans.__('Session already ended');
          node.dataset.state = 'ended';
          if (typeof display.notebook === 'string') {
            actions.syncNotebookDebugger?.(display.notebook);
          }
        },
        () => {
          button.disabled = false;
        }
      );
    });
    node.appendChild(button);
  }
  return node;
}
