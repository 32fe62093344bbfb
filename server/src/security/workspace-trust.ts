/**
 * Workspace trust: one switch, like VS Code's. A workspace's own `.cellmate/` files come
 * with the repository — a cloned one's included — so what in them would start a process or
 * grant a permission applies only in a workspace the person trusts: an MCP server's
 * `command` (`mcp.json`), a language server's `command`/`args`/`checker`/`settings`
 * (`lsp.json`), and `allow` rules (`policy.json`; its `ask` and `deny` rules, which only make
 * the gate stricter, always apply). Otherwise the agent's first tool search or `lsp` call in
 * that folder, or any call a prompt-injected model makes, would run or auto-approve
 * whatever the repository says.
 *
 * A workspace is trusted when `$CELLMATE_TRUSTED_WORKSPACES` lists it (paths separated by
 * `:`, or `*` for every one — for a person's own launch script or CI), or when one of the
 * person's own files — `<CELLMATE_HOME>/mcp.json`, `<CELLMATE_HOME>/lsp.json` or the home
 * policy file (`$CELLMATE_POLICY`, default `~/.cellmate/policy.json`) — says
 * `"trustedWorkspaces": ["/real/path", …]` (or `true`). One list trusts it for all three.
 * Never from the workspace's own `.cellmate/` folder. Absent, unreadable or malformed: not trusted.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { cellmateHome, homePolicyFile } from '../config/home-paths.js';

/** The environment variable that trusts workspaces (`:`-separated paths, or `*`). */
export const TRUSTED_WORKSPACES_ENV = 'CELLMATE_TRUSTED_WORKSPACES';

/** The person's own files that may carry `"trustedWorkspaces"`. */
export function trustFiles(env: NodeJS.ProcessEnv): string[] {
  const home = cellmateHome(env);
  return [path.join(home, 'mcp.json'), path.join(home, 'lsp.json'), homePolicyFile(env)];
}

/** Each file's list, re-read only when its stat changes (the policy gate asks on every call). */
const lists = new Map<string, { stamp: string; list: true | string[] }>();

function trustList(file: string): true | string[] {
  const st = statSync(file, { throwIfNoEntry: false });
  if (!st?.isFile()) {
    lists.delete(file);
    return [];
  }
  const stamp = `${st.mtimeMs}:${st.ctimeMs}:${st.size}:${st.ino}`;
  const cached = lists.get(file);
  if (cached?.stamp === stamp) return cached.list;
  let list: true | string[] = [];
  try {
    const value = (JSON.parse(readFileSync(file, 'utf8')) as { trustedWorkspaces?: unknown }).trustedWorkspaces;
    if (value === true) list = true;
    else if (Array.isArray(value))
      list = value.filter((p): p is string => typeof p === 'string').map((p) => path.resolve(p));
  } catch {
    list = [];
  }
  lists.set(file, { stamp, list });
  return list;
}

/** Whether `workspace` is trusted (see the module comment). */
export function isWorkspaceTrusted(workspace: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const wanted = path.resolve(workspace);
  const fromEnv = env[TRUSTED_WORKSPACES_ENV]?.trim();
  if (fromEnv === '*') return true;
  if (fromEnv && fromEnv.split(path.delimiter).some((p) => p.trim() && path.resolve(p.trim()) === wanted)) return true;
  for (const file of trustFiles(env)) {
    // The workspace's own `.cellmate/` files cannot trust it (a home pointed there would make them the person's).
    if (path.resolve(file).startsWith(path.join(wanted, '.cellmate') + path.sep)) continue;
    const list = trustList(file);
    if (list === true || list.includes(wanted)) return true;
  }
  return false;
}

/** The one line that trusts `workspace`, for messages (`file`: the file the message is about). */
export function trustHint(workspace: string, file: string): string {
  return `add "trustedWorkspaces": [${JSON.stringify(path.resolve(workspace))}] to ${file} (the same list in your mcp.json, lsp.json or policy.json trusts it for all three), or start JupyterLab with ${TRUSTED_WORKSPACES_ENV}=${path.resolve(workspace)}`;
}
