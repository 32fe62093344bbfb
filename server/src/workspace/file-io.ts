import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ToolInputError } from '../base/tool-errors.js';
import { currentWriteRecorder } from './write-capture.js';
import { resolveWorkspacePath, type ResolvedWorkspacePath } from './workspace-path.js';

/**
 * Shared file plumbing of the write-tier tools: confinement, then atomic replace
 * (temp file + rename) so a crash never leaves half a file.
 */
export async function writeFileAtomic(absolute: string, content: string | Uint8Array): Promise<void> {
  await currentWriteRecorder()?.beforeFile(absolute);
  await mkdir(path.dirname(absolute), { recursive: true });
  const mode = await stat(absolute).then(
    (s) => s.mode & 0o777,
    () => undefined
  );
  const temp = path.join(
    path.dirname(absolute),
    `.${path.basename(absolute)}.cellmate-${randomBytes(4).toString('hex')}.tmp`
  );
  try {
    await writeFile(temp, content, {
      ...(typeof content === 'string' ? { encoding: 'utf8' as const } : {}),
      ...(mode !== undefined ? { mode } : {})
    });
    await rename(temp, absolute);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/** Removes a file (the one delete path of the write-tier tools: a checkpoint keeps it first). */
export async function removeFile(absolute: string): Promise<void> {
  await currentWriteRecorder()?.beforeFile(absolute);
  await rm(absolute);
}

/**
 * Removes the folders from `from` up to `top` that are empty, deepest first; stops at the
 * first that is not (rmdir refuses a folder with anything in it, so nothing is lost).
 */
export async function removeEmptyFolders(from: string, top: string): Promise<void> {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const removed = await rmdir(dir).then(
      () => true,
      () => false
    );
    if (!removed || dir === top || path.dirname(dir) === dir) return;
  }
}

/** Resolves a path for writing: inside the workspace and not a directory. */
export async function resolveForWrite(workspace: string, input: string): Promise<ResolvedWorkspacePath> {
  const resolved = await resolveWorkspacePath(workspace, input);
  if (resolved.exists && (await stat(resolved.absolute)).isDirectory()) {
    throw new ToolInputError(`"${input}" is a directory; give the path of a file.`);
  }
  return resolved;
}

/** Counts lines the way `read` numbers them. */
export function countLines(text: string): number {
  if (text.length === 0) return 0;
  const n = text.split('\n').length;
  return text.endsWith('\n') ? n - 1 : n;
}
