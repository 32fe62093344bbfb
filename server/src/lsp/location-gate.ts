/**
 * What a language server hands back is judged like a tool's own arguments: a location, a
 * symbol, a diagnostic or a hover can quote any file the server can see — a deny-ruled
 * `.env.py` inside the workspace, a file outside it through an in-repo symlink, a folder a
 * repository's `pyrightconfig.json` `extraPaths` names. The caller (the tool, which knows
 * the actor's policy) supplies the verdict per file; this module only counts and words it.
 */

/**
 * A file's verdict: `show` (inside the workspace, canonically and lexically allowed);
 * `library` (outside the workspace, under an installed-package or the server's own stubs
 * folder — shown only as hover text, never as a location); `withhold` (anything else).
 */
export type LocationVerdict = 'show' | 'library' | 'withhold';

/** Judges the file (absolute path on disk) a server result points into. */
export type LocationGate = (file: string) => Promise<LocationVerdict>;

/** The gate when nothing is judged (tests of the capability alone, the write hook's own file). */
export const OPEN_GATE: LocationGate = async () => 'show';

/** The line a result appends when the gate dropped some of it (as grep says). */
export function withheldLine(count: number, noun = 'location'): string[] {
  if (count === 0) return [];
  return [
    `(${count} ${noun}${count === 1 ? '' : 's'} withheld: outside the workspace or not allowed to this tool by the policy)`
  ];
}
