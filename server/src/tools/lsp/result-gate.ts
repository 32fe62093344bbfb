/**
 * The verdict on each file a language server's answer points into (`lsp/location-gate.ts`),
 * built from the call's own gate: the file is canonicalised (real path, symlinks resolved)
 * and must stay inside the workspace, and both its canonical and its lexical
 * workspace-relative paths must be allowed to this tool — so `link-to-env.py` is judged as
 * `.env.py` too. Outside the workspace only an installed package's or a server's own stub
 * file counts as a library (its hover may be shown; its location never is).
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import type { LocationGate, LocationVerdict } from '../../lsp/location-gate.js';
import { pathAllowed, type ToolContext } from '../../gate/define-tool.js';
import { PathRefusedError } from '../../base/tool-errors.js';
import { resolveWorkspacePath } from '../../workspace/workspace-path.js';
import { LIBRARY_SEGMENTS } from '../../gate/withheld-values.js';

/** A gate for one call (verdicts cached per file for the call). */
export function resultGate(ctx: Pick<ToolContext, 'workspace' | 'isPathAllowed'>): LocationGate {
  const cache = new Map<string, Promise<LocationVerdict>>();
  return (file) => {
    let verdict = cache.get(file);
    if (!verdict) {
      verdict = judge(ctx, file);
      cache.set(file, verdict);
    }
    return verdict;
  };
}

async function judge(ctx: Pick<ToolContext, 'workspace' | 'isPathAllowed'>, file: string): Promise<LocationVerdict> {
  try {
    const r = await resolveWorkspacePath(ctx.workspace, file);
    return pathAllowed(ctx, r.relative) && pathAllowed(ctx, r.lexicalRelative) ? 'show' : 'withhold';
  } catch (error) {
    if (!(error instanceof PathRefusedError)) throw error;
  }
  const real = await realpath(file).catch(() => undefined);
  if (!real) return 'withhold';
  const parts = real.split(path.sep);
  const typescriptLib =
    parts.some((p, i) => p === 'node_modules' && parts[i + 1] === 'typescript' && parts[i + 2] === 'lib') ||
    parts.some((p, i) => p === 'node_modules' && parts[i + 1] === '@types');
  return typescriptLib || parts.some((p) => LIBRARY_SEGMENTS.has(p)) ? 'library' : 'withhold';
}
