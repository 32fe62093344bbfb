/**
 * Cell `source` changes spliced into an `.ipynb`'s raw JSON text (EDIT-3, RENAME-1), pure:
 * only the bytes of the changed `source` values change — outputs, ids, metadata, key order,
 * indentation, escapes elsewhere stay byte for byte. A new source is written in the shape
 * the old one had: Jupyter's list of lines (indented like the old list; an empty list gets
 * the file's indentation) or a single string.
 */
import { EditError } from './edit-error.js';

/** One cell's new source, by 0-based cell index. */
export interface CellSourceSplice {
  index: number;
  source: string;
}

interface Span {
  start: number;
  end: number;
}

const STRING = /"(?:[^"\\\u0000-\u001f]|\\.)*"/y;
const LITERAL = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;

/** Finds the `source` value span of every cell of `cells` (by index) in raw notebook JSON. */
export function locateCellSources(raw: string): Array<Span | undefined> {
  let i = 0;
  const fail = (what: string): never => {
    throw new EditError('invalid', `not valid JSON near character ${i}: ${what}.`);
  };
  const ws = (): void => {
    while (i < raw.length && (raw[i] === ' ' || raw[i] === '\n' || raw[i] === '\r' || raw[i] === '\t')) i++;
  };
  const token = (re: RegExp): string => {
    re.lastIndex = i;
    const m = re.exec(raw);
    if (!m) fail(`unexpected ${JSON.stringify(raw.slice(i, i + 10))}`);
    i = re.lastIndex;
    return m![0];
  };
  const expect = (c: string): void => {
    ws();
    if (raw[i] !== c) fail(`expected "${c}"`);
    i++;
  };
  /** Walks an object, calling `member(key)` positioned at each value; it must consume it. */
  const object = (member: (key: string) => void): void => {
    expect('{');
    ws();
    if (raw[i] === '}') {
      i++;
      return;
    }
    for (;;) {
      ws();
      const key = JSON.parse(token(STRING)) as string;
      expect(':');
      ws();
      member(key);
      ws();
      if (raw[i] === ',') i++;
      else if (raw[i] === '}') {
        i++;
        return;
      } else fail('expected "," or "}"');
    }
  };
  const array = (element: (index: number) => void): void => {
    expect('[');
    ws();
    if (raw[i] === ']') {
      i++;
      return;
    }
    for (let n = 0; ; n++) {
      ws();
      element(n);
      ws();
      if (raw[i] === ',') i++;
      else if (raw[i] === ']') {
        i++;
        return;
      } else fail('expected "," or "]"');
    }
  };
  const skip = (): void => {
    ws();
    if (raw[i] === '{') object(() => skip());
    else if (raw[i] === '[') array(() => skip());
    else if (raw[i] === '"') token(STRING);
    else token(LITERAL);
  };
  const spans: Array<Span | undefined> = [];
  object((key) => {
    if (key !== 'cells' || raw[i] !== '[') return skip();
    spans.length = 0;
    array((n) => {
      spans[n] = undefined;
      if (raw[i] !== '{') return skip();
      object((cellKey) => {
        const start = i;
        skip();
        if (cellKey === 'source') spans[n] = { start, end: i };
      });
    });
  });
  ws();
  if (i !== raw.length) fail('text after the notebook');
  return spans;
}

/** Source as Jupyter writes it: lines, each but the last ending in `\n`. */
function lines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** The leading whitespace of the line that holds `offset`. */
function indentOfLine(raw: string, offset: number): string {
  const lineStart = raw.lastIndexOf('\n', offset - 1) + 1;
  return /^[ \t]*/.exec(raw.slice(lineStart))![0];
}

/** `source` serialized in the shape of `old` (the raw JSON of the old value). */
function formatSource(raw: string, span: Span, source: string): string {
  const old = raw.slice(span.start, span.end);
  if (old.startsWith('"')) return JSON.stringify(source);
  const parts = lines(source).map((l) => JSON.stringify(l));
  if (parts.length === 0) return '[]';
  let open: string;
  let close: string;
  const shaped = /^\[(\s*)"[\s\S]*?(\s*)\]$/.exec(old);
  if (shaped) {
    open = shaped[1]!;
    close = shaped[2]!;
  } else {
    // An empty list: the file's own indentation (Jupyter: one space per level).
    const unit = /^\{\r?\n([ \t]+)"/.exec(raw)?.[1] ?? '';
    const newline = raw.includes('\r\n') ? '\r\n' : '\n';
    const key = indentOfLine(raw, span.start);
    open = unit ? `${newline}${key}${unit}` : '';
    close = unit ? `${newline}${key}` : '';
  }
  return `[${open}${parts.join(`,${open}`)}${close}]`;
}

/**
 * `raw` with the sources of the given cells replaced (see the module comment).
 * @throws EditError `invalid` when the JSON does not parse, a cell index has no `source`,
 *   or an index appears twice
 */
export function spliceCellSources(raw: string, changes: readonly CellSourceSplice[]): string {
  const spans = locateCellSources(raw);
  const seen = new Set<number>();
  const located = changes.map((c) => {
    if (seen.has(c.index)) throw new EditError('invalid', `cell ${c.index + 1} is changed twice; merge the changes.`);
    seen.add(c.index);
    const span = spans[c.index];
    if (!span) throw new EditError('invalid', `the notebook has no cell ${c.index + 1} with a source.`);
    return { span, text: formatSource(raw, span, c.source) };
  });
  located.sort((a, b) => b.span.start - a.span.start);
  let out = raw;
  for (const { span, text } of located) out = out.slice(0, span.start) + text + out.slice(span.end);
  return out;
}
