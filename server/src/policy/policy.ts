import type { PolicyAction, PolicyRule, ToolTier } from '../ports/vocabulary.js';

/**
 * Policy as data (SPEC HARN-6), after opencode's `permission/next.ts`: rules
 * `{tool, pattern, action}`, last match wins, a default per tier when none matches.
 * {@link evaluatePolicy} is pure; loading the rules lives in `policy-file.ts`.
 */
export type { PolicyAction, PolicyRule } from '../ports/vocabulary.js';

/** The default action when no rule matches (documented in the README). */
export const DEFAULT_TIER_ACTIONS: Readonly<Record<ToolTier, PolicyAction>> = {
  read: 'allow',
  write: 'ask',
  exec: 'ask'
};

/**
 * Built-in rules, before any policy file (so any file can override them). `eval` runs
 * code in the chat's own kernel — the notebook agent's main action — and is allowed by
 * default; the exec default (ask) still covers `shell`.
 */
export const BUILTIN_RULES: readonly PolicyRule[] = [{ tool: 'eval', pattern: '*', action: 'allow' }];

/** What is being decided. */
export interface PolicyRequest {
  tool: string;
  tier: ToolTier;
  /** The subjects of the call (one command, or the paths a patch touches); empty = `*`. */
  subjects: readonly string[];
  /**
   * `path`: the subjects are canonical workspace-relative paths (built by the registry from
   * the tool's declared path arguments) and match with {@link pathPatternMatches};
   * `text` (default): plain glob over the text (shell commands).
   */
  subjectKind?: 'path' | 'text';
}

/** The outcome, tagged (after codex `approvals.ts`). */
export type PolicyDecision =
  | { action: PolicyAction; source: 'rule'; rule: PolicyRule; subject: string }
  | { action: PolicyAction; source: 'default'; subject: string };

const STRICTNESS: Record<PolicyAction, number> = { allow: 0, ask: 1, deny: 2 };

/**
 * Decides one call: each subject is matched against the rules (last match wins, else the
 * tier default); with several subjects the strictest outcome wins (deny > ask > allow).
 */
export function evaluatePolicy(rules: readonly PolicyRule[], request: PolicyRequest): PolicyDecision {
  const subjects = request.subjects.length > 0 ? request.subjects : ['*'];
  let worst: PolicyDecision | undefined;
  for (const subject of subjects) {
    const decision = decideOne(rules, request, subject);
    if (!worst || STRICTNESS[decision.action] > STRICTNESS[worst.action]) worst = decision;
  }
  return worst!;
}

function decideOne(rules: readonly PolicyRule[], request: PolicyRequest, subject: string): PolicyDecision {
  for (let i = rules.length - 1; i >= 0; i--) {
    const rule = rules[i]!;
    const matches =
      request.subjectKind === 'path' && subject !== '*'
        ? pathPatternMatches(rule.pattern, subject)
        : globMatch(rule.pattern, subject);
    if (globMatch(rule.tool, request.tool) && matches) {
      return { action: rule.action, source: 'rule', rule, subject };
    }
  }
  return { action: DEFAULT_TIER_ACTIONS[request.tier], source: 'default', subject };
}

/**
 * `*` = any run of characters (including `/` and none), `?` = one character, a backslash
 * makes the next character literal (so `\*` is a star); everything else literal.
 */
export function globMatch(pattern: string, text: string, options: { caseInsensitive?: boolean } = {}): boolean {
  let source = '^';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\' && i + 1 < pattern.length) source += escapeRe(pattern[++i]!);
    else if (ch === '*') source += '[\\s\\S]*';
    else if (ch === '?') source += '[\\s\\S]';
    else source += escapeRe(ch);
  }
  return new RegExp(`${source}$`, options.caseInsensitive ? 'i' : '').test(text);
}

/**
 * Whether a rule's pattern covers a canonical workspace-relative path (HARN-5/6), the way
 * a user reading `.gitignore`-like rules expects:
 * - the pattern is normalised first: leading `./` and trailing `/` dropped (`./secrets/`
 *   is `secrets`);
 * - a folder covers what is inside it: `secrets` and `secrets/*` both match
 *   `secrets/keys/a.pem`, and `/.` (the workspace root) matches every path;
 * - a pattern without `/` matches a file or folder of that name in any folder: `.env`
 *   matches `.env`, `app/.env` and everything under a folder named `.env`; a leading `/`
 *   anchors it at the workspace root (`/notes.md` is only the top-level one);
 * - case-insensitive: `.env` also covers `.ENV` (a deny must not hinge on case; on
 *   case-insensitive filesystems they are the same file anyway).
 * Plain glob otherwise (`*` any run of characters including `/`, `?` one character).
 */
export function pathPatternMatches(pattern: string, subject: string): boolean {
  let p = pattern.trim();
  while (p.startsWith('./')) p = p.slice(2);
  // A leading `/` anchors at the workspace root (as in .gitignore): only that path.
  const anchored = p.startsWith('/') && p.length > 1;
  if (anchored) p = p.replace(/^\/+/, '');
  while (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  // `/.` is the workspace root folder ("Always" on a walk of the whole workspace remembers
  // it): like any folder it covers what is inside it.
  if (p === '' || p === '.') return (anchored && p === '.') || subject === '.';
  const ci = { caseInsensitive: true };
  const segments = subject.split('/');
  // The path itself and each folder above it (a folder rule covers its contents).
  for (let i = segments.length; i >= 1; i--) {
    if (globMatch(p, segments.slice(0, i).join('/'), ci)) return true;
  }
  if (!anchored && !p.includes('/')) return segments.some((s) => globMatch(p, s, ci));
  return false;
}

function escapeRe(ch: string): string {
  return ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** A glob matching exactly `text` (its `*`, `?` and backslashes escaped). */
export function literalGlob(text: string): string {
  return text.replace(/[*?\\]/g, '\\$&');
}

/** A rule that covers "always for this pattern": the exact subject, for this tool. */
export function ruleForAlways(tool: string, subject: string, kind: 'path' | 'text' = 'text'): PolicyRule {
  // Exactly this subject: a `*` in a command must not widen the rule to any command; a
  // path is anchored at the workspace root (`/a.txt`), so it does not cover `x/a.txt`.
  return { tool, pattern: kind === 'path' ? `/${literalGlob(subject)}` : literalGlob(subject), action: 'allow' };
}
