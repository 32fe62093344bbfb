/**
 * What the policy is asked about a call (HARN-5/6), built by the registry — never the
 * text a tool was given. Every path a tool declares (`ToolDefinition.paths`) goes through
 * workspace confinement first; the policy then sees the canonical workspace-relative path
 * (real path, symlinks resolved) and, when a symlink is on the way, the link's own path
 * too, so `./.env`, `sub/../.env`, `/abs/ws/.env` and `link-to-env` are all `.env`.
 */
import type { PolicyDecision, PolicyRule } from '../policy/policy.js';
import { evaluatePolicy, ruleForAlways } from '../policy/policy.js';
import type { PolicyContext, ToolDefinition, ToolTier } from './define-tool.js';
import { resolveWorkspacePath } from '../workspace/workspace-path.js';

/**
 * The canonical subjects of a call's path arguments.
 * @throws PathRefusedError when one escapes the workspace (the call must not run)
 */
export async function canonicalPathSubjects(
  workspace: string,
  inputs: ReadonlyArray<string | undefined>
): Promise<string[]> {
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
 * How far a call reaches into the files it walks or is handed back (grep's matches,
 * ast_edit's rewrites, a language server's rename): `rules` when the rules alone let the
 * call through, `answered` when a person approved it (a card's "once" or "always", or their
 * own click on a card).
 */
export type PathReach = 'rules' | 'answered';

/**
 * A synchronous "may this tool touch this path?" over rules read once for the call: what
 * the registry hands tools as `ctx.isPathAllowed`, and what `@` mentions and the notebook
 * context ask. Reached by the rules alone, only `allow` passes: a path a rule denies — or
 * would ask about — is withheld from folder walks (nobody approves each file of a grep).
 * Once a person has approved the call, their answer covers every file inside it, so only
 * a `deny` rule withholds one: the person approved the call, not an exception to a deny.
 */
export function createPathGate(
  rules: readonly PolicyRule[],
  tool: string,
  tier: ToolTier,
  reach: PathReach = 'rules'
): (relative: string) => boolean {
  return (relative) => {
    const action = evaluatePolicy(rules, { tool, tier, subjects: [relative], subjectKind: 'path' }).action;
    return reach === 'answered' ? action !== 'deny' : action === 'allow';
  };
}

/**
 * The rules an "Always" answer adds for one judgement: one per subject the rules did not
 * already allow, so a call over several files (a `resolve` of a multi-file edit) is covered
 * next time for every file it asked about, not only the first.
 */
export function rulesForAlways(rules: readonly PolicyRule[], judgement: Judgement): PolicyRule[] {
  const subjects = judgement.subjects.length > 0 ? judgement.subjects : ['*'];
  const asked = subjects.filter(
    (subject) =>
      evaluatePolicy(rules, {
        tool: judgement.tool,
        tier: judgement.tier,
        subjects: [subject],
        subjectKind: judgement.kind
      }).action !== 'allow'
  );
  // A dangerous command asks although a rule allows it: "always" then names the command itself.
  const chosen = asked.length > 0 ? asked : subjects;
  return [...new Set(chosen)].map((subject) => ruleForAlways(judgement.tool, subject, judgement.kind));
}

/** A folder walk's outcome: `withheld` when it came out empty and the policy withheld files. */
export function emptyOutcome(withheld: number): { outcome?: 'withheld' } {
  return withheld > 0 ? { outcome: 'withheld' } : {};
}

/** The note a folder-walking tool appends when the policy withheld files. */
export function withheldNote(count: number): string | undefined {
  if (count === 0) return undefined;
  return `(${count} file${count === 1 ? '' : 's'} withheld: the policy does not allow this tool to read ${count === 1 ? 'it' : 'them'})`;
}

/** One policy question about a call: the tool itself, or what it also acts as (`alsoJudgedAs`). */
export interface Judgement {
  tool: string;
  tier: ToolTier;
  subjects: string[];
  kind: 'path' | 'text';
  /** The dangerous-command floor's reason, when it applies (always asks). */
  danger?: string;
  /** Why the call is judged as another tool, for messages and the approval card. */
  why?: string;
}

/**
 * Judges one call: canonical path subjects of the declared path arguments plus the
 * tool's other subjects, and each extra judgement; the strictest wins (deny > ask or
 * floor > allow; the tool itself on ties). `judgements` lists them all (the Auto record).
 * @throws PathRefusedError when a path argument escapes the workspace
 */
export async function judgeCall(
  definition: ToolDefinition,
  args: unknown,
  ctx: PolicyContext,
  rules: readonly PolicyRule[]
): Promise<{ judgement: Judgement; decision: PolicyDecision; judgements: Judgement[] }> {
  const paths = definition.paths ? await canonicalPathSubjects(ctx.workspace, definition.paths(args)) : [];
  const tier = definition.policyTier?.(args, ctx) ?? definition.tier;
  const judgements: Judgement[] = [
    {
      tool: definition.name,
      tier,
      subjects: [...paths, ...(definition.policySubjects?.(args, ctx) ?? [])],
      kind: paths.length > 0 ? 'path' : 'text',
      danger: definition.dangerReason?.(args)
    },
    ...(definition.alsoJudgedAs?.(args) ?? []).map((j) => ({ ...j, kind: 'text' as const }))
  ];
  return strictestJudgement(rules, judgements);
}

/**
 * The strictest of a call's judgements under the rules (deny > ask or floor > allow; the
 * first — the tool itself — on ties), with its decision. Pure.
 */
export function strictestJudgement(
  rules: readonly PolicyRule[],
  judgements: Judgement[]
): { judgement: Judgement; decision: PolicyDecision; judgements: Judgement[] } {
  const judged = judgements.map((judgement) => ({
    judgement,
    decision: evaluatePolicy(rules, {
      tool: judgement.tool,
      tier: judgement.tier,
      subjects: judgement.subjects,
      subjectKind: judgement.kind
    })
  }));
  const strictness = ({ judgement, decision }: (typeof judged)[number]): number =>
    decision.action === 'deny' ? 2 : decision.action === 'ask' || judgement.danger ? 1 : 0;
  return { ...judged.reduce((worst, next) => (strictness(next) > strictness(worst) ? next : worst)), judgements };
}

/**
 * What "Always" would allow, in words for the approval card: the tool and the subjects its
 * rules cover (`write on notes.md`, `shell: git status`, `debug: evaluate in dbg/prog.py`),
 * never the rule's escaped glob.
 */
export function describeAlways(judgement: Pick<Judgement, 'tool' | 'kind'>, rules: readonly PolicyRule[]): string {
  const subjects = rules.map((r) => unescapeGlob(judgement.kind === 'path' ? r.pattern.replace(/^\//, '') : r.pattern));
  if (subjects.length === 1 && subjects[0] === '*') return `${judgement.tool} (calls with no file or command)`;
  if (judgement.kind === 'text') return `${judgement.tool}: ${subjects.join(', ')}`;
  return `${judgement.tool} on ${subjects.map((s) => describeSubject('path', s)).join(', ')}`;
}

/** A subject in words for the approval card: the workspace root (`.`) is "the whole workspace". */
export function describeSubject(kind: Judgement['kind'], subject: string): string {
  return kind === 'path' && subject === '.' ? 'the whole workspace' : subject;
}

/** The literal text of a pattern built by `literalGlob`. */
function unescapeGlob(pattern: string): string {
  return pattern.replace(/\\([*?\\])/g, '$1');
}
