/**
 * A worker's surface (SPEC TIER-2, MODE-2; issue #16 item 5): its parent's profile — the
 * profile of the turn whose call spawned it — narrowed, never widened. Pure.
 *
 * - `access` lowers the highest tier (a read-only reviewer of an Agent chat); it never
 *   raises it: a worker of a Plan chat is read-only whatever it asks for.
 * - The parent's allow/deny lists and refused action classes stay.
 * - Workers do not start workers (`vibe_*` denied) and do not answer for the chat's plan
 *   (`exit_plan_mode` denied).
 */
import type { CapabilityProfile, ToolTier } from '../ports/vocabulary.js';

/** Tools a worker never has. */
export const WORKER_DENIED_TOOLS: readonly string[] = ['vibe_spawn', 'vibe_send', 'vibe_wait', 'vibe_kill', 'vibe_list', 'exit_plan_mode'];

const RANK: Record<ToolTier, number> = { read: 0, write: 1, exec: 2 };

/** The lower of two tiers. */
export function lowerTier(a: ToolTier, b: ToolTier): ToolTier {
  return RANK[a] <= RANK[b] ? a : b;
}

/** The worker profile for a parent profile and the requested access. */
export function workerProfile(parent: CapabilityProfile, access?: ToolTier): CapabilityProfile {
  const deny = [...new Set([...(parent.deny ?? []), ...WORKER_DENIED_TOOLS])];
  return {
    name: `${parent.name}/worker`,
    maxTier: access ? lowerTier(parent.maxTier, access) : parent.maxTier,
    ...(parent.allow ? { allow: [...parent.allow] } : {}),
    deny,
    ...(parent.refusedActionClasses ? { refusedActionClasses: [...parent.refusedActionClasses] } : {})
  };
}
