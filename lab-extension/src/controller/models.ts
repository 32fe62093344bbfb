/**
 * Which model the pane's turns and inline completions use: the header's picker (the open
 * chat's own model, `models/list`, `chat/set-model`), `/model`, and the inline-completion
 * switch. The settings hold the person's choice; a chat may override its main tier.
 */
import type { ModelOption, ModelSettings, TierModel } from '@cellmate/protocol';

import { isTierModel } from '../guards';
import { toModelSettings } from '../settings';
import { PaneState } from './pane-state';

/** The model picker, the model setting and inline completions. */
export class ModelActions {
  constructor(private readonly _pane: PaneState) {}

  /** The models the header's picker offers (`models/list` for the configured tiers). */
  get models(): readonly ModelOption[] {
    return this._pane.models;
  }

  /** The model the open chat's turns run with: its own pick, else the settings' main tier (null: none configured). */
  get chatModel(): TierModel | null {
    const pane = this._pane;
    const picked = pane.store.state ? pane.store.state.model : pane.draftModel;
    if (picked) {
      return picked;
    }
    const main = toModelSettings(pane.settings);
    return main
      ? { provider: main.provider, model: main.model, ...(main.baseUrl ? { baseUrl: main.baseUrl } : {}) }
      : null;
  }

  /** Whether the open chat follows the settings' main tier (no model of its own). */
  get followsSettings(): boolean {
    const pane = this._pane;
    return !(pane.store.state ? pane.store.state.model : pane.draftModel);
  }

  /** Asks the server which models the configured tiers offer; the picker shows them. */
  async refreshModels(): Promise<void> {
    const pane = this._pane;
    const model = toModelSettings(pane.settings);
    if (!model || !pane.connected) {
      pane.models = [];
      pane.emitChanged();
      return;
    }
    try {
      const { models } = await pane.connection.request('models/list', { model });
      pane.models = Array.isArray(models) ? models.filter(isTierModel) : [];
    } catch {
      pane.models = []; // the picker still shows the settings' own model
    }
    pane.emitChanged();
  }

  /**
   * Picks the open chat's model (the header's picker; `null`: follow the settings again).
   * Stored with the chat, so its next request uses it, in every window and after a reload.
   * With no chat open, the chat the next message creates gets it. False when it failed.
   */
  async setChatModel(choice: TierModel | null): Promise<boolean> {
    const pane = this._pane;
    const settings = toModelSettings(pane.settings);
    const chatId = pane.chatId;
    if (!chatId || !settings) {
      pane.draftModel = choice;
      pane.emitChanged();
      return true;
    }
    try {
      await pane.connection.request('chat/set-model', { chatId, model: choice, settings });
      return true;
    } catch (error) {
      pane.fail(pane.trans.__('Could not switch the model'), error);
      pane.emitChanged(); // the picker goes back to the chat's model
      return false;
    }
  }

  /** The configured provider and model, for `/model`. */
  modelLabel(): string {
    const { settings, trans } = this._pane;
    return `${settings.provider} · ${settings.model || trans.__('(the provider’s default)')}`;
  }

  /** Changes the model setting (`/model NAME`); the next turn uses it. */
  async setModel(name: string): Promise<void> {
    const pane = this._pane;
    if (await this._setSetting('model', name, pane.trans.__('Could not change the model'))) {
      pane.notice('info', pane.trans.__('Model: %1', this.modelLabel()));
    }
  }

  /** Whether inline completions are on (Settings → Cellmate, or the pane's toggle). */
  get inlineCompletions(): boolean {
    return this._pane.settings.inlineCompletions;
  }

  /** Turns inline completions on or off in the settings (the pane's toggle). */
  async setInlineCompletions(on: boolean): Promise<void> {
    await this._setSetting('inlineCompletions', on, this._pane.trans.__('Could not change the Cellmate settings'));
  }

  /** The model settings an inline completion sends (null: none configured). */
  inlineModel(): ModelSettings | null {
    return this._pane.settings.inlineCompletions ? toModelSettings(this._pane.settings) : null;
  }

  /** Writes one Cellmate setting; false (the person was told) when it could not. */
  private async _setSetting(key: string, value: string | boolean, failure: string): Promise<boolean> {
    const pane = this._pane;
    if (!pane.settingsObject) {
      pane.notify('error', pane.trans.__('The Cellmate settings are not available'));
      return false;
    }
    try {
      await pane.settingsObject.set(key, value);
      return true;
    } catch (error) {
      pane.fail(failure, error);
      return false;
    }
  }
}
