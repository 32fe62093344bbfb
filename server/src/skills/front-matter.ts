/**
 * The YAML front matter of a `SKILL.md`, read as the small subset the Agent Skills format
 * uses: top-level `key: value` lines, single- or double-quoted values, and `|` / `>` block
 * scalars (descriptions often fold over several lines). Nested maps (`metadata:`) and lists
 * are skipped, not interpreted: Cellmate reads only `name` and `description`, so a full
 * YAML engine — anchors, tags, merge keys — would be attack surface for nothing. Pure.
 */

/** The parsed file: top-level scalar fields and the Markdown after the front matter. */
export interface FrontMatter {
  fields: Record<string, string>;
  body: string;
}

/** Why a file has no usable front matter. */
export class FrontMatterError extends Error {}

/**
 * Splits `text` into front matter and body.
 * @throws FrontMatterError when the file does not open with a `---` block
 */
export function parseFrontMatter(text: string): FrontMatter {
  const source = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  if (!source.startsWith('---\n'))
    throw new FrontMatterError('it does not start with a front matter block (a first line of ---)');
  const end = source.indexOf('\n---', 3);
  if (end < 0) throw new FrontMatterError('its front matter block is not closed by a line of ---');
  const after = source.indexOf('\n', end + 1);
  const body = after < 0 ? '' : source.slice(after + 1);
  const lines = source.slice(4, end + 1).split('\n');
  const fields: Record<string, string> = {};
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const m = /^([A-Za-z_][\w-]*):(?:\s+(.*))?$/.exec(line);
    if (!m) continue; // indented lines of a nested map or list, comments, blank lines
    const key = m[1]!;
    const raw = (m[2] ?? '').trim();
    if (raw === '') continue; // a nested map or list follows
    if (/^[|>][+-]?$/.test(raw)) {
      const block: string[] = [];
      while (i + 1 < lines.length && (/^\s/.test(lines[i + 1]!) || lines[i + 1] === '')) block.push(lines[++i]!);
      const indent = Math.min(...block.filter((l) => l.trim()).map((l) => l.length - l.trimStart().length));
      const content = block.map((l) => l.slice(Number.isFinite(indent) ? indent : 0));
      fields[key] = (raw.startsWith('|') ? content.join('\n') : foldLines(content)).trim();
      continue;
    }
    fields[key] = scalar(raw);
  }
  return { fields, body };
}

function scalar(raw: string): string {
  if (raw.startsWith('"') && raw.endsWith('"') && raw.length >= 2) {
    try {
      return JSON.parse(raw) as string;
    } catch {
      return raw.slice(1, -1);
    }
  }
  if (raw.startsWith("'") && raw.endsWith("'") && raw.length >= 2) return raw.slice(1, -1).replace(/''/g, "'");
  return raw.replace(/\s+#.*$/, '');
}

/** `>`: lines join with spaces, a blank line keeps a paragraph break. */
function foldLines(lines: string[]): string {
  return lines
    .map((l) => (l.trim() === '' ? '\n' : l.trim()))
    .join(' ')
    .replace(/ ?\n ?/g, '\n');
}
