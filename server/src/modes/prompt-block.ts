import type { SurfaceTool } from '../ports/vocabulary.js';
import type { ModeProfile } from './profiles.js';

/**
 * A mode's system-prompt block (SPEC MODE-2): generated from the tools actually on the
 * profile's surface plus the mode's hand-written guidance — a guidance line that names a
 * tool appears only when that tool is on the surface, so the prompt cannot send the model
 * to a tool the gate would refuse. `surface` is `registry.list(profile)` (deferred tools
 * included: `tool_search` reaches them). Pure.
 */
export function modePromptBlock(profile: ModeProfile, surface: readonly SurfaceTool[]): string {
  const names = new Set(surface.map((t) => t.name));
  const posture =
    profile.worktree === 'read-only'
      ? 'This mode is read-only: tools that change files, run processes or reach outside the workspace are refused.'
      : "This mode may change the workspace: writes and runs still go through the user's policy and approvals.";
  const lines = profile.guidance.filter((g) => (g.needs ?? []).every((n) => names.has(n))).map((g) => `- ${g.text}`);
  const listed = [...names].sort();
  return [
    `## Mode: ${profile.label}`,
    posture,
    `Tools on this mode's surface: ${listed.length ? listed.map((n) => `\`${n}\``).join(', ') : '(none)'}.`,
    ...lines
  ].join('\n');
}
