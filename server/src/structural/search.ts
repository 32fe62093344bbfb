/**
 * Structural search over a workspace path (SPEC AST-1…6): walks the files
 * (`source-files.ts`), splits notebooks into cells (`documents.ts`), compiles the pattern
 * through the scaffold ladder once per language (`ladder.ts`) and collects matches with
 * their metavariable captures (`matches.ts`). A document whose text lacks one of a rung's
 * literal words (`ladder.ts` `words`) cannot match that rung and is not parsed for it.
 * Plain source files in valid UTF-8 are parsed and matched by ast-grep off the main thread,
 * in batches (`native-search.ts`: the ast-grep CLI, else napi's Rust threads); notebook cells and the rare file that is not valid UTF-8
 * (decoded with replacement characters, which ast-grep's reader refuses) are parsed here on
 * libuv's threads (`parseAsync`) and matched on the main thread. The ladder rung is chosen
 * per language over the whole search: the first accepting rung that matches anywhere.
 * Shared by `ast_grep` and `ast_edit`.
 */
import { isUtf8 } from 'node:buffer';
import path from 'node:path';
import { astGrep } from './ast-languages.js';
import { compilePattern, type CompiledPattern, type Rung } from './ladder.js';
import { documentsOf, type NotebookProblem, type SourceDocument } from './documents.js';
import { languageOfPath, napiLanguage, type StructuralLanguage } from './languages.js';
import { captureNames, toMatch, type RungState, type StructuralMatch } from './matches.js';
import { NativeSearch } from './native-search.js';
import { readSourceBytesSync, sourceFiles } from './source-files.js';
import { UnparseablePatternError } from './errors.js';

export { captureNames, type StructuralMatch } from './matches.js';

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
  /** Which door to ast-grep plain files take (`native-search.ts`; default: the CLI when it runs). */
  engine?: 'cli' | 'napi';
  /**
   * Stop once this many matches are kept (`truncated` says so): a pattern that matches
   * everywhere must not hold the companion's memory and the model's time for a count.
   */
  maxMatches?: number;
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
  /** Documents parsed, by who parsed them: the ast-grep CLI, napi's threads, the main thread (cells, fallbacks). */
  parsed: { cli: number; napi: number; main: number };
  /** The search stopped at `maxMatches`: there are more matches than `matches` holds. */
  truncated: boolean;
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
  const found = new Map<StructuralLanguage, RungState>();
  const stateOf = (language: StructuralLanguage, c: CompiledPattern): RungState => {
    let state = found.get(language);
    if (!state) found.set(language, (state = { best: c.rungs.length, byRung: c.rungs.map(() => []) }));
    return state;
  };
  const result: SearchResult = {
    matches: [],
    rungs: {},
    unparseable: [],
    filesSearched: 0,
    withheld: 0,
    badNotebooks: [],
    texts: new Map(),
    parsed: { cli: 0, napi: 0, main: 0 },
    truncated: false
  };
  // `maxMatches` reached stops the walk and the batches in flight; the caller's signal still rejects.
  const stop = new AbortController();
  const signal = AbortSignal.any([scope.signal, stop.signal]);
  const kept = (): number => {
    let n = 0;
    for (const [language, state] of found)
      if (state.best < (compiled.get(language) as CompiledPattern).rungs.length) n += state.byRung[state.best]!.length;
    return n;
  };
  const full = (): boolean => scope.maxMatches !== undefined && kept() >= scope.maxMatches;

  const searchDoc = async (doc: SourceDocument): Promise<boolean> => {
    const c = compile(doc.language);
    if (c instanceof UnparseablePatternError) return false;
    const state = stateOf(doc.language, c);
    // Parse only when some rung still in play has all its literal words in the text.
    const live = c.rungs.map((r, i) => i <= state.best && r.words.every((w) => doc.parsed.includes(w)));
    if (!live.includes(true)) return false;
    result.parsed.main++;
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

  const native = new NativeSearch({
    signal,
    pattern,
    names,
    engine: scope.engine,
    ladder: (language) => {
      const compiled = compile(language) as CompiledPattern; // only parseable languages are sent
      return { compiled, state: stateOf(language, compiled) };
    },
    onHit: (rel, text) => {
      if (scope.keepTexts) result.texts.set(rel, text);
    },
    fallback: searchDoc
  });

  const searchFile = async (rel: string): Promise<void> => {
    // Only files of a structural language (by extension) or notebooks are read at all.
    const byExtension = languageOfPath(rel);
    if (byExtension ? scope.language && byExtension !== scope.language : !rel.toLowerCase().endsWith('.ipynb')) return;
    const absolute = path.join(scope.workspace, rel);
    const bytes = readSourceBytesSync(absolute);
    if (bytes === undefined) return;
    if (byExtension && isUtf8(bytes)) {
      result.filesSearched++;
      const c = compile(byExtension);
      if (c instanceof UnparseablePatternError) return;
      const state = stateOf(byExtension, c);
      // The prefilter on the bytes: for valid UTF-8 the same answer as on the decoded text.
      const live = c.rungs.flatMap((r, i) => (i <= state.best && r.words.every((w) => bytes.includes(w)) ? [i] : []));
      if (live.length > 0) await native.add({ rel, absolute, bytes, language: byExtension, live });
      return;
    }
    const text = bytes.toString('utf8');
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
  for await (const rel of sourceFiles(scope.workspace, scope.path, signal)) {
    if (full()) {
      stop.abort();
      break;
    }
    if (scope.allowed && !scope.allowed(rel)) {
      result.withheld++;
      continue;
    }
    // Reads are synchronous (`readSourceBytesSync`): let other work run between batches.
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
  try {
    await native.finish();
  } catch (error) {
    if (!stop.signal.aborted || scope.signal.aborted) throw error;
  }
  scope.signal.throwIfAborted();
  result.truncated = stop.signal.aborted || (scope.maxMatches !== undefined && kept() > scope.maxMatches);
  result.parsed.cli = native.parsed.cli;
  result.parsed.napi = native.parsed.napi;

  for (const [language, c] of compiled) {
    if (c instanceof UnparseablePatternError) {
      result.unparseable.push(c);
      continue;
    }
    const state = found.get(language);
    if (!state) continue;
    const best = state.best < c.rungs.length ? state.best : 0;
    result.rungs[language] = { used: c.rungs[best]!.rung, tried: c.rungs.map((r) => r.rung) };
    // One by one: a spread of a very common pattern's matches overflows the call stack.
    if (state.best < c.rungs.length) for (const m of state.byRung[best]!) result.matches.push(m);
  }
  if (result.filesSearched > 0 && result.unparseable.length === compiled.size && compiled.size > 0)
    throw result.unparseable[0]!;
  result.matches.sort(byPlace);
  if (result.truncated && result.matches.length > scope.maxMatches!) result.matches.length = scope.maxMatches!;
  return result;
}

function byPlace(a: StructuralMatch, b: StructuralMatch): number {
  if (a.doc.file !== b.doc.file) return a.doc.file < b.doc.file ? -1 : 1;
  const ca = a.doc.cell?.index ?? -1;
  const cb = b.doc.cell?.index ?? -1;
  return ca !== cb ? ca - cb : a.start - b.start;
}
