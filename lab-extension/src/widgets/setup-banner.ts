/**
 * The "not configured" banner: says exactly what to set, and offers the offline demo.
 * API keys are never asked for here; they live on the server.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';

import type { ISetupProblem } from '../settings';

export class SetupBannerWidget extends Widget {
  constructor(options: SetupBannerWidget.IOptions) {
    super();
    const trans = options.trans;
    this.addClass('jp-cellmate-setup');
    this.node.setAttribute('role', 'region');
    this.node.setAttribute('aria-label', trans.__('Cellmate setup'));

    this._message = document.createElement('p');
    this._message.className = 'jp-cellmate-setup-message';
    this._hint = document.createElement('p');
    this._hint.className = 'jp-cellmate-setup-hint';

    const demo = document.createElement('button');
    demo.type = 'button';
    demo.className = 'jp-Button jp-mod-styled jp-mod-accept jp-cellmate-demo';
    demo.textContent = trans.__('Try the offline demo');
    demo.setAttribute('aria-label', trans.__('Try the offline demo (scripted provider, no API key)'));
    demo.addEventListener('click', () => options.onDemo());

    const settings = document.createElement('button');
    settings.type = 'button';
    settings.className = 'jp-Button jp-mod-styled jp-cellmate-open-settings';
    settings.textContent = trans.__('Open Settings');
    settings.setAttribute('aria-label', trans.__('Open the Cellmate settings'));
    settings.addEventListener('click', () => options.onOpenSettings());
    settings.hidden = !options.canOpenSettings;

    const buttons = document.createElement('div');
    buttons.className = 'jp-cellmate-setup-buttons';
    buttons.append(demo, settings);
    this.node.append(this._message, this._hint, buttons);
  }

  /** Shows the problem, or hides the banner when there is none. */
  setProblem(problem: ISetupProblem | null): void {
    this.setHidden(problem === null);
    this.node.dataset.reason = problem?.reason ?? '';
    this._message.textContent = problem?.message ?? '';
    this._hint.textContent = problem?.hint ?? '';
    this._hint.hidden = !problem?.hint;
  }

  private readonly _message: HTMLElement;
  private readonly _hint: HTMLElement;
}

export namespace SetupBannerWidget {
  export interface IOptions {
    trans: TranslationBundle;
    onDemo(): void;
    onOpenSettings(): void;
    canOpenSettings: boolean;
  }
}
