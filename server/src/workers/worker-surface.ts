/**
 * A worker's surface (SPEC TIER-2, MODE-2): its parent's profile — the
 * profile of the turn whose call spawned it — narrowed, never widened. Pure.
 *
 * - `access` lowers the highest tier (a read-only reviewer of an Agent chat); it never
 *   raises it: a worker of a Plan chat is read-only whatever it asks for.
 * - The parent's allow/deny lists and refused action classes stay.
 * - Workers do not start workers (`vibe_*` denied) and do not answer for the chat's plan
 *   (`exit_plan_mode` denied).
 * - A worker never has more than its chat has now: every call of a run is judged against
 *   the intersection of the surface it was spawned with and the worker surface of the
 *   chat's current mode ({@link liveWorkerProfile}) — a worker spawned in Agent mode cannot
 *   write once the chat is in Plan mode, whoever sends it work.
 */
import type { CapabilityProfile, ToolTier } from '../ports/vocabulary.js';

/** Tools a worker never has. */
export const WORKER_DENIED_TOOLS: readonly string[] = [
  'vibe_spawn',
  'vibe_send',
  'vibe_wait',
  'vibe_kill',
  'vibe_list',
  'exit_plan_mode'
];

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

/** The narrower of two profiles: the lower tier, both deny lists, both refused classes, only tools both allow. */
export function intersectProfiles(a: CapabilityProfile, b: CapabilityProfile): CapabilityProfile {
  const allow = a.allow && b.allow ? a.allow.filter((t) => b.allow!.includes(t)) : (a.allow ?? b.allow);
  const classes = [...new Set([...(a.refusedActionClasses ?? []), ...(b.refusedActionClasses ?? [])])];
  return {
    name: a.name === b.name ? a.name : `${a.name}, within ${b.name}`,
    maxTier: lowerTier(a.maxTier, b.maxTier),
    ...(allow ? { allow: [...allow] } : {}),
    deny: [...new Set([...(a.deny ?? []), ...(b.deny ?? [])])],
    ...(classes.length ? { refusedActionClasses: classes } : {})
  };
}

/**
 * A profile whose fields are computed when read: `spawned` narrowed by `now()` (the worker
 * surface of the chat's mode at that moment). The registry reads `ctx.profile` at every call,
 * so a mode switch narrows a run already under way from its next call.
 */
export function liveWorkerProfile(spawned: CapabilityProfile, now: () => CapabilityProfile): CapabilityProfile {
  const current = (): CapabilityProfile => intersectProfiles(spawned, now());
  return {
    get name() {
      return current().name;
    },
    get maxTier() {
      return current().maxTier;
    },
    get allow() {
      return current().allow;
    },
    get deny() {
      return current().deny;
    },
    get refusedActionClasses() {
      return current().refusedActionClasses;
    }
  };
}
