import type { ToolTier } from '../tools/define-tool.js';

/**
 * Policy as data (SPEC HARN-6), after opencode's `permission/next.ts`: rules
 * `{tool, pattern, action}`, last match wins, a default per tier when none matches.
 * {@link evaluatePolicy} is pure; loading the rules lives in `policy-file.ts`.
 */
export type PolicyAction = 'allow' | 'ask' | 'deny';

export interface PolicyRule {
  /** Tool name or glob (`*` any run of characters, `?` one): `shell`, `*`, `lsp_*`. */
  tool: string;
  /**
   * Glob over the call's subject: the command for `shell`, the workspace-relative path for
   * file tools, `*` for tools without one. `*` matches across `/` too.
   */
  pattern: string;
  action: PolicyAction;
}

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
    if (globMatch(rule.tool, request.tool) && globMatch(rule.pattern, subject)) {
      return { action: rule.action, source: 'rule', rule, subject };
    }
  }
  return { action: DEFAULT_TIER_ACTIONS[request.tier], source: 'default', subject };
}

/**
 * `*` = any run of characters (including `/` and none), `?` = one character, a backslash
 * makes the next character literal (so `\*` is a star); everything else literal.
 */
export function globMatch(pattern: string, text: string): boolean {
  let source = '^';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\' && i + 1 < pattern.length) source += escapeRe(pattern[++i]!);
    else if (ch === '*') source += '[\\s\\S]*';
    else if (ch === '?') source += '[\\s\\S]';
    else source += escapeRe(ch);
  }
  return new RegExp(`${source}$`).test(text);
}

function escapeRe(ch: string): string {
  return ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** A glob matching exactly `text` (its `*`, `?` and backslashes escaped). */
export function literalGlob(text: string): string {
  return text.replace(/[*?\\]/g, '\\$&');
}

/** A rule that covers "always for this pattern": the exact subject, for this tool. */
export function ruleForAlways(tool: string, subject: string): PolicyRule {
  // Exactly this subject: a `*` in a command must not widen the rule to any command.
  return { tool, pattern: literalGlob(subject), action: 'allow' };
}
