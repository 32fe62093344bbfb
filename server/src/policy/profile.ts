import type { CapabilityProfile, SurfaceTool, ToolTier } from '../ports/vocabulary.js';

/**
 * Capability profiles (SPEC MODE-2) projected onto tool surfaces. The modes issue supplies
 * the four profiles; this module only projects them. All functions here are pure.
 */
export type { CapabilityProfile } from '../ports/vocabulary.js';

/** Tools no filter, gate or guard may remove (MODE-6). */
export const PINNED_TOOLS: ReadonlySet<string> = new Set(['ask_user', 'submit_plan', 'propose_orchestration']);

/** Everything: the Agent mode's surface until the modes issue lands. */
export const FULL_PROFILE: CapabilityProfile = { name: 'agent', maxTier: 'exec' };

/** Read-only surface (plan mode, read-only sub-agents). */
export const READ_ONLY_PROFILE: CapabilityProfile = { name: 'read-only', maxTier: 'read' };

const TIER_RANK: Record<ToolTier, number> = { read: 0, write: 1, exec: 2 };

/** True when `tier` is at most `max`. */
export function tierAllowed(tier: ToolTier, max: ToolTier): boolean {
  return TIER_RANK[tier] <= TIER_RANK[max];
}

/**
 * Why a tool is not on a profile's surface, or `undefined` when it is. The message is the
 * registry's refusal (the same for the model, the kernel bridge and the user).
 */
export function surfaceRefusal(tool: SurfaceTool, profile: CapabilityProfile): string | undefined {
  if (PINNED_TOOLS.has(tool.name)) return undefined;
  const where = `the "${profile.name}" surface`;
  if (!tierAllowed(tool.tier, profile.maxTier)) {
    return `Refused: ${tool.name} is ${tool.tier === 'exec' ? 'an' : 'a'} ${tool.tier}-tier tool and ${where} allows only ${describeMax(profile.maxTier)} tools. It is not available here; do not retry it.`;
  }
  if (profile.deny?.includes(tool.name)) return `Refused: ${tool.name} is denied on ${where}. Do not retry it.`;
  if (profile.allow && tool.tier !== 'read' && !profile.allow.includes(tool.name)) {
    return `Refused: ${tool.name} is not in the allowlist of ${where}. Do not retry it.`;
  }
  const refused = (tool.actionClasses ?? []).filter((c) => profile.refusedActionClasses?.includes(c));
  if (refused.length > 0) {
    return `Refused: ${tool.name} may ${refused.join(', ')}, which ${where} does not allow. Do not retry it.`;
  }
  return undefined;
}

function describeMax(tier: ToolTier): string {
  return tier === 'read' ? 'read' : tier === 'write' ? 'read and write' : 'all';
}

/** The tools a profile's surface shows, in the given order (TIER-2, MODE-2/2a/6/7). */
export function projectSurface<T extends SurfaceTool>(tools: readonly T[], profile: CapabilityProfile): T[] {
  return tools.filter((t) => surfaceRefusal(t, profile) === undefined);
}
