import type { ChatMode } from '@cellmate/protocol';
import { WORLD_CHANGING_CLASSES } from '../policy/action-classes.js';
import { PINNED_TOOLS } from '../policy/profile.js';
import type { ActionClass, CapabilityProfile, ToolTier } from '../ports/vocabulary.js';

/**
 * The four modes as data (SPEC MODE-1…7). Each mode has exactly one {@link ModeProfile};
 * every enforcement layer of a turn is projected from it — the declared tools and the
 * registry's gate (`policy/profile.ts` `projectSurface` / `surfaceRefusal`, the same for the
 * model, a kernel's `tool()` and later workers, because the profile travels in the call's
 * context), the worktree posture (a read-only mode refuses every world-changing action
 * class, so mutating tools are off its surface) and the prompt block (`prompt-block.ts`,
 * generated from the tools actually on the surface). Pure data; nothing here runs.
 */

/** A guidance line of a mode's prompt block; shown only when every tool it names is on the surface. */
export interface ModeGuidance {
  text: string;
  /** Tools the line tells the model to use: without them on the surface it would be false. */
  needs?: readonly string[];
}

/** One mode's capability profile: the {@link CapabilityProfile} the registry judges, plus what the prompt and the pane need. */
export interface ModeProfile extends CapabilityProfile {
  readonly mode: ChatMode;
  /** Shown in the pane and the prompt block (`Agent`, `Plan`, …). */
  readonly label: string;
  /** Whether a person may pick it in the composer (MODE-8); `review` is set by the system (MODE-4). */
  readonly selectable: boolean;
  /** The one artifact verb the mode exists to produce (MODE-3/4/5), if any. */
  readonly artifact?: string;
  /**
   * Said once to the model when a run ends without a successful {@link artifact} call
   * (MODE-3's gentle nudge); absent: no completion contract (Review, MODE-4).
   */
  readonly nudge?: string;
  /** `read-only`: every world-changing action class is refused (MODE-2/7); enforced by the surface. */
  readonly worktree: 'read-only' | 'writable';
  /** Tools that belong to this mode only; every other mode's profile denies them (pinned tools excepted). */
  readonly ownTools: readonly string[];
  /** Hand-written lines of the prompt block. */
  readonly guidance: readonly ModeGuidance[];
}

interface ModeSpec {
  mode: ChatMode;
  name: string;
  label: string;
  selectable: boolean;
  maxTier: ToolTier;
  allow?: readonly string[];
  deny?: readonly string[];
  refusedActionClasses?: readonly ActionClass[];
  artifact?: string;
  nudge?: string;
  worktree: 'read-only' | 'writable';
  ownTools?: readonly string[];
  guidance: readonly ModeGuidance[];
}

const SPECS: readonly ModeSpec[] = [
  {
    mode: 'agent',
    name: 'agent',
    label: 'Agent',
    selectable: true,
    maxTier: 'exec',
    worktree: 'writable',
    guidance: [{ text: 'You may read, edit and run code. Keep changes to what the user asked for.' }]
  },
  {
    mode: 'plan',
    name: 'plan',
    label: 'Plan',
    selectable: true,
    maxTier: 'read',
    worktree: 'read-only',
    artifact: 'submit_plan',
    ownTools: ['exit_plan_mode'],
    nudge:
      'Reminder: this chat is in Plan mode and your run ended without submit_plan. If a plan would help, call submit_plan now (then exit_plan_mode). If no plan is needed here, that is fine: say so in one sentence and stop.',
    guidance: [
      { text: 'You are planning, not doing: explore with the read-only tools; nothing here changes the workspace.' },
      { text: 'Deliver the plan with submit_plan: a goal and a dependency graph of steps.', needs: ['submit_plan'] },
      {
        text: "Then call exit_plan_mode for the user's approval and wait while it is pending; on approval the steps run in Agent mode, on rejection revise and submit again.",
        needs: ['exit_plan_mode']
      },
      { text: 'If no plan is needed (a question, a one-line change), say so instead of inventing one.' }
    ]
  },
  {
    mode: 'review',
    name: 'review',
    label: 'Review',
    selectable: false,
    maxTier: 'write',
    worktree: 'read-only',
    allow: ['add_review_node', 'approve_review_node', 'finalize_review'],
    artifact: 'finalize_review',
    ownTools: ['add_review_node', 'approve_review_node', 'finalize_review'],
    guidance: [
      { text: 'You review changes, not make them: read the diff and the code around it.' },
      { text: 'Record each finding with add_review_node.', needs: ['add_review_node'] },
      {
        text: 'Publish the verdict with finalize_review; it runs lint, type-check and tests itself.',
        needs: ['finalize_review']
      },
      {
        text: "Only a peer confirms a finding: approve_review_node another reviewer's once checked, never your own.",
        needs: ['approve_review_node']
      }
    ]
  },
  {
    mode: 'orchestrate',
    name: 'orchestrate',
    label: 'Orchestrate',
    selectable: true,
    maxTier: 'read',
    worktree: 'read-only',
    artifact: 'propose_orchestration',
    // MODE-5: nothing runs before the operator approves — no worker may be started or rerun here (they are read tier, VIBE-1).
    deny: ['vibe_spawn', 'vibe_send'],
    guidance: [
      {
        text: 'You design the work, not run it: explore with the read-only tools; nothing here changes the workspace.'
      },
      {
        text: 'Propose roles, a sub-task tree, a synthesis step and a budget with propose_orchestration, then end your turn: nothing runs until the user approves it in the pane (no tool can), and a re-proposal within 2 minutes is refused. On rejection, revise and propose again.',
        needs: ['propose_orchestration']
      },
      { text: 'If the request fits one turn, say so instead of orchestrating it.' }
    ]
  }
];

/** Every mode's own tools, for the denylists. */
const OWN_TOOLS = new Map(SPECS.map((s) => [s.mode, s.ownTools ?? []]));

function compile(spec: ModeSpec): ModeProfile {
  const others = SPECS.filter((s) => s.mode !== spec.mode).flatMap((s) => OWN_TOOLS.get(s.mode) ?? []);
  const deny = [...new Set([...(spec.deny ?? []), ...others])].filter(
    (t) => !PINNED_TOOLS.has(t) && !(spec.ownTools ?? []).includes(t)
  );
  // The posture is enforced, not described: a read-only mode refuses every world-changing class (MODE-7).
  const refused =
    spec.worktree === 'read-only'
      ? [...new Set([...(spec.refusedActionClasses ?? []), ...WORLD_CHANGING_CLASSES])]
      : [...(spec.refusedActionClasses ?? [])];
  return Object.freeze({
    mode: spec.mode,
    name: spec.name,
    label: spec.label,
    selectable: spec.selectable,
    maxTier: spec.maxTier,
    ...(spec.allow ? { allow: spec.allow } : {}),
    ...(deny.length ? { deny } : {}),
    ...(refused.length ? { refusedActionClasses: refused } : {}),
    ...(spec.artifact ? { artifact: spec.artifact } : {}),
    ...(spec.nudge ? { nudge: spec.nudge } : {}),
    worktree: spec.worktree,
    ownTools: spec.ownTools ?? [],
    guidance: spec.guidance
  });
}

/** The profiles by mode. */
export const MODE_PROFILES: Readonly<Record<ChatMode, ModeProfile>> = Object.freeze(
  Object.fromEntries(SPECS.map((s) => [s.mode, compile(s)])) as Record<ChatMode, ModeProfile>
);

/**
 * The profile of an Explain turn ("Explain" on a failing cell): below every write and exec
 * tool whatever the chat's mode, so the answer cannot edit a file or a cell, run code or
 * start a worker — the posture is the surface, not a sentence in the prompt. It is a turn's
 * profile, not a mode: the chat keeps its mode for the next turn.
 */
export const EXPLAIN_PROFILE: ModeProfile = compile({
  mode: 'agent',
  name: 'explain',
  label: 'Explain',
  selectable: false,
  maxTier: 'read',
  worktree: 'read-only',
  deny: ['vibe_spawn', 'vibe_send'],
  guidance: [
    { text: 'You explain, you do not change: nothing you can call edits a file or a cell, or runs code.' },
    {
      text: 'Answer from the attached facts and what the read-only tools show; say which change would fix it and in which cell, without making it.'
    }
  ]
});

/** The profile a chat in `mode` runs its turns with. */
export function profileOf(mode: ChatMode): ModeProfile {
  const profile = MODE_PROFILES[mode];
  if (!profile)
    throw new RangeError(`Unknown mode "${String(mode)}"; the modes are ${Object.keys(MODE_PROFILES).join(', ')}.`);
  return profile;
}
