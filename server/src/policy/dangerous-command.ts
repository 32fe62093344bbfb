/**
 * The dangerous-command floor for `shell` (SPEC HARN-6): commands that always ask the
 * person, even when the policy allows them. It works on the parsed command line
 * (`shell-analysis.ts`: tree-sitter-bash, wrappers and paths resolved, nested scripts
 * followed) with the rules of `dangerous-rules.ts`; what cannot be known before running —
 * a line that does not parse, a command name or script computed at run time, text piped
 * into a shell — asks too (fail-safe). It is a floor, not the only wall: the policy, the
 * tier surface and confinement of the working directory come first. Pure.
 */
import { analyzeShell } from './shell-analysis.js';

/** The reason a command needs a person's approval regardless of policy, or `undefined`. */
export function dangerousCommandReason(command: string): string | undefined {
  return analyzeShell(command).dangers[0];
}

/** Every reason the floor found (for messages and tests); empty when there is none. */
export function dangerousCommandReasons(command: string): string[] {
  return [...new Set(analyzeShell(command).dangers)];
}
