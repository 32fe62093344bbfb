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

/** Classes that change nothing in the world; every other class is world-changing. */
const HARMLESS_CLASSES: readonly ActionClass[] = ['read', 'network-read', 'ask-user'];

/** The classes read-only modes refuse (MODE-7): everything but reading and asking. */
export const WORLD_CHANGING_CLASSES: readonly ActionClass[] = ACTION_CLASSES.filter((c) => !HARMLESS_CLASSES.includes(c));
