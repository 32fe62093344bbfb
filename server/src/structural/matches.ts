/**
 * One structural match as search results carry it, built from what ast-grep reported for a
 * document — a napi node (`search.ts` on the main thread, `native-search.ts` on napi's
 * Rust threads) or a line of the CLI's JSON (`sg-cli.ts`) — here, the same way for both.
 */
import type { SgNode } from '@ast-grep/napi';
import type { SourceDocument } from './documents.js';
import type { NamedKeys, SgJsonMatch, SgJsonNode } from './sg-cli.js';

/** One match. Offsets are UTF-16 indexes into the document's `source`. */
export interface StructuralMatch {
  doc: SourceDocument;
  start: number;
  end: number;
  /** 1-based line and column in the document (a cell's own lines). */
  line: number;
  column: number;
  text: string;
  /** `$NAME` → its text; `$$$NAME` → the texts of the nodes it took. */
  captures: Record<string, string | string[]>;
  /** What each metavariable stands for in a rewrite: its text, for `$$$NAME` the whole run (separators included). */
  spans: Record<string, string>;
  /** Where each of `spans` sits in `source` ([start, end), UTF-16). */
  spanRanges: Record<string, [number, number]>;
}

/** The capturing metavariables of a pattern (`$_…` and `$$$` alone capture nothing). */
export function captureNames(pattern: string): Array<{ name: string; multi: boolean }> {
  const seen = new Map<string, boolean>();
  for (const m of pattern.matchAll(/\$(\$\$)?([A-Z][A-Z0-9_]*)/g)) seen.set(m[2]!, m[1] !== undefined);
  return [...seen].map(([name, multi]) => ({ name, multi }));
}

/** The match `node` is in `doc`, with the captures of `names`. */
export function toMatch(doc: SourceDocument, node: SgNode, names: ReturnType<typeof captureNames>): StructuralMatch {
  const r = node.range();
  const captures: Record<string, string | string[]> = {};
  const spans: Record<string, string> = {};
  const spanRanges: Record<string, [number, number]> = {};
  const slice = (n: SgNode): string => {
    const nr = n.range();
    return doc.source.slice(nr.start.index, nr.end.index);
  };
  for (const { name, multi } of names) {
    if (multi) {
      const all = node.getMultipleMatches(name);
      captures[name] = all.filter((n) => n.isNamed()).map(slice);
      const at = all.length === 0 ? r.start.index : all[0]!.range().start.index;
      spanRanges[name] = [at, all.length === 0 ? at : all[all.length - 1]!.range().end.index];
      spans[name] = doc.source.slice(...spanRanges[name]);
    } else {
      const n = node.getMatch(name);
      if (n) {
        const nr = n.range();
        spanRanges[name] = [nr.start.index, nr.end.index];
        spans[name] = captures[name] = doc.source.slice(nr.start.index, nr.end.index);
      }
    }
  }
  return {
    doc, start: r.start.index, end: r.end.index, line: r.start.line + 1, column: r.start.column + 1,
    text: doc.source.slice(r.start.index, r.end.index), captures, spans, spanRanges
  };
}

/**
 * Maps UTF-8 byte offsets of `bytes` to UTF-16 offsets of `text` (its decoding; valid UTF-8).
 * The identity when the file is ASCII, the common case.
 */
export function utf16Offsets(bytes: Buffer, text: string): (byte: number) => number {
  if (text.length === bytes.length) return (b) => b;
  const map = new Uint32Array(bytes.length + 1);
  let u = 0;
  for (let i = 0; i < bytes.length; i++) {
    map[i] = u;
    const c = bytes[i]!;
    // A lead byte starts a character: four-byte ones are two UTF-16 units; continuation bytes add none.
    if (c < 0x80 || (c >= 0xc0 && c < 0xf0)) u += 1;
    else if (c >= 0xf0) u += 2;
  }
  map[bytes.length] = u;
  return (b) => map[b]!;
}

/**
 * The match a CLI JSON line reports in `doc`, as {@link toMatch} builds it from a node; `at`
 * maps its byte offsets into `doc.source`. Undefined when the text the CLI matched is not
 * `doc.source` there (the file changed after it was read), or when a `$$$NAME` run's named
 * marks (`sg-cli.ts`) do not line up with its nodes: the caller searches the file with napi.
 */
export function matchFromSg(doc: SourceDocument, m: SgJsonMatch, names: ReturnType<typeof captureNames>, at: (byte: number) => number, keys: NamedKeys): StructuralMatch | undefined {
  const range = (n: SgJsonNode): [number, number] => [at(n.range.byteOffset.start), at(n.range.byteOffset.end)];
  const [start, end] = range(m);
  const text = doc.source.slice(start, end);
  if (text !== m.text) return undefined;
  const captures: Record<string, string | string[]> = {};
  const spans: Record<string, string> = {};
  const spanRanges: Record<string, [number, number]> = {};
  for (const { name, multi } of names) {
    if (multi) {
      const all = m.metaVariables.multi[name] ?? [];
      const marks = m.metaVariables.transformed[keys[name]!] ?? '';
      if (marks.length !== all.length) return undefined;
      const ranges = all.map(range);
      captures[name] = ranges.filter((_, i) => marks[i] === 'N').map((r) => doc.source.slice(r[0], r[1]));
      spanRanges[name] = ranges.length === 0 ? [start, start] : [ranges[0]![0], ranges[ranges.length - 1]![1]];
      spans[name] = doc.source.slice(...spanRanges[name]);
    } else {
      const n = m.metaVariables.single[name];
      if (n) {
        spanRanges[name] = range(n);
        spans[name] = captures[name] = doc.source.slice(...spanRanges[name]);
      }
    }
  }
  // napi's column counts UTF-16 units from the line's start; the CLI's counts characters.
  const lineStart = start === 0 ? 0 : doc.source.lastIndexOf('\n', start - 1) + 1;
  const column = start - lineStart + 1;
  return { doc, start, end, line: m.range.start.line + 1, column, text, captures, spans, spanRanges };
}

/**
 * One language's ladder state while a search runs: the matches found per rung index, and
 * the lowest rung that matched anywhere so far (`byRung.length` while none has). Only the
 * rungs up to `best` are still tried; the result is `byRung[best]`.
 */
export interface RungState {
  best: number;
  byRung: StructuralMatch[][];
}
