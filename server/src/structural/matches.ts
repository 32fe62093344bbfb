/**
 * One structural match as search results carry it, built from an ast-grep node of a
 * document — whichever engine parsed the document (`search.ts` on the main thread,
 * `native-search.ts` on ast-grep's Rust threads) builds it here, the same way.
 */
import type { SgNode } from '@ast-grep/napi';
import type { SourceDocument } from './documents.js';

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
 * One language's ladder state while a search runs: the matches found per rung index, and
 * the lowest rung that matched anywhere so far (`byRung.length` while none has). Only the
 * rungs up to `best` are still tried; the result is `byRung[best]`.
 */
export interface RungState {
  best: number;
  byRung: StructuralMatch[][];
}
