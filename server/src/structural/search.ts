/**
 * Structural search over a workspace path (SPEC AST-1…6): walks the files
 * (`source-files.ts`), splits notebooks into cells (`documents.ts`), compiles the pattern
 * through the scaffold ladder once per language (`ladder.ts`), parses on libuv's threads
 * (`parseAsync`) and collects matches with their metavariable captures. A document whose
 * text lacks one of a rung's literal words (`ladder.ts` `words`) cannot match that rung and
 * is not parsed for it. The ladder rung
 * is chosen per language over the whole search: the first accepting rung that matches
 * anywhere. Shared by `ast_grep` and `ast_edit`.
 */
import path from 'node:path';
import type { SgNode } from '@ast-grep/napi';
import { astGrep } from './ast-languages.js';
import { compilePattern, type CompiledPattern, type Rung } from './ladder.js';
import { documentsOf, type NotebookProblem, type SourceDocument } from './documents.js';
import { languageOfPath, napiLanguage, type StructuralLanguage } from './languages.js';
import { readSourceTextSync, sourceFiles } from './source-files.js';
import { UnparseablePatternError } from './errors.js';

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

/** What to search. */
export interface SearchScope {
  workspace: string;
  /** Workspace-relative file or folder (`.` for the root). */
  path: string;
  /** Only this language (and only notebooks in it). */
  language?: StructuralLanguage;
  signal: AbortSignal;
  /** The policy's answer per file (HARN-6); files it refuses are counted, not read. */
  allowed?(relative: string): boolean;
  /** Also keep every searched file's full text (for staging an edit). */
  keepTexts?: boolean;
}

/** The outcome of a search. */
export interface SearchResult {
  matches: StructuralMatch[];
  /** Per language searched: the rung that matched, or the first accepting one if none did. */
  rungs: Partial<Record<StructuralLanguage, { used: Rung; tried: Rung[] }>>;
  /** Languages where the pattern does not parse (searched files of that language skipped). */
  unparseable: UnparseablePatternError[];
  filesSearched: number;
  withheld: number;
  badNotebooks: NotebookProblem[];
  /** Full text of each file with at least one match (when `keepTexts`). */
  texts: Map<string, string>;
}

const CONCURRENCY = 8;
/** Files read between two turns of the event loop. */
const YIELD_EVERY = 32;

/** Searches `pattern` under `scope`; throws {@link UnparseablePatternError} when no searched language parses it. */
export async function structuralSearch(pattern: string, scope: SearchScope): Promise<SearchResult> {
  const compiled = new Map<StructuralLanguage, CompiledPattern | UnparseablePatternError>();
  const compile = (language: StructuralLanguage): CompiledPattern | UnparseablePatternError => {
    let c = compiled.get(language);
    if (!c) {
      try {
        c = compilePattern(pattern, language);
      } catch (e) {
        if (!(e instanceof UnparseablePatternError)) throw e;
        c = e;
      }
      compiled.set(language, c);
    }
    return c;
  };
  if (scope.language) {
    const c = compile(scope.language);
    if (c instanceof UnparseablePatternError) throw c;
  }
  const names = captureNames(pattern);
  /** Per language: matches found per rung index, and the lowest rung that matched so far. */
  const found = new Map<StructuralLanguage, { best: number; byRung: StructuralMatch[][] }>();
  const result: SearchResult = { matches: [], rungs: {}, unparseable: [], filesSearched: 0, withheld: 0, badNotebooks: [], texts: new Map() };

  const searchDoc = async (doc: SourceDocument): Promise<boolean> => {
    const c = compile(doc.language);
    if (c instanceof UnparseablePatternError) return false;
    let state = found.get(doc.language);
    if (!state) found.set(doc.language, (state = { best: c.rungs.length, byRung: c.rungs.map(() => []) }));
    // Parse only when some rung still in play has all its literal words in the text.
    const live = c.rungs.map((r, i) => i <= state.best && r.words.every((w) => doc.parsed.includes(w)));
    if (!live.includes(true)) return false;
    const root = (await astGrep().parseAsync(napiLanguage(doc.language), doc.parsed)).root();
    for (let i = 0; i < c.rungs.length && i <= state.best; i++) {
      if (!live[i]) continue;
      const nodes = root.findAll(c.rungs[i]!.matcher);
      if (nodes.length === 0) continue;
      for (const node of nodes) state.byRung[i]!.push(toMatch(doc, node, names));
      state.best = Math.min(state.best, i);
      return true;
    }
    return false;
  };

  const searchFile = async (rel: string): Promise<void> => {
    // Only files of a structural language (by extension) or notebooks are read at all.
    const byExtension = languageOfPath(rel);
    if (byExtension ? scope.language && byExtension !== scope.language : !rel.toLowerCase().endsWith('.ipynb')) return;
    const text = readSourceTextSync(path.join(scope.workspace, rel));
    if (text === undefined) return;
    const docs = documentsOf(rel, text);
    if (docs === undefined) return;
    if (!Array.isArray(docs)) {
      result.badNotebooks.push(docs);
      return;
    }
    const wanted = scope.language ? docs.filter((d) => d.language === scope.language) : docs;
    if (wanted.length === 0) return;
    result.filesSearched++;
    let hit = false;
    for (const doc of wanted) if (await searchDoc(doc)) hit = true;
    if (hit && scope.keepTexts) result.texts.set(rel, text);
  };

  const running = new Set<Promise<void>>();
  let sinceYield = 0;
  for await (const rel of sourceFiles(scope.workspace, scope.path, scope.signal)) {
    if (scope.allowed && !scope.allowed(rel)) {
      result.withheld++;
      continue;
    }
    // Reads are synchronous (`readSourceTextSync`): let other work run between batches.
    if (++sinceYield >= YIELD_EVERY) {
      sinceYield = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
      scope.signal.throwIfAborted();
    }
    const p: Promise<void> = searchFile(rel).finally(() => running.delete(p));
    running.add(p);
    if (running.size >= CONCURRENCY) await Promise.race(running);
  }
  await Promise.all(running);
  scope.signal.throwIfAborted();

  for (const [language, c] of compiled) {
    if (c instanceof UnparseablePatternError) {
      result.unparseable.push(c);
      continue;
    }
    const state = found.get(language);
    if (!state) continue;
    const best = state.best < c.rungs.length ? state.best : 0;
    result.rungs[language] = { used: c.rungs[best]!.rung, tried: c.rungs.map((r) => r.rung) };
    if (state.best < c.rungs.length) result.matches.push(...state.byRung[best]!);
  }
  if (result.filesSearched > 0 && result.unparseable.length === compiled.size && compiled.size > 0) throw result.unparseable[0]!;
  result.matches.sort(byPlace);
  return result;
}

function byPlace(a: StructuralMatch, b: StructuralMatch): number {
  if (a.doc.file !== b.doc.file) return a.doc.file < b.doc.file ? -1 : 1;
  const ca = a.doc.cell?.index ?? -1;
  const cb = b.doc.cell?.index ?? -1;
  return ca !== cb ? ca - cb : a.start - b.start;
}

/** The capturing metavariables of a pattern (`$_…` and `$$$` alone capture nothing). */
export function captureNames(pattern: string): Array<{ name: string; multi: boolean }> {
  const seen = new Map<string, boolean>();
  for (const m of pattern.matchAll(/\$(\$\$)?([A-Z][A-Z0-9_]*)/g)) seen.set(m[2]!, m[1] !== undefined);
  return [...seen].map(([name, multi]) => ({ name, multi }));
}

function toMatch(doc: SourceDocument, node: SgNode, names: ReturnType<typeof captureNames>): StructuralMatch {
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
