/**
 * The eval part of a tool card (SPEC EVAL-2/3/4): which kernel the cell ran in, the
 * magics that were rewritten, and the cell's rich outputs (tables, figures, stderr)
 * rendered with JupyterLab's rendermime as **untrusted** (HTML sanitized, no scripts).
 * The `eval` renderer of the tool-card display registry (`tool-displays.ts`).
 */
import type { EvalDisplay } from '@cellmate/protocol';
import { MimeModel, type IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { TranslationBundle } from '@jupyterlab/translation';

type Renderer = ReturnType<IRenderMimeRegistry['createRenderer']>;

/** One-line label of the kernel, e.g. `python3 · analysis.ipynb` or `python3 · private`. */
export function kernelLabel(display: EvalDisplay, trans: TranslationBundle): string {
  const k = display.kernel;
  if (!k) {
    return '';
  }
  return k.origin === 'notebook'
    ? trans.__('%1 · %2', k.name, k.notebookPath ?? trans.__('notebook kernel'))
    : trans.__('%1 · private kernel', k.name);
}

/** Renders the eval display; owns the renderers it creates (dispose when replaced). */
export class EvalOutputView {
  readonly node: HTMLElement;

  constructor(
    display: EvalDisplay,
    /** Without it (tests outside JupyterLab) outputs show their `text/plain` only. */
    private readonly _rendermime: IRenderMimeRegistry | undefined,
    trans: TranslationBundle
  ) {
    this.node = document.createElement('div');
    this.node.className = 'jp-cellmate-eval-output';
    if (display.kernel) {
      const kernel = document.createElement('div');
      kernel.className = 'jp-cellmate-eval-kernel';
      kernel.dataset.origin = display.kernel.origin;
      kernel.textContent = trans.__('Kernel: %1', kernelLabel(display, trans));
      this.node.appendChild(kernel);
    }
    if (Array.isArray(display.rewrites) && display.rewrites.length) {
      const list = document.createElement('ul');
      list.className = 'jp-cellmate-eval-rewrites';
      list.setAttribute('aria-label', trans.__('Rewritten magics'));
      for (const r of display.rewrites) {
        const li = document.createElement('li');
        const code = document.createElement('code');
        code.textContent = r;
        li.appendChild(code);
        list.appendChild(li);
      }
      this.node.appendChild(list);
    }
    // The wire is checked loosely (guards.ts): render only string-valued bundles.
    const outputs = Array.isArray(display.outputs) ? display.outputs : [];
    for (const bundle of outputs) {
      if (bundle && typeof bundle === 'object' && Object.values(bundle).every((v) => typeof v === 'string')) {
        void this._renderBundle(bundle);
      }
    }
  }

  dispose(): void {
    for (const r of this._renderers) {
      r.dispose();
    }
    this._renderers.length = 0;
    this.node.remove();
  }

  private async _renderBundle(bundle: Record<string, string>): Promise<void> {
    const host = document.createElement('div');
    host.className = 'jp-cellmate-eval-mime';
    this.node.appendChild(host);
    const mime = this._rendermime?.preferredMimeType(bundle, 'any');
    if (!mime || !this._rendermime) {
      host.textContent = bundle['text/plain'] ?? '';
      return;
    }
    host.dataset.mimeType = mime;
    const renderer: Renderer = this._rendermime.createRenderer(mime);
    this._renderers.push(renderer);
    host.appendChild(renderer.node);
    try {
      await renderer.renderModel(new MimeModel({ data: bundle, trusted: false }));
    } catch {
      host.textContent = bundle['text/plain'] ?? '';
    }
  }

  private readonly _renderers: Renderer[] = [];
}
