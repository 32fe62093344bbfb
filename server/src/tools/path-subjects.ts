/**
 * Policy subjects for path arguments, built by the registry (HARN-5/6) — never the text a
 * tool was given. Every path a tool declares (`ToolDefinition.paths`) goes through
 * workspace confinement first; the policy then sees the canonical workspace-relative path
 * (real path, symlinks resolved) and, when a symlink is on the way, the link's own path
 * too, so `./.env`, `sub/../.env`, `/abs/ws/.env` and `link-to-env` are all `.env`.
 */
import type { PolicyRule } from '../policy/policy.js';
import { evaluatePolicy } from '../policy/policy.js';
import type { ToolTier } from './define-tool.js';
import { resolveWorkspacePath } from './workspace-path.js';

/**
 * The canonical subjects of a call's path arguments.
 * @throws PathRefusedError when one escapes the workspace (the call must not run)
 */
export async function canonicalPathSubjects(workspace: string, inputs: ReadonlyArray<string | undefined>): Promise<string[]> {
  const subjects = new Set<string>();
  for (const input of inputs) {
    if (input === undefined) continue;
    const resolved = await resolveWorkspacePath(workspace, input);
    subjects.add(resolved.relative);
    subjects.add(resolved.lexicalRelative);
  }
  return [...subjects];
}

/**
 * A synchronous "may this tool touch this path?" over rules read once for the call: what
 * the registry hands tools as `ctx.isPathAllowed`, and what `@` mentions and the notebook
 * context ask. Only `allow` passes: a path a rule denies — or would ask about — is
 * withheld from folder walks (nobody approves each file of a grep).
 */
export function createPathGate(rules: readonly PolicyRule[], tool: string, tier: ToolTier): (relative: string) => boolean {
  return (relative) => evaluatePolicy(rules, { tool, tier, subjects: [relative], subjectKind: 'path' }).action === 'allow';
}

/** The note a folder-walking tool appends when the policy withheld files. */
export function withheldNote(count: number): string | undefined {
  if (count === 0) return undefined;
  return `(${count} file${count === 1 ? '' : 's'} withheld: the policy does not allow this tool to read ${count === 1 ? 'it' : 'them'})`;
}
