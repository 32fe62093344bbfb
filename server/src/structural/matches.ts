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

/** One metavariable's capture, as an engine reports it: UTF-16 ranges into the document's `source`. */
type Capture =
  | { name: string; range: [number, number] | undefined }
  | { name: string; nodes: Array<{ range: [number, number]; named: boolean }> };

/** The match at [start, end) of `doc` with its captures: what both engines' reports become. */
function assemble(
  doc: SourceDocument,
  start: number,
  end: number,
  line: number,
  column: number,
  found: Capture[]
): StructuralMatch {
  const slice = (r: readonly [number, number]): string => doc.source.slice(r[0], r[1]);
  const captures: Record<string, string | string[]> = {};
  const spans: Record<string, string> = {};
  const spanRanges: Record<string, [number, number]> = {};
  for (const c of found) {
    if ('nodes' in c) {
      // Shown: the run's named nodes; rewritten: the whole run, separators included.
      captures[c.name] = c.nodes.filter((n) => n.named).map((n) => slice(n.range));
      spanRanges[c.name] =
        c.nodes.length === 0 ? [start, start] : [c.nodes[0]!.range[0], c.nodes[c.nodes.length - 1]!.range[1]];
      spans[c.name] = slice(spanRanges[c.name]!);
    } else if (c.range) {
      spanRanges[c.name] = c.range;
      spans[c.name] = captures[c.name] = slice(c.range);
    }
  }
  return { doc, start, end, line, column, text: slice([start, end]), captures, spans, spanRanges };
}

/** The match `node` is in `doc`, with the captures of `names`. */
export function toMatch(doc: SourceDocument, node: SgNode, names: ReturnType<typeof captureNames>): StructuralMatch {
  const r = node.range();
  const range = (n: SgNode): [number, number] => {
    const nr = n.range();
    return [nr.start.index, nr.end.index];
  };
  const found = names.map(({ name, multi }): Capture => {
    if (multi)
      return { name, nodes: node.getMultipleMatches(name).map((n) => ({ range: range(n), named: n.isNamed() })) };
    const n = node.getMatch(name);
    return { name, range: n ? range(n) : undefined };
  });
  return assemble(doc, r.start.index, r.end.index, r.start.line + 1, r.start.column + 1, found);
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
export function matchFromSg(
  doc: SourceDocument,
  m: SgJsonMatch,
  names: ReturnType<typeof captureNames>,
  at: (byte: number) => number,
  keys: NamedKeys
): StructuralMatch | undefined {
  const range = (n: SgJsonNode): [number, number] => [at(n.range.byteOffset.start), at(n.range.byteOffset.end)];
  const [start, end] = range(m);
  if (doc.source.slice(start, end) !== m.text) return undefined;
  const found: Capture[] = [];
  for (const { name, multi } of names) {
    if (!multi) {
      const n = m.metaVariables.single[name];
      found.push({ name, range: n ? range(n) : undefined });
      continue;
    }
    const all = m.metaVariables.multi[name] ?? [];
    const marks = m.metaVariables.transformed[keys[name]!] ?? '';
    if (marks.length !== all.length) return undefined;
    found.push({ name, nodes: all.map((n, i) => ({ range: range(n), named: marks[i] === 'N' })) });
  }
  // napi's column counts UTF-16 units from the line's start; the CLI's counts characters.
  const lineStart = start === 0 ? 0 : doc.source.lastIndexOf('\n', start - 1) + 1;
  return assemble(doc, start, end, m.range.start.line + 1, start - lineStart + 1, found);
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
