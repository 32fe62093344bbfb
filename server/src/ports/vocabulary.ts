/**
 * The words the registry (`tools/`) and the services around it (`policy/`, `questions/`,
 * `audit/`) share — tiers, action classes, capability profiles, policy rules. A leaf
 * module: it imports nothing of Cellmate's, so both sides depend on it and never on each
 * other's internals (no cycle in the import graph; `scripts/test` checks).
 */

/**
 * What a tool may do, which decides which surfaces *see* it (SPEC TIER-1): `read` has no
 * side effects, `write` changes files, `exec` starts or controls a process.
 */
export type ToolTier = 'read' | 'write' | 'exec';

/**
 * Action classes (SPEC MODE-2/MODE-7): what kind of world-changing thing a tool call may
 * do. A capability profile refuses classes; a tool declares the classes it may perform.
 */
export const ACTION_CLASSES = [
  /** Reads files or state; never refused. */
  'read',
  /** Reads from the network (never blocked by read-only modes, MODE-7). */
  'network-read',
  /** Asks the person a question (pinned). */
  'ask-user',
  /** Creates or changes a file inside the workspace. */
  'write-file',
  'delete-file',
  'write-outside-worktree',
  'commit',
  'push',
  'publish-pr',
  'external-tracker',
  'install-package',
  'run-process',
  'change-structure',
  'sandbox-control'
] as const;

export type ActionClass = (typeof ACTION_CLASSES)[number];

/**
 * A capability profile (SPEC MODE-2): the one object every enforcement layer of a surface
 * is projected from (`policy/profile.ts` projects it).
 */
export interface CapabilityProfile {
  /** Shown in refusals, e.g. `plan`, `review`, `agent`. */
  name: string;
  /** Highest tier on the surface; `exec` sees everything (TIER-2). */
  maxTier: ToolTier;
  /** When set, restricts `write`/`exec` tools to these names; `read` tools stay (MODE-2a). */
  allow?: readonly string[];
  /** Never on the surface (pinned tools excepted, MODE-6). */
  deny?: readonly string[];
  /** A tool performing any of these classes is off the surface (MODE-7). */
  refusedActionClasses?: readonly ActionClass[];
}

/**
 * Which tools a surface (a mode, a sub-agent) may see (TIER-2/MODE-2). A full
 * {@link CapabilityProfile}; `{ maxTier }` alone still works.
 */
export type ToolSurface = Pick<CapabilityProfile, 'maxTier'> & Partial<CapabilityProfile>;

/** What a tool is, as far as a surface is concerned. */
export interface SurfaceTool {
  name: string;
  tier: ToolTier;
  actionClasses?: readonly ActionClass[];
}

/** A policy rule's answer (SPEC HARN-6). */
export type PolicyAction = 'allow' | 'ask' | 'deny';

/** One policy rule (after opencode's `permission/next.ts`); last match wins. */
export interface PolicyRule {
  /** Tool name or glob (`*` any run of characters, `?` one): `shell`, `*`, `lsp_*`. */
  tool: string;
  /**
   * Glob over the call's subject: the command for `shell`, the canonical workspace-relative
   * path for file tools, `*` for tools without one. `*` matches across `/` too. Against
   * paths see `policy/policy.ts` `pathPatternMatches` (folders cover their contents, a name
   * without `/` matches in any folder, case-insensitive).
   */
  pattern: string;
  action: PolicyAction;
}
