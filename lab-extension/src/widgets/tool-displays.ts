/**
 * Tool-card renderers by display kind: `ToolCallDisplay` is a tagged union
 * (`@cellmate/protocol`), and the card asks this registry for a view of whatever display an
 * item carries. Built in: `eval` (kernel, rewritten magics, rich outputs rendered untrusted
 * by rendermime), `text` (plain text, never HTML), `diff` (a staged edit with Accept /
 * Discard, `diff-view.ts`), `debug` (`debug-card.ts`) and `lsp` (locations as links, new
 * diagnostics with severity icons: `lsp-display.ts`), `plan` (a plan's goal and steps with
 * Approve / Reject while its approval is pending: `plan-view.ts`), `review` (findings anchored to
 * files/cells with Approve, the verdict and its axes: `review-view.ts`), `orchestration` (roles,
 * task tree, synthesis, budget, Approve / Reject while pending, each task's progress once
 * approved: `orchestration-view.ts`), `verify` (a row per notebook expanding to its cells as links, Accept new outputs: `verify-view.ts`). A kind this pane does not know (a
 * newer server) renders as text with the display's JSON. New kinds — a structural edit's
 * diff, LSP locations, debugger state — register a renderer here; the card needs no change.
 */
import type { ToolCallDisplay, ToolCallDisplayKind } from '@cellmate/protocol';
import type { IDisposable } from '@lumino/disposable';

import { renderDiff } from './diff-view';
import { renderDebugCard, type IDebugCardActions } from './debug-card';
import { EvalOutputView, kernelLabel } from './eval-output';
import { lspDisplayRenderer } from './lsp-display';
import { planDisplayRenderer } from './plan-view';
import { orchestrationDisplayRenderer } from './orchestration-view';
import { reviewDisplayRenderer } from './review-view';
import { verifyDisplayRenderer } from './verify-view';
import type { IToolDisplayContext, IToolDisplayRenderer, IToolDisplayView } from './tool-display-types';

export type { IToolDisplayContext, IToolDisplayRenderer, IToolDisplayView } from './tool-display-types';

/** The renderers, keyed by kind. */
export class ToolDisplayRegistry {
  /** Adds (or replaces) the renderer of a kind; disposing the result removes it. */
  register<K extends ToolCallDisplayKind>(renderer: IToolDisplayRenderer<K>): IDisposable {
    // The map holds renderers of every kind; `render` looks up by `display.kind`, so each gets only its own kind.
    this._renderers.set(renderer.kind, renderer as unknown as IToolDisplayRenderer);
    let disposed = false;
    return {
      get isDisposed() {
        return disposed;
      },
      dispose: () => {
        // Identity comparison only: the same renderer object stored above.
        if (!disposed && this._renderers.get(renderer.kind) === (renderer as unknown as IToolDisplayRenderer)) {
          this._renderers.delete(renderer.kind);
        }
        disposed = true;
      }
    };
  }

  /** Whether a kind has a renderer. */
  has(kind: string): boolean {
    return this._renderers.has(kind);
  }

  /** A view of `display` by its kind; unknown kinds render as text. Null for no display. */
  render(display: ToolCallDisplay | undefined, context: IToolDisplayContext): IToolDisplayView | null {
    if (!display || typeof display !== 'object') {
      return null;
    }
    // Chat files written before displays had kinds hold eval displays without `kind`.
    const kind = (display as { kind?: unknown }).kind ?? 'eval';
    const renderer = typeof kind === 'string' ? this._renderers.get(kind) : undefined;
    if (renderer) {
      return renderer.render({ ...display, kind } as ToolCallDisplay, context);
    }
    return textView(JSON.stringify(display, null, 2), context.trans.__('Details'), String(kind));
  }

  private readonly _renderers = new Map<string, IToolDisplayRenderer>();
}

/** Eval outputs: the kernel in the summary, rewrites and rich outputs in the body. */
export const evalDisplayRenderer: IToolDisplayRenderer<'eval'> = {
  kind: 'eval',
  render(display, { rendermime, trans }) {
    const view = new EvalOutputView(display, rendermime, trans);
    return {
      node: view.node,
      summary: display.kernel ? kernelLabel(display, trans) : '',
      openByDefault: (Array.isArray(display.outputs) ? display.outputs : []).some(
        (o) => !!o && typeof o === 'object' && ('image/png' in o || 'text/html' in o)
      ),
      dispose: () => view.dispose()
    };
  }
};

/** A staged edit: unified diff per file / cell, Accept and Discard (`diff-view.ts`). */
export const diffDisplayRenderer: IToolDisplayRenderer<'diff'> = {
  kind: 'diff',
  render(display, context) {
    const node = renderDiff(display, context);
    return { node, summary: context.trans.__('staged edit'), openByDefault: true, dispose: () => node.remove() };
  }
};

/** Plain text (textContent only: nothing in it is ever parsed as HTML). */
export const textDisplayRenderer: IToolDisplayRenderer<'text'> = {
  kind: 'text',
  render(display) {
    return textView(
      typeof display.text === 'string' ? display.text : '',
      typeof display.label === 'string' ? display.label : undefined,
      'text'
    );
  }
};

/** The debug card (`debug-card.ts`) around the pane's actions (context ones win). */
export function debugDisplayRenderer(actions: IDebugCardActions = {}): IToolDisplayRenderer<'debug'> {
  return {
    kind: 'debug',
    render(display, { trans, debug }) {
      const all = { ...actions, ...debug };
      const node = renderDebugCard(display, trans, all);
      // An earlier card of an ended session is a record: it neither scrolls nor syncs the debugger.
      if (display.sessionEnded === true) {
        return { node, summary: trans.__('ended'), openByDefault: false, dispose: () => node.remove() };
      }
      const cell = display.state === 'stopped' ? display.frames?.[0]?.cell : undefined;
      if (cell && typeof cell.notebook === 'string' && typeof cell.index === 'number') {
        all.revealCell?.(cell.notebook, cell.index);
      }
      if (typeof display.notebook === 'string') {
        all.syncNotebookDebugger?.(display.notebook, display.breakpoints);
      }
      return {
        node,
        summary: display.state === 'stopped' ? trans.__('stopped') : String(display.state),
        openByDefault: display.state === 'stopped',
        dispose: () => node.remove()
      };
    }
  };
}

/** The registry with the built-in renderers. */
export function defaultToolDisplays(): ToolDisplayRegistry {
  const registry = new ToolDisplayRegistry();
  registry.register(evalDisplayRenderer);
  registry.register(textDisplayRenderer);
  registry.register(diffDisplayRenderer);
  registry.register(debugDisplayRenderer());
  registry.register(lspDisplayRenderer);
  registry.register(planDisplayRenderer);
  registry.register(orchestrationDisplayRenderer);
  registry.register(reviewDisplayRenderer);
  registry.register(verifyDisplayRenderer);
  return registry;
}

function textView(text: string, label: string | undefined, kind: string): IToolDisplayView {
  const node = document.createElement('div');
  node.className = 'jp-cellmate-display-text';
  node.dataset.displayKind = kind;
  if (label) {
    const heading = document.createElement('div');
    heading.className = 'jp-cellmate-tool-heading';
    heading.textContent = label;
    node.appendChild(heading);
  }
  const pre = document.createElement('pre');
  pre.textContent = text;
  node.appendChild(pre);
  return { node, dispose: () => node.remove() };
}
