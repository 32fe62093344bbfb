import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { isWorkspaceTrusted, trustHint } from '../security/workspace-trust.js';
import { homePolicyFile } from '../config/home-paths.js';
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
 *
 * The workspace's own file comes with the repository: its `ask` and `deny` rules always
 * apply (they only make the gate stricter), its `allow` rules only in a trusted workspace
 * (`security/workspace-trust.ts`) — a cloned repository must not approve its own commands.
 * The home file may carry the trust list, `"trustedWorkspaces"`.
 */
export const policyFileSchema = z.strictObject({
  rules: z
    .array(
      z.strictObject({
        tool: z.string().min(1),
        pattern: z.string().min(1),
        action: z.enum(['allow', 'ask', 'deny'])
      })
    )
    .default([]),
  trustedWorkspaces: z.union([z.literal(true), z.array(z.string())]).optional()
});

export interface PolicyFileSources {
  workspace: string;
  env?: NodeJS.ProcessEnv;
  onProblem?: (file: string, message: string) => void;
}

/** The paths read, in precedence order (later wins). */
export function policyFilePaths(workspace: string, env: NodeJS.ProcessEnv = process.env): string[] {
  return [homePolicyFile(env), path.join(workspace, '.cellmate', 'policy.json')];
}

/** One parsed policy file, keyed by what `stat` says about it; `broken` says why it contributes nothing. */
export interface CachedFile {
  stamp: string;
  rules: PolicyRule[];
  broken?: string;
}

/**
 * Reads both files; edits apply to the next tool call. A file is re-read and re-parsed only
 * when its `stat` (mtime, ctime, size, inode) changed, so the per-call cost on the registry's
 * hot path is two `stat`s rather than two reads, parses and (for missing files) exceptions.
 * Pass the same `cache` across calls to get that; without one every call reads afresh.
 */
export async function loadPolicyRules(
  sources: PolicyFileSources,
  cache: Map<string, CachedFile> = new Map()
): Promise<PolicyRule[]> {
  const rules: PolicyRule[] = [];
  const [homeFile, workspaceFile] = policyFilePaths(sources.workspace, sources.env) as [string, string];
  for (const file of [homeFile, workspaceFile]) {
    const st = statSync(file, { throwIfNoEntry: false });
    if (!st) {
      cache.delete(file);
      continue;
    }
    // The workspace file's allow rules depend on trust, which the person can change meanwhile.
    const restricted = file === workspaceFile && !isWorkspaceTrusted(sources.workspace, sources.env ?? process.env);
    const stamp = `${st.mtimeMs}:${st.ctimeMs}:${st.size}:${st.ino}:${restricted ? 'untrusted' : 'trusted'}`;
    const cached = cache.get(file);
    if (cached?.stamp === stamp) {
      rules.push(...cached.rules);
      continue;
    }
    const read = await parsePolicyFile(file, sources.onProblem);
    let parsed = read.rules;
    if (restricted) {
      const allows = parsed.filter((r) => r.action === 'allow');
      if (allows.length) {
        parsed = parsed.filter((r) => r.action !== 'allow');
        sources.onProblem?.(
          file,
          `${allows.length} "allow" rule${allows.length === 1 ? '' : 's'} (${allows
            .slice(0, 3)
            .map((r) => `${r.tool} ${r.pattern}`)
            .join(
              '; '
            )}${allows.length > 3 ? '; …' : ''}) not applied: a workspace's own policy file may only ask or deny unless you trust the workspace — ${trustHint(sources.workspace, homeFile)}`
        );
      }
    }
    cache.set(file, { stamp, rules: parsed, ...(read.broken ? { broken: read.broken } : {}) });
    rules.push(...parsed);
  }
  return rules;
}

/**
 * The rules of one file; a malformed or unreadable file contributes none, is reported, and
 * says why in `broken`.
 */
async function parsePolicyFile(
  file: string,
  onProblem?: (file: string, message: string) => void
): Promise<{ rules: PolicyRule[]; broken?: string }> {
  const broken = (message: string) => {
    onProblem?.(file, message);
    return { rules: [], broken: message };
  };
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    // Gone between stat and read, or unreadable (a directory, no permission).
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { rules: [] };
    return broken(error instanceof Error ? error.message : String(error));
  }
  try {
    const parsed = policyFileSchema.safeParse(JSON.parse(text));
    if (parsed.success) return { rules: parsed.data.rules };
    return broken(
      z
        .prettifyError(parsed.error)
        .replace(/\n\s*→/g, ' →')
        .replace(/✖ /g, '')
        .replace(/\n/g, '; ')
    );
  } catch (error) {
    return broken(error instanceof Error ? error.message : String(error));
  }
}
