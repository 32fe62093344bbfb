/**
 * Cell sources changed in a notebook's raw JSON text, everything else byte for byte
 * (SPEC EDIT-3): outputs, ids, metadata, key order, indentation and escapes outside the
 * changed `source` values stay as they were. The new value is written in the layout the
 * old one had (a list of lines at the same indentation, or one string).
 *
 * Interim: the shared all-or-nothing multi-file edit (`server/src/edits/`, issue #10's
 * foundation) owns notebook splicing; this is the structural rewrite's stand-in until it
 * is merged, with the same contract, and goes away then.
 */

/** Where a cell's `source` value sits in the raw text: [start, end). */
export interface SourceSpan {
  start: number;
  end: number;
}

/** A notebook's raw text could not be scanned (not the JSON it was at staging). */
export class NotebookSpliceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotebookSpliceError';
  }
}

/** The span of every cell's `source` value, by cell index (undefined when a cell has none). */
export function locateCellSources(text: string): Array<SourceSpan | undefined> {
  const s = new Scanner(text);
  const spans: Array<SourceSpan | undefined> = [];
  s.object((key) => {
    if (key !== 'cells') return false;
    s.array(() => {
      let span: SourceSpan | undefined;
      s.object((cellKey) => {
        if (cellKey !== 'source') return false;
        const start = s.pos;
        s.value();
        span = { start, end: s.pos };
        return true;
      });
      spans.push(span);
    });
    return true;
  });
  return spans;
}

/** `text` with cell `index`'s source replaced by `source`, in the old value's layout. */
export function spliceCellSources(text: string, changes: ReadonlyMap<number, string>): string {
  const spans = locateCellSources(text);
  const edits = [...changes].map(([index, source]) => {
    const span = spans[index];
    if (!span) throw new NotebookSpliceError(`cell ${index + 1} has no source to change`);
    return { span, value: formatSource(text, span, source) };
  }).sort((a, b) => a.span.start - b.span.start);
  let out = '';
  let at = 0;
  for (const e of edits) {
    out += text.slice(at, e.span.start) + e.value;
    at = e.span.end;
  }
  return out + text.slice(at);
}

function formatSource(text: string, span: SourceSpan, source: string): string {
  const old = text.slice(span.start, span.end);
  if (old.startsWith('"')) return JSON.stringify(source);
  const lines = source.length === 0 ? [] : source.split(/(?<=\n)/);
  if (lines.length === 0) return '[]';
  const inner = /^\[(\s*)/.exec(old)![1]!;
  const close = /(\s*)\]$/.exec(old)![1]!;
  let sep = inner;
  let end = close;
  if (old === '[]' || inner === '') {
    // Jupyter's layout: one line per element, one indent deeper than the key's line.
    const lineStart = text.lastIndexOf('\n', span.start) + 1;
    const indent = /^\s*/.exec(text.slice(lineStart, span.start))![0];
    const unit = /\n(\s+)"/.exec(text)?.[1] ?? ' ';
    [sep, end] = old === '[]' ? [`\n${indent}${unit}`, `\n${indent}`] : ['', ''];
  }
  return `[${lines.map((l) => sep + JSON.stringify(l)).join(',')}${end}]`;
}

/** A minimal JSON scanner that only tracks positions (values are skipped, not built). */
class Scanner {
  pos = 0;
  constructor(private readonly text: string) {}

  private ws(): void {
    while (/\s/.test(this.text[this.pos] ?? '')) this.pos++;
  }

  private expect(c: string): void {
    this.ws();
    if (this.text[this.pos] !== c) throw new NotebookSpliceError(`expected ${JSON.stringify(c)} at offset ${this.pos}`);
    this.pos++;
  }

  /** Visits each key; `visit` returns true when it consumed the value itself. */
  object(visit: (key: string) => boolean): void {
    this.expect('{');
    this.ws();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return;
    }
    for (;;) {
      this.ws();
      const key = JSON.parse(this.text.slice(this.pos, this.stringEnd())) as string;
      this.pos = this.stringEnd();
      this.expect(':');
      this.ws();
      if (!visit(key)) this.value();
      this.ws();
      if (this.text[this.pos] === ',') this.pos++;
      else return this.expect('}');
    }
  }

  array(each: () => void): void {
    this.expect('[');
    this.ws();
    if (this.text[this.pos] === ']') {
      this.pos++;
      return;
    }
    for (;;) {
      this.ws();
      each();
      this.ws();
      if (this.text[this.pos] === ',') this.pos++;
      else return this.expect(']');
    }
  }

  value(): void {
    this.ws();
    const c = this.text[this.pos];
    if (c === '{') return this.object(() => false);
    if (c === '[') return this.array(() => this.value());
    if (c === '"') {
      this.pos = this.stringEnd();
      return;
    }
    const m = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(this.text.slice(this.pos, this.pos + 64));
    if (!m) throw new NotebookSpliceError(`unexpected ${JSON.stringify(c ?? 'end of text')} at offset ${this.pos}`);
    this.pos += m[0].length;
  }

  /** End offset (exclusive) of the string starting at `pos`. */
  private stringEnd(): number {
    if (this.text[this.pos] !== '"') throw new NotebookSpliceError(`expected a string at offset ${this.pos}`);
    let i = this.pos + 1;
    while (i < this.text.length) {
      const c = this.text[i];
      if (c === '\\') i += 2;
      else if (c === '"') return i + 1;
      else i++;
    }
    throw new NotebookSpliceError('unterminated string');
  }
}
