import type { ModelSettings } from '@cellmate/protocol';

/**
 * Whether a model receives images in tool results (eval's figures, SPEC EVAL-3). The
 * setting `acceptsImages` wins; otherwise: `openai` and `anthropic` yes (their current
 * models take images), `scripted` yes (so tests can record what would be sent),
 * `openai-compatible` no (many local models are text-only; turn it on in the settings).
 */
export function modelAcceptsImages(settings: Pick<ModelSettings, 'provider' | 'acceptsImages'>): boolean {
  if (typeof settings.acceptsImages === 'boolean') return settings.acceptsImages;
  return settings.provider === 'openai' || settings.provider === 'anthropic' || settings.provider === 'scripted';
}
