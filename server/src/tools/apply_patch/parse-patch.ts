/**
 * Unified-diff parsing and application (pure). One patch may touch several files; each
 * file has hunks `@@ -a,b +c,d @@` with ` ` context, `-` removed and `+` added lines.
 * `--- /dev/null` creates a file, `+++ /dev/null` deletes one. `\ No newline at end of
 * file` is honoured.
 */
export interface PatchHunk {
  oldStart: number;
  /** Lines the hunk expects (context + removed), in order. */
  before: string[];
  /** Lines it leaves (context + added). */
  after: string[];
  /** True when the old/new side ends without a final newline. */
  oldNoNewline: boolean;
  newNoNewline: boolean;
  added: number;
  removed: number;
}

export interface FilePatch {
  /** Path as written in the patch, `a/`/`b/` prefixes removed; null for /dev/null. */
  oldPath: string | null;
  newPath: string | null;
  hunks: PatchHunk[];
}

export class PatchError extends Error {}

const stripPrefix = (raw: string): string | null => {
  const p = raw.split('\t')[0]!.trim();
  if (p === '/dev/null') return null;
  return p.replace(/^[ab]\//, '');
};

/** Parses a unified diff. @throws PatchError naming the line. */
export function parsePatch(text: string): FilePatch[] {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  if (lines.at(-1) === '') lines.pop();
  const files: FilePatch[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (!line.startsWith('--- ')) {
      i++;
      continue;
    }
    const plus = lines[i + 1];
    if (plus === undefined || !plus.startsWith('+++ '))
      throw new PatchError(`line ${i + 2}: expected "+++ <path>" after "${line}".`);
    const file: FilePatch = { oldPath: stripPrefix(line.slice(4)), newPath: stripPrefix(plus.slice(4)), hunks: [] };
    i += 2;
    while (i < lines.length && lines[i]!.startsWith('@@')) {
      const m = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(lines[i]!);
      if (!m) throw new PatchError(`line ${i + 1}: malformed hunk header "${lines[i]}".`);
      const oldCount = m[2] === undefined ? 1 : Number(m[2]);
      const newCount = m[4] === undefined ? 1 : Number(m[4]);
      const hunk: PatchHunk = {
        oldStart: Number(m[1]),
        before: [],
        after: [],
        oldNoNewline: false,
        newNoNewline: false,
        added: 0,
        removed: 0
      };
      i++;
      let seenOld = 0;
      let seenNew = 0;
      let last: ' ' | '-' | '+' | undefined;
      while (i < lines.length && (seenOld < oldCount || seenNew < newCount || lines[i]!.startsWith('\\'))) {
        const l = lines[i]!;
        if (l.startsWith('\\')) {
          if (last === '-') hunk.oldNoNewline = true;
          else if (last === '+') hunk.newNoNewline = true;
          else {
            hunk.oldNoNewline = true;
            hunk.newNoNewline = true;
          }
          i++;
          continue;
        }
        const tag = l === '' ? ' ' : l[0];
        const body = l === '' ? '' : l.slice(1);
        if (tag === ' ') {
          hunk.before.push(body);
          hunk.after.push(body);
          seenOld++;
          seenNew++;
        } else if (tag === '-') {
          hunk.before.push(body);
          seenOld++;
          hunk.removed++;
        } else if (tag === '+') {
          hunk.after.push(body);
          seenNew++;
          hunk.added++;
        } else
          throw new PatchError(
            `line ${i + 1}: unexpected "${l.slice(0, 40)}" inside a hunk (lines must start with " ", "-" or "+"; counts in the @@ header may be wrong).`
          );
        last = tag as ' ' | '-' | '+';
        i++;
      }
      if (seenOld !== oldCount || seenNew !== newCount) {
        throw new PatchError(
          `hunk "${m[0]}" of ${file.newPath ?? file.oldPath}: the header says -${oldCount} +${newCount} lines but the hunk has -${seenOld} +${seenNew}.`
        );
      }
      file.hunks.push(hunk);
    }
    if (file.hunks.length === 0)
      throw new PatchError(`${file.newPath ?? file.oldPath}: no hunks after the file header.`);
    files.push(file);
  }
  if (files.length === 0)
    throw new PatchError(
      'no file headers found: a unified diff starts each file with "--- a/<path>" and "+++ b/<path>".'
    );
  return files;
}

/**
 * Applies one file's hunks to its text. A hunk must match exactly at its stated line;
 * if it does not, an exact match elsewhere is used only when it is unique.
 * @throws PatchError naming the hunk
 */
export function applyHunks(original: string, hunks: readonly PatchHunk[], name: string): string {
  const hadFinalNewline = original.endsWith('\n');
  const lines = original.length === 0 ? [] : original.replace(/\n$/, '').split('\n');
  let offset = 0;
  let endsWithoutNewline = !hadFinalNewline && original.length > 0;
  hunks.forEach((hunk, index) => {
    const expected = hunk.oldStart - 1 + offset;
    let at = -1;
    if (hunk.before.length === 0) at = Math.max(0, Math.min(lines.length, hunk.oldStart === 0 ? 0 : expected + 1));
    else if (matchesAt(lines, hunk.before, expected)) at = expected;
    else {
      const found: number[] = [];
      for (let s = 0; s + hunk.before.length <= lines.length; s++)
        if (matchesAt(lines, hunk.before, s)) found.push(s + 1);
      if (found.length !== 1) {
        throw new PatchError(
          `hunk ${index + 1} of ${name} (@@ -${hunk.oldStart}) does not apply: its context/removed lines ${found.length === 0 ? 'are not in the file' : `occur ${found.length} times (lines ${found.join(', ')})`}. Read the file and rebuild the hunk from its current text.`
        );
      }
      at = found[0]! - 1;
    }
    lines.splice(at, hunk.before.length, ...hunk.after);
    offset += hunk.after.length - hunk.before.length;
    if (hunk.newNoNewline) endsWithoutNewline = true;
    else if (hunk.oldNoNewline) endsWithoutNewline = false;
  });
  if (lines.length === 0) return '';
  return lines.join('\n') + (endsWithoutNewline ? '' : '\n');
}

function matchesAt(lines: readonly string[], block: readonly string[], start: number): boolean {
  if (start < 0 || start + block.length > lines.length) return false;
  return block.every((l, k) => lines[start + k] === l);
}
