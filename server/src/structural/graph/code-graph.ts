/**
 * The code graph (SPEC INTEL-1/2): definitions and call edges over a workspace's source
 * files and notebook code cells, from tree-sitter parses (`grammars.ts`, `extract.ts`).
 * Kept per workspace and updated incrementally: each query re-stats the files
 * (`source-files.ts`: same walk, `.gitignore` and skips as structural search) and parses
 * only those whose size or modification time changed; removed files drop out. Calls are
 * resolved by name within a language family (Python; JavaScript/TypeScript/TSX), so a
 * call `x.close()` is an edge to every `close` — the answers are candidates, like grep's.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Parser } from 'web-tree-sitter';
import { documentsOf, placeLabel, type CellPlace } from '../documents.js';
import { languageOfPath, type StructuralLanguage } from '../languages.js';
import { readSourceTextSync, sourceFiles } from '../source-files.js';
import { extract, MODULE, type CallSite, type GraphSymbol, type ImportSite } from './extract.js';
import { loadGrammar, webTreeSitter } from './grammars.js';

/** One document's part of the graph. */
export interface GraphDocument {
  file: string;
  cell?: CellPlace;
  language: StructuralLanguage;
  symbols: GraphSymbol[];
  calls: CallSite[];
  imports: ImportSite[];
}

/** A file that imports one of a set of files, directly or through others ({@link CodeGraph.importers}). */
export interface ImporterEntry {
  file: string;
  /** 1 = imports a target itself. */
  depth: number;
  /** The file it imports on the way to a target, and the line of that import. */
  imports: string;
  line: number;
  /** The notebook cell of that import, when the importer is a notebook. */
  cell?: CellPlace;
}

interface FileEntry {
  mtimeMs: number;
  size: number;
  docs: GraphDocument[];
}

/** A definition with where it is. */
export interface PlacedSymbol extends GraphSymbol {
  doc: GraphDocument;
}

/** A caller found by {@link CodeGraph.impact}: the symbol (or top level) and the depth. */
export interface ImpactEntry {
  depth: number;
  /** Qualified name, or `<module>` for top-level code of a file or cell. */
  caller: string;
  doc: GraphDocument;
  /** Line of the call that makes it a caller. */
  line: number;
  /** What it calls on the path to the target. */
  calls: string;
}

const family = (l: StructuralLanguage): string => (l === 'python' ? 'python' : 'js');

/** The graph of one workspace. */
export class CodeGraph {
  private readonly files = new Map<string, FileEntry>();
  private readonly parsers = new Map<StructuralLanguage, Parser>();
  /** Documents parsed so far (tests check updates are incremental). */
  parsedFiles = 0;

  constructor(readonly workspace: string) {}

  private queue: Promise<void> = Promise.resolve();

  /** Brings the graph up to date with the files under the workspace (one refresh at a time). */
  refresh(signal: AbortSignal): Promise<void> {
    const run = this.queue.then(() => this.update(signal));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async update(signal: AbortSignal): Promise<void> {
    const seen = new Set<string>();
    for await (const rel of sourceFiles(this.workspace, '.', signal)) {
      if (!languageOfPath(rel) && !rel.toLowerCase().endsWith('.ipynb')) continue;
      const info = await stat(path.join(this.workspace, rel)).catch(() => undefined);
      if (!info) continue;
      seen.add(rel);
      const old = this.files.get(rel);
      if (old && old.mtimeMs === info.mtimeMs && old.size === info.size) continue;
      const text = readSourceTextSync(path.join(this.workspace, rel));
      const docs = text === undefined ? undefined : documentsOf(rel, text);
      if (!Array.isArray(docs)) {
        this.files.delete(rel);
        continue;
      }
      const graphDocs: GraphDocument[] = [];
      for (const d of docs) {
        const tree = (await this.parser(d.language)).parse(d.parsed);
        if (!tree) continue;
        try {
          graphDocs.push({
            file: rel,
            ...(d.cell ? { cell: d.cell } : {}),
            language: d.language,
            ...extract(tree, d.language)
          });
        } finally {
          tree.delete();
        }
      }
      this.parsedFiles++;
      this.files.set(rel, { mtimeMs: info.mtimeMs, size: info.size, docs: graphDocs });
    }
    for (const rel of [...this.files.keys()]) if (!seen.has(rel)) this.files.delete(rel);
  }

  private async parser(language: StructuralLanguage): Promise<Parser> {
    let p = this.parsers.get(language);
    if (!p) {
      const grammar = await loadGrammar(language); // initialises the runtime first
      const { Parser: TreeSitterParser } = await webTreeSitter();
      p = new TreeSitterParser();
      p.setLanguage(grammar);
      this.parsers.set(language, p);
    }
    return p;
  }

  /** Every document, in path and cell order, that `allowed` lets through. */
  documents(allowed: (file: string) => boolean = () => true): GraphDocument[] {
    return [...this.files.keys()]
      .sort()
      .filter(allowed)
      .flatMap((f) => this.files.get(f)!.docs);
  }

  /** Definitions matching `name` (`name`, `Class.method`, or a suffix of a qualified name). */
  find(name: string, docs: readonly GraphDocument[]): PlacedSymbol[] {
    return docs.flatMap((doc) =>
      doc.symbols.filter((s) => s.qualified === name || s.qualified.endsWith(`.${name}`)).map((s) => ({ ...s, doc }))
    );
  }

  /** The call sites that call one of `targets` (by name, same language family). */
  callers(
    targets: readonly PlacedSymbol[],
    docs: readonly GraphDocument[]
  ): Array<{ doc: GraphDocument; call: CallSite }> {
    const names = new Set(targets.map((t) => `${family(t.doc.language)}:${t.name}`));
    return docs.flatMap((doc) =>
      doc.calls.filter((c) => names.has(`${family(doc.language)}:${c.callee}`)).map((call) => ({ doc, call }))
    );
  }

  /** The calls made inside `targets` (their own bodies, nested definitions included). */
  callees(targets: readonly PlacedSymbol[]): Array<{ doc: GraphDocument; call: CallSite }> {
    return targets.flatMap((t) =>
      t.doc.calls
        .filter((c) => c.caller === t.qualified || c.caller.startsWith(`${t.qualified}.`))
        .map((call) => ({ doc: t.doc, call }))
    );
  }

  /**
   * The workspace files an import in `doc` can load, among the files the graph knows.
   * Python: relative imports from the document's package; absolute ones from its own
   * folder (a notebook's working directory), the workspace root and `src/` — the places
   * `sys.path` usually holds; `from pkg import mod` may load the submodule. JavaScript and
   * TypeScript: relative specifiers with the usual extensions and `index` files.
   */
  resolveImport(doc: Pick<GraphDocument, 'file' | 'language'>, site: ImportSite): string[] {
    const dir = path.posix.dirname(doc.file);
    const known = (p: string): boolean => !p.startsWith('..') && this.files.has(p);
    const norm = (p: string): string => path.posix.normalize(p).replace(/^\.\//, '');
    const out = new Set<string>();
    if (doc.language === 'python') {
      let bases: string[];
      if (site.level > 0) {
        let base = dir;
        for (let i = 1; i < site.level; i++) base = path.posix.dirname(base);
        bases = [base];
      } else bases = [...new Set([dir, '.', 'src'])];
      const parts = site.module ? site.module.split('.') : [];
      for (const base of bases) {
        for (const mod of [parts, ...site.names.map((n) => [...parts, n])]) {
          if (mod.length === 0) continue;
          const stem = norm(path.posix.join(base, ...mod));
          for (const c of [`${stem}.py`, `${stem}/__init__.py`]) if (known(c)) out.add(c);
        }
      }
      return [...out];
    }
    if (!site.module.startsWith('.')) return [];
    const stem = norm(path.posix.join(dir, site.module));
    const bare = stem.replace(/\.(m|c)?js$/, '');
    for (const c of [
      stem,
      ...['.ts', '.tsx', '.js', '.mjs', '.cjs', '.jsx', '/index.ts', '/index.js'].map((e) => `${bare}${e}`)
    ])
      if (known(c)) out.add(c);
    return [...out];
  }

  /**
   * The files that import one of `targets` (workspace-relative), directly or through other
   * files up to `maxDepth` imports away, each once at its smallest depth. `allowed` filters
   * the importers looked at.
   */
  importers(
    targets: readonly string[],
    allowed: (file: string) => boolean = () => true,
    maxDepth = 5
  ): ImporterEntry[] {
    const reverse = new Map<string, Array<{ file: string; line: number; cell?: CellPlace }>>();
    for (const doc of this.documents(allowed)) {
      for (const site of doc.imports ?? []) {
        for (const target of this.resolveImport(doc, site)) {
          if (target === doc.file) continue;
          const list = reverse.get(target) ?? [];
          list.push({ file: doc.file, line: site.line, ...(doc.cell ? { cell: doc.cell } : {}) });
          reverse.set(target, list);
        }
      }
    }
    const seen = new Set(targets);
    const out: ImporterEntry[] = [];
    let frontier = [...targets];
    for (let depth = 1; depth <= maxDepth && frontier.length; depth++) {
      const next: string[] = [];
      for (const target of frontier) {
        for (const imp of reverse.get(target) ?? []) {
          if (seen.has(imp.file)) continue;
          seen.add(imp.file);
          out.push({ file: imp.file, depth, imports: target, line: imp.line, ...(imp.cell ? { cell: imp.cell } : {}) });
          next.push(imp.file);
        }
      }
      frontier = next;
    }
    return out;
  }

  /** Transitive callers of `targets`, breadth first, each caller once (its smallest depth). */
  impact(targets: readonly PlacedSymbol[], docs: readonly GraphDocument[], maxDepth = 10): ImpactEntry[] {
    const out: ImpactEntry[] = [];
    const seen = new Set(targets.map((t) => key(t.doc, t.qualified)));
    let frontier: PlacedSymbol[] = [...targets];
    for (let depth = 1; depth <= maxDepth && frontier.length > 0; depth++) {
      const next: PlacedSymbol[] = [];
      for (const { doc, call } of this.callers(frontier, docs)) {
        const k = key(doc, call.caller);
        if (seen.has(k)) continue;
        seen.add(k);
        out.push({ depth, caller: call.caller, doc, line: call.line, calls: call.callee });
        if (call.caller === MODULE) continue;
        const sym = doc.symbols.find((s) => s.qualified === call.caller);
        if (sym) next.push({ ...sym, doc });
      }
      frontier = next;
    }
    return out;
  }
}

function key(doc: GraphDocument, qualified: string): string {
  return `${placeLabel(doc)}\u0000${qualified}`;
}

/** One graph per workspace for the life of the companion. */
export class CodeGraphs {
  private readonly graphs = new Map<string, CodeGraph>();

  /** The graph of `workspace` (created on first use). */
  of(workspace: string): CodeGraph {
    let g = this.graphs.get(workspace);
    if (!g) this.graphs.set(workspace, (g = new CodeGraph(workspace)));
    return g;
  }
}
