/**
 * Interim all-or-nothing writer for staged structural edits, with the contract of the
 * shared multi-file edit (`server/src/edits/`, built for issue #10 and merged later):
 * every file is compared with the exact text its change was computed from before
 * anything is written (a mismatch → nothing written, {@link StaleFileError} naming the
 * file); each file is written to a temporary file beside it and renamed over it; when a
 * later write fails, the files already written get their old text back. It is the one
 * writer `resolve` uses until the shared module lands, then it is replaced by it.
 */
import { randomBytes } from 'node:crypto';
import { chmod, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** One file's change: its text at staging and its new text. */
export interface FileChange {
  /** Workspace-relative path. */
  path: string;
  expected: string;
  next: string;
}

/** A file changed since the change was computed. */
export class StaleFileError extends Error {
  constructor(readonly file: string) {
    super(`${file} changed since the edit was staged`);
    this.name = 'StaleFileError';
  }
}

/** A write failed; every file already written was restored. */
export class ApplyFailedError extends Error {
  constructor(readonly file: string, cause: unknown, readonly restored: string[]) {
    super(`writing ${file} failed (${cause instanceof Error ? cause.message : String(cause)}); ${restored.length ? `restored ${restored.join(', ')}` : 'nothing had been written'}`, { cause });
    this.name = 'ApplyFailedError';
  }
}

/** Fault injection for tests: called before each file is renamed into place. */
export type BeforeRename = (file: string) => void | Promise<void>;

/** Writes every change or none (see the module comment). */
export async function applyAllOrNothing(workspace: string, changes: readonly FileChange[], beforeRename?: BeforeRename): Promise<void> {
  for (const c of changes) {
    const now = await readFile(path.join(workspace, c.path), 'utf8').catch(() => undefined);
    if (now !== c.expected) throw new StaleFileError(c.path);
  }
  const written: FileChange[] = [];
  for (const c of changes) {
    try {
      await replaceFile(path.join(workspace, c.path), c.next, beforeRename && (() => beforeRename(c.path)));
      written.push(c);
    } catch (error) {
      const restored: string[] = [];
      for (const w of written.reverse()) {
        await replaceFile(path.join(workspace, w.path), w.expected).then(() => restored.push(w.path), () => undefined);
      }
      throw new ApplyFailedError(c.path, error, restored.reverse());
    }
  }
}

async function replaceFile(file: string, text: string, before?: () => void | Promise<void>): Promise<void> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(4).toString('hex')}.cellmate-tmp`);
  const mode = (await stat(file).catch(() => undefined))?.mode;
  try {
    await writeFile(tmp, text, { flag: 'wx' });
    if (mode !== undefined) await chmod(tmp, mode & 0o7777);
    await before?.();
    await rename(tmp, file);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}
