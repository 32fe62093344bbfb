/**
 * Where the person's own Cellmate files live (never the workspace's): one definition for
 * every reader, so the files a setting is read from and the files workspace trust is read
 * from cannot drift apart.
 */
import os from 'node:os';
import path from 'node:path';

/** `$CELLMATE_HOME`, default `~/.cellmate` (`lsp.json`, `mcp.json`, `mcp-approved.json`). */
export function cellmateHome(env: NodeJS.ProcessEnv): string {
  return env.CELLMATE_HOME ?? path.join(env.HOME ?? os.homedir(), '.cellmate');
}

/** The home policy file: `$CELLMATE_POLICY`, default `~/.cellmate/policy.json`. */
export function homePolicyFile(env: NodeJS.ProcessEnv): string {
  return env.CELLMATE_POLICY?.trim() || path.join(env.HOME || os.homedir(), '.cellmate', 'policy.json');
}
