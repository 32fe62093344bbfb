/**
 * The header's model picker: which model the open chat's turns run with, and the models the
 * configured tiers offer (`models/list`). The first entry follows Settings → Cellmate; any
 * other is stored with the chat. DOM hooks: `.jp-cellmate-model-select[data-model]`
 * (`provider/model` shown now) and `[data-follows]` (`true` while the chat follows the settings).
 */
import type { ModelOption, TierModel } from '@cellmate/protocol';
import type { TranslationBundle } from '@jupyterlab/translation';

/** The value of the entry that follows the settings. */
const FOLLOW = '';

export class ModelPicker {
  readonly node: HTMLElement;

  constructor(private readonly _options: ModelPicker.IOptions) {
    const trans = _options.trans;
    this.node = document.createElement('div');
    this.node.className = 'jp-cellmate-model-select-wrap jp-HTMLSelect jp-DefaultStyle';
    this._select = document.createElement('select');
    this._select.className = 'jp-cellmate-model-select';
    this._select.setAttribute('aria-label', trans.__('Model of this chat'));
    this._select.addEventListener('change', () => {
      const value = this._select.value;
      const choice = value === FOLLOW ? null : (this._choices.get(value) ?? null);
      _options.onPick(choice);
    });
    this.node.append(this._select);
    this.set([], null, true);
  }

  /**
   * Shows `current` (the chat's model; null: none configured) among `models`; `follows`
   * says the chat has no model of its own.
   */
  set(models: readonly ModelOption[], current: TierModel | null, follows: boolean): void {
    const trans = this._options.trans;
    const label = current ? labelOf(current) : trans.__('no model');
    this._select.dataset.model = current ? `${current.provider}/${current.model}` : '';
    this._select.dataset.follows = String(follows);
    this._select.title = follows
      ? trans.__('Model: %1 (from Settings → Cellmate). Pick another for this chat.', label)
      : trans.__('Model: %1 (this chat’s own). Pick “Settings” to follow Settings → Cellmate again.', label);
    this._choices.clear();
    const entries: HTMLOptionElement[] = [];
    const follow = option(FOLLOW, follows ? trans.__('Model: %1', label) : trans.__('Settings’ model'));
    entries.push(follow);
    const seen = new Set<string>();
    const all: TierModel[] = [...models];
    if (current && !follows) {
      all.unshift(current);
    }
    for (const m of all) {
      const key = keyOf(m);
      if (seen.has(key)) {
        continue;
      }
      seen.add(key);
      this._choices.set(key, { provider: m.provider, model: m.model, ...(m.baseUrl ? { baseUrl: m.baseUrl } : {}) });
      const tier = (m as ModelOption).tier;
      entries.push(option(key, tier ? trans.__('%1 (%2 tier)', labelOf(m), tier) : labelOf(m)));
    }
    this._select.replaceChildren(...entries);
    this._select.value = follows || !current ? FOLLOW : keyOf(current);
    if (!follows && current) {
      // The chat's own model reads as the header's label, like the settings' does.
      const picked = [...this._select.options].find((o) => o.value === keyOf(current));
      if (picked) {
        picked.textContent = trans.__('Model: %1', label);
      }
    }
  }

  /** Disables the picker (not connected). */
  setEnabled(enabled: boolean): void {
    this._select.disabled = !enabled;
  }

  private readonly _select: HTMLSelectElement;
  private readonly _choices = new Map<string, TierModel>();
}

export namespace ModelPicker {
  export interface IOptions {
    trans: TranslationBundle;
    /** A model was picked (`null`: follow the settings). */
    onPick(choice: TierModel | null): void;
  }
}

function keyOf(m: TierModel): string {
  return `${m.provider}\u0000${m.model}\u0000${m.baseUrl ?? ''}`;
}

function labelOf(m: TierModel): string {
  return m.provider === 'scripted' ? m.model : `${m.model} · ${m.provider}`;
}

function option(value: string, label: string): HTMLOptionElement {
  const node = document.createElement('option');
  node.value = value;
  node.textContent = label;
  return node;
}
