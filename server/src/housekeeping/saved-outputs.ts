import { readdir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';

/**
 * Bounds `.cellmate/outputs/` (full tool outputs saved by output shaping): the folder's
 * total size stays under a cap (`CELLMATE_OUTPUTS_MAX_BYTES`, default 200 MiB), oldest
 * files removed first; a chat's files (named `<chatId>--…`) are removed with the chat.
 */

/** Default cap of `.cellmate/outputs/`. */
export const DEFAULT_OUTPUTS_MAX_BYTES = 200 * 1024 * 1024;
/** Pruning removes files until the folder is at most this fraction of the cap (so it runs rarely). */
const PRUNE_TO = 0.8;

/** Separates the chat id from the rest of a saved output's file name. */
export const CHAT_PREFIX_SEPARATOR = '--';

/** Bytes written per folder since its last scan; a scan runs only when they could exceed the cap. */
const sinceScan = new Map<string, { bytes: number; known: number }>();

/** The cap from `CELLMATE_OUTPUTS_MAX_BYTES` (a positive integer), else the default. */
export function outputsMaxBytes(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env.CELLMATE_OUTPUTS_MAX_BYTES);
  return Number.isInteger(value) && value > 0 ? value : DEFAULT_OUTPUTS_MAX_BYTES;
}

/**
 * Notes that `bytes` were saved in `directory` and, when the folder may be over `maxBytes`,
 * removes its oldest files until it is at most 80 % of it. Never throws (a file that
 * vanished meanwhile is skipped). Returns the names removed.
 */
export async function noteSavedOutput(
  directory: string,
  bytes: number,
  maxBytes = outputsMaxBytes()
): Promise<string[]> {
  const tracked = sinceScan.get(directory) ?? { bytes: 0, known: Number.POSITIVE_INFINITY };
  tracked.bytes += bytes;
  sinceScan.set(directory, tracked);
  if (tracked.known !== Number.POSITIVE_INFINITY && tracked.known + tracked.bytes <= maxBytes) return [];
  const files = await listFiles(directory);
  let total = files.reduce((n, f) => n + f.size, 0);
  const removed: string[] = [];
  if (total > maxBytes) {
    for (const file of files.sort((a, b) => a.mtimeMs - b.mtimeMs || a.name.localeCompare(b.name))) {
      if (total <= maxBytes * PRUNE_TO) break;
      if (
        await unlink(path.join(directory, file.name)).then(
          () => true,
          () => false
        )
      ) {
        total -= file.size;
        removed.push(file.name);
      }
    }
  }
  sinceScan.set(directory, { bytes: 0, known: total });
  return removed;
}

/** Removes the saved outputs of one chat. Never throws. Returns the names removed. */
export async function removeChatOutputs(directory: string, chatId: string): Promise<string[]> {
  const prefix = `${chatId}${CHAT_PREFIX_SEPARATOR}`;
  const names = (await readdir(directory).catch(() => [] as string[])).filter((n) => n.startsWith(prefix));
  const removed: string[] = [];
  for (const name of names)
    if (
      await unlink(path.join(directory, name)).then(
        () => true,
        () => false
      )
    )
      removed.push(name);
  sinceScan.delete(directory); // rescan next time
  return removed;
}

async function listFiles(directory: string): Promise<Array<{ name: string; size: number; mtimeMs: number }>> {
  const names = await readdir(directory).catch(() => [] as string[]);
  const out: Array<{ name: string; size: number; mtimeMs: number }> = [];
  for (const name of names) {
    const info = await stat(path.join(directory, name)).catch(() => undefined);
    if (info?.isFile()) out.push({ name, size: info.size, mtimeMs: info.mtimeMs });
  }
  return out;
}
