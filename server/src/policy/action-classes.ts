/**
 * Action classes (SPEC MODE-2/MODE-7): what kind of world-changing thing a tool call may
 * do. A capability profile refuses classes; a tool declares the classes it may perform.
 */
import { ACTION_CLASSES, type ActionClass } from '../ports/vocabulary.js';

export { ACTION_CLASSES, type ActionClass };

/** Classes that change nothing in the world; every other class is world-changing. */
const HARMLESS_CLASSES: readonly ActionClass[] = ['read', 'network-read', 'ask-user'];

/** The classes read-only modes refuse (MODE-7): everything but reading and asking. */
export const WORLD_CHANGING_CLASSES: readonly ActionClass[] = ACTION_CLASSES.filter(
  (c) => !HARMLESS_CLASSES.includes(c)
);
