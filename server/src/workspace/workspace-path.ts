import { lstat, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { PathRefusedError } from '../base/tool-errors.js';

/** A path argument that passed workspace confinement. */
export interface ResolvedWorkspacePath {
  /** Real absolute path (symlinks resolved) when it exists; otherwise the resolved path. */
  absolute: string;
  /** Path relative to the workspace root, with `/` separators (`.` for the root). */
  relative: string;
  /** Whether something exists at the path. */
  exists: boolean;
  /**
   * The path as written, normalised (`./`, `..` and duplicate `/` resolved) but with
   * symlinks *not* resolved, relative to the workspace: differs from {@link relative}
   * when a symlink is on the way. The policy is asked about both (HARN-5/6).
   */
  lexicalRelative: string;
}

/**
 * Resolves a tool's path argument against the workspace and refuses anything that could
 * reach outside it. Later file tools reuse this; none of them "fixes" a path silently.
 *
 * Rules, in order:
 * 1. The argument must be a non-empty string without NUL bytes.
 * 2. It is resolved against the workspace (relative) or taken as is (absolute). Nothing is
 *    decoded or expanded: `%2e%2e` and `~` are literal file names.
 * 3. Lexically, the result must be the workspace or below it (`..` anywhere that climbs
 *    out, absolute paths elsewhere: refused). Absolute paths may name the workspace either
 *    by the path it was given as or by its real path.
 * 4. The real path (symlinks resolved) must also be inside the workspace's real path.
 *    Symlinks pointing out, dangling symlinks and symlink loops are refused. For a path
 *    that does not exist yet, the nearest existing ancestor must be inside.
 *
 * @param workspace absolute path of the workspace root
 * @param input the path as the model (or user) wrote it
 * @throws PathRefusedError with a message naming the workspace
 */
export async function resolveWorkspacePath(workspace: string, input: unknown): Promise<ResolvedWorkspacePath> {
  if (typeof input !== 'string' || input.length === 0) {
    throw new PathRefusedError(
      `Refused: the path is empty. Give a file path relative to the workspace ${workspace}, e.g. "notes.md".`
    );
  }
  const shown = JSON.stringify(input);
  if (input.includes('\0')) {
    throw new PathRefusedError(
      `Refused: ${shown} contains a NUL byte. Paths must be plain text inside the workspace ${workspace}.`
    );
  }
  const outside = (detail = ''): PathRefusedError =>
    new PathRefusedError(
      `Refused: ${shown} is outside the workspace ${workspace}${detail}. Paths must stay inside the workspace.`
    );

  const givenRoot = path.resolve(workspace);
  const realRoot = await realpath(givenRoot);
  let lexical: string | undefined;
  for (const root of new Set([givenRoot, realRoot])) {
    const candidate = path.resolve(root, input);
    if (isInside(root, candidate)) {
      // Re-anchor on the real root so later checks compare like with like.
      lexical = path.join(realRoot, path.relative(root, candidate));
      break;
    }
    if (!path.isAbsolute(input)) break; // a relative path is judged against the given root only
  }
  if (lexical === undefined) throw outside();

  let real: string;
  try {
    real = await realpath(lexical);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw outsideLink(shown, workspace, 'is a symlink loop');
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    return resolveMissing(lexical, realRoot, shown, workspace, outside);
  }
  if (!isInside(realRoot, real)) throw outside(` (it resolves through a symlink to ${real})`);
  return {
    absolute: real,
    relative: toRelative(realRoot, real),
    exists: true,
    lexicalRelative: toRelative(realRoot, lexical)
  };
}

async function resolveMissing(
  lexical: string,
  realRoot: string,
  shown: string,
  workspace: string,
  outside: (detail?: string) => PathRefusedError
): Promise<ResolvedWorkspacePath> {
  // A dangling symlink at the leaf: refuse rather than guess where it would point.
  const leaf = await lstat(lexical).catch(() => undefined);
  if (leaf?.isSymbolicLink()) {
    const target = await readlink(lexical).catch(() => '?');
    throw outsideLink(shown, workspace, `is a dangling symlink (to ${target})`);
  }
  // Walk up to the nearest existing ancestor; its real path must be inside.
  let ancestor = path.dirname(lexical);
  for (;;) {
    try {
      const real = await realpath(ancestor);
      if (!isInside(realRoot, real)) throw outside(` (its folder resolves through a symlink to ${real})`);
      break;
    } catch (error) {
      if (error instanceof PathRefusedError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') throw outsideLink(shown, workspace, 'goes through a symlink loop');
      const ancestorLink = await lstat(ancestor).catch(() => undefined);
      if (ancestorLink?.isSymbolicLink()) throw outsideLink(shown, workspace, 'goes through a dangling symlink');
      if (ancestor === realRoot || ancestor === path.dirname(ancestor)) break;
      ancestor = path.dirname(ancestor);
    }
  }
  // The nearest existing ancestor may itself be reached through a symlink (inside): the
  // canonical path is that ancestor's real path plus the missing rest.
  const canonical = path.join(await realpath(ancestor).catch(() => ancestor), path.relative(ancestor, lexical));
  return {
    absolute: canonical,
    relative: toRelative(realRoot, canonical),
    exists: false,
    lexicalRelative: toRelative(realRoot, lexical)
  };
}

function outsideLink(shown: string, workspace: string, what: string): PathRefusedError {
  return new PathRefusedError(
    `Refused: ${shown} ${what}, so it cannot be shown to stay inside the workspace ${workspace}. Paths must stay inside the workspace.`
  );
}

/** True when `candidate` is `root` or below it (both absolute, normalised). */
export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  if (rel === '') return true;
  // `..foo` is a legitimate name inside; only a `..` segment climbs out.
  return !path.isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${path.sep}`);
}

function toRelative(root: string, target: string): string {
  const rel = path.relative(root, target);
  return rel === '' ? '.' : rel.split(path.sep).join('/');
}
