import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { PolicyRule } from './policy.js';

/**
 * Policy files (SPEC HARN-6). Rules are concatenated in this order and the last match
 * wins, so later sources override earlier ones:
 *
 * 1. `~/.cellmate/policy.json` (the user's own defaults; `$CELLMATE_POLICY` overrides the path)
 * 2. `<workspace>/.cellmate/policy.json` (this project)
 * 3. "Always for this pattern" answers given in this server's lifetime
 *
 * Format: `{"rules": [{"tool": "shell", "pattern": "git status*", "action": "allow"}]}`.
 * A file that is missing contributes nothing; a malformed file contributes nothing and is
 * reported through `onProblem` (the tier defaults still apply: read allow, write/exec ask).
 */
export const policyFileSchema = z.strictObject({
  rules: z.array(
    z.strictObject({
      tool: z.string().min(1),
      pattern: z.string().min(1),
      action: z.enum(['allow', 'ask', 'deny'])
    })
  )
});

export interface PolicyFileSources {
  workspace: string;
  env?: NodeJS.ProcessEnv;
  onProblem?: (file: string, message: string) => void;
}

/** The paths read, in precedence order (later wins). */
export function policyFilePaths(workspace: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const home = env.CELLMATE_POLICY?.trim() || path.join(env.HOME || os.homedir(), '.cellmate', 'policy.json');
  return [home, path.join(workspace, '.cellmate', 'policy.json')];
}

/** Reads both files (fresh on every call, so edits apply to the next tool call). */
export async function loadPolicyRules(sources: PolicyFileSources): Promise<PolicyRule[]> {
  const rules: PolicyRule[] = [];
  for (const file of policyFilePaths(sources.workspace, sources.env)) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      continue;
    }
    try {
      const parsed = policyFileSchema.safeParse(JSON.parse(text));
      if (parsed.success) rules.push(...parsed.data.rules);
      else sources.onProblem?.(file, parsed.error.message);
    } catch (error) {
      sources.onProblem?.(file, error instanceof Error ? error.message : String(error));
    }
  }
  return rules;
}
