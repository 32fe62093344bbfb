import { readFileSync, statSync, type Stats } from 'node:fs';

/**
 * Small text files read again only when they change (instructions, skills, custom
 * commands: looked up on every turn, edited now and then). A file counts as changed when
 * its modification or status-change time, size or inode differs.
 */
export class FileTextCache {
  private readonly texts = new Map<string, { stamp: string; text: string }>();

  /**
   * The text of `file`, or undefined when it is missing, not a regular file, unreadable, or
   * refused by `accept` (called with the file's stat before it is read).
   */
  read(file: string, accept?: (st: Stats) => boolean): string | undefined {
    let st: Stats;
    try {
      st = statSync(file);
    } catch {
      this.texts.delete(file);
      return undefined;
    }
    if (!st.isFile() || (accept && !accept(st))) return undefined;
    const stamp = `${st.mtimeMs}:${st.ctimeMs}:${st.size}:${st.ino}`;
    const cached = this.texts.get(file);
    if (cached?.stamp === stamp) return cached.text;
    try {
      const text = readFileSync(file, 'utf8');
      this.texts.set(file, { stamp, text });
      return text;
    } catch {
      return undefined;
    }
  }
}
