import type { ChatMode } from '@cellmate/protocol';
import type { ToolDefinition } from '../gate/define-tool.js';
import type { ToolRegistry } from '../gate/registry.js';
import { surfaceCatalog, type SurfaceCatalog } from '../gate/catalog.js';
import { modePromptBlock } from './prompt-block.js';
import { profileOf, type ModeProfile } from './profiles.js';
import type { CapabilityProfile } from '../ports/vocabulary.js';

/** Everything a turn derives from its chat's mode: one profile, its projections. */
export interface TurnSurface {
  /** The profile every call of the turn carries in its context (model, kernel `tool()`, workers). */
  profile: ModeProfile;
  /** The tools declared to the model in full (the surface without deferred tools; `tool_search` carries the rest). */
  declared: ToolDefinition[];
  /** What the model receives for this surface (HARN-11): the declarations every step sends. */
  catalog: SurfaceCatalog;
  /** The mode's system-prompt block, from the surface's tools. */
  promptBlock: string;
  /** The one nudge of a run that ends without the mode's artifact (only when that tool is on the surface). */
  nudge?: { verb: string; text: string };
}

/**
 * The turn's surface for a chat in `mode`, read once when the turn starts (a switch during
 * the turn applies to the next one, MODE-1). Both projections are the registry's own
 * (`list`, and the catalog of `gate/catalog.ts`), so the prompt, the declaration and the gate cannot disagree.
 * `mode` may be a turn's own profile instead (an Explain turn's, `EXPLAIN_PROFILE`).
 * `hide`: tools left out of this turn's catalog and prompt (`skill` while no skill is offered).
 */
export function turnSurface(
  registry: ToolRegistry,
  mode: ChatMode | ModeProfile,
  hide?: ReadonlySet<string>
): TurnSurface {
  const profile = typeof mode === 'string' ? profileOf(mode) : mode;
  const surface = registry.list(profile).filter((t) => !hide?.has(t.name));
  const nudge =
    profile.artifact && profile.nudge && surface.some((t) => t.name === profile.artifact)
      ? { verb: profile.artifact, text: profile.nudge }
      : undefined;
  const catalog = surfaceCatalog(registry, profile, hide);
  return {
    profile,
    declared: catalog.declaredTools,
    catalog,
    promptBlock: modePromptBlock(profile, surface),
    ...(nudge ? { nudge } : {})
  };
}

/** What a run hides while no skill is offered. */
const NO_SKILL: ReadonlySet<string> = new Set(['skill']);

/**
 * The skill catalog of a run's prompt (SKILL-2), the same rule for a chat's turn and a
 * worker's run: the catalog goes in only when `skill` is on the run's surface, since the
 * catalog tells the model to load guides with it; while no skill is offered `skill` is
 * hidden (`hide`, for {@link turnSurface} or `surfaceCatalog`), as it has nothing to load.
 */
export function skillCatalog(
  registry: ToolRegistry,
  profile: CapabilityProfile,
  catalogBlock: string | undefined
): { block?: string; hide?: ReadonlySet<string> } {
  if (!catalogBlock) return { hide: NO_SKILL };
  return registry.list(profile).some((t) => t.name === 'skill') ? { block: catalogBlock } : {};
}
