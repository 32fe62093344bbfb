/**
 * The one environment scrub for every child process the companion starts (SPEC
 * HARN-5): `shell` commands, private kernels, and later language servers, debug
 * adapters and MCP servers. A child gets the companion's environment minus anything that
 * looks like a credential — provider keys, `*_API_KEY`, `*_TOKEN`, `*_SECRET`,
 * `*PASSWORD*`, cloud credentials, the Jupyter token and `CELLMATE_JUPYTER_*` (which would
 * hand the agent the whole Jupyter API past every gate), URLs with a password in them —
 * except the names a user lets through with `CELLMATE_ENV_ALLOW` (comma- or
 * space-separated names, `*` wildcards allowed, e.g. `HF_TOKEN,MY_APP_*`). Pure.
 */

/** Variables that are secrets whatever their name looks like. */
const SECRET_NAMES = new Set([
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'CELLMATE_OPENAI_COMPATIBLE_API_KEY',
  'CELLMATE_CONFIG',
  'JUPYTER_TOKEN',
  'JPY_API_TOKEN',
  'JUPYTERHUB_API_TOKEN',
  'AWS_ACCESS_KEY_ID',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'PGPASSFILE',
  'DOCKER_AUTH_CONFIG',
  'NETRC'
]);

/** Capabilities, not secret values, that tools rely on (git over ssh, X11). */
const NOT_SECRETS = new Set(['SSH_AUTH_SOCK', 'XAUTHORITY', 'GPG_AGENT_INFO']);

/** Name shapes of secrets (case-insensitive). */
const SECRET_SHAPES: readonly RegExp[] = [
  /(^|_)API_?KEY(_|$)/i,
  /(^|_)TOKEN(_|$)/i,
  /(^|_)SECRET(S)?(_|$)/i,
  /SECRET_?KEY/i,
  /PASSWORD|PASSWD|PASSPHRASE/i,
  /(PRIVATE|ACCESS|SIGNING|ENCRYPTION|MASTER|CLIENT|SERVICE_ACCOUNT)_?KEY/i,
  /CREDENTIAL/i,
  /(^|_)AUTH(_|$)/i,
  /COOKIE/i,
  /^CELLMATE_JUPYTER_/i,
  /^AWS_(SESSION|SECURITY)_/i,
  /^GH_|^GITHUB_PAT/i,
  /(^|_)PAT$/i,
  /(^|_)DSN$/i,
  /WEBHOOK/i
];

/** Whether a variable is scrubbed: by name, or a URL value with a password (`scheme://user:pass@host`). */
export function isSecretVariable(name: string, value?: string): boolean {
  if (NOT_SECRETS.has(name)) return false;
  if (SECRET_NAMES.has(name) || SECRET_SHAPES.some((re) => re.test(name))) return true;
  return value !== undefined && /^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:[^/\s@]+@/i.test(value.trim());
}

/** The allowlist from `CELLMATE_ENV_ALLOW` as matchers. */
export function envAllowList(env: NodeJS.ProcessEnv): RegExp[] {
  return (env.CELLMATE_ENV_ALLOW ?? '')
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((p) => new RegExp(`^${p.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`));
}

/** The result of {@link scrubEnv}. */
export interface ScrubbedEnv {
  env: NodeJS.ProcessEnv;
  /** Names removed (for logs and docs; never their values). */
  removed: string[];
}

/** `base` minus secrets (the allowlist from `base` itself applies), plus `extra`. */
export function scrubEnv(base: NodeJS.ProcessEnv, extra: Record<string, string> = {}): ScrubbedEnv {
  const allow = envAllowList(base);
  const env: NodeJS.ProcessEnv = {};
  const removed: string[] = [];
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined) continue;
    if (isSecretVariable(name, value) && !allow.some((re) => re.test(name))) removed.push(name);
    else env[name] = value;
  }
  return { env: { ...env, ...extra }, removed };
}

/** The environment for a child process: {@link scrubEnv} of `base` (default `process.env`) plus `extra`. */
export function childEnv(base: NodeJS.ProcessEnv = process.env, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return scrubEnv(base, extra).env;
}

/** The values {@link scrubEnv} would remove from `base` (what the redactor must hide). */
export function scrubbedValues(base: NodeJS.ProcessEnv): string[] {
  return scrubEnv(base)
    .removed.map((name) => base[name]!)
    .filter((v) => v.trim() !== '');
}
