/**
 * Structural search of plain source files off the main thread (SPEC AST-3 and its speed
 * target): batches of files are parsed and matched in parallel by ast-grep's Rust
 * code while the main thread walks, reads and prefilters. Two doors to the same engine:
 * the ast-grep CLI (`sg-cli.ts`; UTF-8, about a quarter less CPU per file) when it runs here,
 * else napi's `findInFiles` — and napi for a batch the CLI fails on.
 *
 * The caller (`search.ts`) has already applied everything that is Cellmate's semantics — the
 * walk (`.gitignore`, skipped folders, no symlinks), the policy, the size and binary checks,
 * the literal-word prefilter — and sends only files whose bytes are valid UTF-8, so that
 * ast-grep's own read (`read_to_string`, which skips invalid UTF-8) sees the same text.
 * Paths go to ast-grep one by one, never a folder: ast-grep's walker never filters a root
 * it is given (none of its ignore files, hidden-file rule or extension globs apply).
 *
 * The scaffold ladder stays one pass. napi: a batch's matcher is ast-grep's `any` of the
 * rungs still in play for its files, which tries them in order, so a node's captures are
 * those of the first rung it satisfies; when more than one rung is in play, each match is
 * classified with `node.matches(rung)`. CLI: each rung is its own rule (`r<index>`), so a
 * match names its rung. Once a rung has matched, later batches carry only the rungs up to
 * it — usually one.
 *
 * A match's document text is the one the main thread read and prefiltered. A file whose
 * text changed between that read and ast-grep's (napi: the parsed root's text differs; CLI:
 * a match's text differs), and a batch ast-grep refuses, are searched on the main thread
 * instead (`fallback`).
 */
import type { NapiConfig, SgNode } from '@ast-grep/napi';
import { astGrep } from './ast-languages.js';
import type { SourceDocument } from './documents.js';
import type { CompiledPattern } from './ladder.js';
import { napiLanguage, type StructuralLanguage } from './languages.js';
import {
  matchFromSg,
  toMatch,
  utf16Offsets,
  type captureNames,
  type RungState,
  type StructuralMatch
} from './matches.js';
import { cliTakes, namedKeys, sgCli, sgScan, type SgCli } from './sg-cli.js';

/** A plain source file for ast-grep's threads, as the main thread read and prefiltered it. */
export interface NativeFile {
  /** Workspace-relative `/` path. */
  rel: string;
  absolute: string;
  /** The file's bytes (valid UTF-8), kept until its batch is done. */
  bytes: Buffer;
  language: StructuralLanguage;
  /** Indexes of the ladder rungs whose literal words are all in the text. */
  live: number[];
}

/** What a native search reports into: the caller's ladder state and match collection. */
export interface NativeSearchOptions {
  signal: AbortSignal;
  /** The pattern as written. */
  pattern: string;
  names: ReturnType<typeof captureNames>;
  /** Which door to ast-grep: the CLI when it runs here (the default), or napi only. */
  engine?: 'cli' | 'napi';
  /** The compiled pattern of a language and its ladder state (shared with the main-thread path). */
  ladder(language: StructuralLanguage): { compiled: CompiledPattern; state: RungState };
  /** A file with at least one match kept, with the text its offsets index. */
  onHit(rel: string, text: string): void;
  /** Searches one document on the main thread; true when it kept a match. */
  fallback(doc: SourceDocument): Promise<boolean>;
}

type Engine = 'cli' | 'napi';

/**
 * Files and bytes per call: small enough to overlap with the walk, to stop soon on abort and
 * not to hold much memory in flight; a CLI call also pays a process start, so it takes more.
 */
const BATCH: Record<Engine, { files: number; bytes: number }> = {
  napi: { files: 128, bytes: 4 * 1024 * 1024 },
  cli: { files: 1024, bytes: 24 * 1024 * 1024 }
};
/**
 * The first batch of a language holds this many files, each next one twice as many up to
 * {@link BATCH}: until a rung matches, a batch tries every accepting rung of the ladder, so
 * the ladder narrows after a small batch instead of a large one.
 */
const FIRST_BATCH_FILES = 32;
/**
 * Calls in flight. Each parses on its own threads (one per core); two keep every core busy
 * while one batch ends and the next starts.
 */
const IN_FLIGHT = 2;

interface Batch {
  engine: Engine;
  language: StructuralLanguage;
  live: number[];
  files: NativeFile[];
  bytes: number;
}

/** Batches files to the ast-grep CLI or napi's `findInFiles` and collects their matches (see the module doc). */
export class NativeSearch {
  private readonly open = new Map<string, Batch>();
  /** Batches sent per engine and language (their size ramps up: {@link FIRST_BATCH_FILES}). */
  private readonly sent = new Map<string, number>();
  private readonly queue: Batch[] = [];
  private readonly running = new Set<Promise<void>>();
  private waiters: Array<() => void> = [];
  private failure: unknown;
  /** The CLI, until a call of it fails (then napi takes every batch). */
  private cli: SgCli | undefined;
  /** Why the CLI was given up in this search, if it was. */
  cliFailure: unknown;
  /** Files each door parsed (a batch napi took over from the CLI counts as napi's). */
  readonly parsed = { cli: 0, napi: 0 };

  constructor(private readonly options: NativeSearchOptions) {
    this.cli = options.engine === 'napi' ? undefined : sgCli();
  }

  /** Adds a file; resolves when there is room for more (the walk waits while calls are queued). */
  add(file: NativeFile): Promise<void> {
    const engine: Engine = this.cli && cliTakes(file.rel, file.language) ? 'cli' : 'napi';
    const key = `${engine}:${file.language}:${file.live.join(',')}`;
    let batch = this.open.get(key);
    if (!batch) this.open.set(key, (batch = { engine, language: file.language, live: file.live, files: [], bytes: 0 }));
    batch.files.push(file);
    batch.bytes += file.bytes.length;
    const stream = `${engine}:${file.language}`;
    const sent = this.sent.get(stream) ?? 0;
    if (
      batch.files.length >= Math.min(BATCH[engine].files, FIRST_BATCH_FILES * 2 ** sent) ||
      batch.bytes >= BATCH[engine].bytes
    ) {
      this.sent.set(stream, sent + 1);
      this.open.delete(key);
      this.queue.push(batch);
      this.pump();
    }
    return this.queue.length === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Sends the partial batches and waits for every call; rejects on abort without waiting. */
  async finish(): Promise<void> {
    for (const batch of this.open.values()) this.queue.push(batch);
    this.open.clear();
    this.pump();
    const { signal } = this.options;
    const aborted = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    while (this.running.size > 0 && !signal.aborted) await Promise.race([Promise.all(this.running), aborted]);
    signal.throwIfAborted();
    if (this.failure !== undefined) throw this.failure;
  }

  private pump(): void {
    while (this.running.size < IN_FLIGHT && this.queue.length > 0) {
      const batch = this.queue.shift()!;
      // run() never rejects: its failures are kept for finish(), so an abandoned search leaves no unhandled rejection.
      const p: Promise<void> = this.run(batch)
        .catch((e: unknown) => {
          this.failure ??= e;
        })
        .finally(() => {
          this.running.delete(p);
          this.pump();
        });
      this.running.add(p);
    }
    if (this.queue.length === 0 && this.waiters.length > 0) {
      const waiters = this.waiters;
      this.waiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  private async run(batch: Batch): Promise<void> {
    const { signal } = this.options;
    if (signal.aborted) return;
    const { compiled, state } = this.options.ladder(batch.language);
    const rungs = batch.live.filter((i) => i <= state.best);
    if (rungs.length === 0) return;
    if (batch.engine === 'cli' && this.cli) {
      try {
        await this.runCli(this.cli, batch, rungs, compiled, state);
        this.parsed.cli += batch.files.length;
        return;
      } catch (e) {
        if (signal.aborted) return;
        // Nothing of the batch was kept: napi searches it, and every batch after it.
        this.cli = undefined;
        this.cliFailure ??= e;
      }
    }
    await this.runNapi(batch, rungs, compiled, state);
    this.parsed.napi += batch.files.length;
  }

  private async runCli(
    cli: SgCli,
    batch: Batch,
    rungs: number[],
    compiled: CompiledPattern,
    state: RungState
  ): Promise<void> {
    const byPath = new Map(batch.files.map((f) => [f.absolute, f]));
    const multi = this.options.names.filter((n) => n.multi).map((n) => n.name);
    const keys = namedKeys(this.options.pattern, multi);
    // Each line becomes its match at once (a very common pattern's JSON is not kept around).
    interface Hit {
      file: NativeFile;
      text: string;
      at: (byte: number) => number;
      doc: SourceDocument;
      built: Array<[number, StructuralMatch]>;
      changed: boolean;
    }
    const hits = new Map<string, Hit>();
    await sgScan(
      cli,
      {
        language: batch.language,
        pattern: this.options.pattern,
        multi,
        paths: [...byPath.keys()],
        signal: this.options.signal,
        rungs: rungs.map((index) => ({ index, matcher: compiled.rungs[index]!.matcher }))
      },
      (m) => {
        let hit = hits.get(m.file);
        if (!hit) {
          const file = byPath.get(m.file);
          if (!file) throw new Error(`ast-grep reported a file it was not given: ${m.file}`);
          const text = file.bytes.toString('utf8');
          hit = {
            file,
            text,
            at: utf16Offsets(file.bytes, text),
            doc: { file: file.rel, language: file.language, source: text, parsed: text },
            built: [],
            changed: false
          };
          hits.set(m.file, hit);
        }
        if (hit.changed) return;
        const match = matchFromSg(hit.doc, m, this.options.names, hit.at, keys);
        if (match) hit.built.push([Number(m.ruleId.slice(1)), match]);
        else {
          hit.changed = true;
          hit.built = [];
        }
      }
    );
    const later: Array<Promise<void>> = [];
    for (const hit of hits.values()) {
      if (hit.changed) {
        later.push(this.fallback(hit.file, hit.text));
        continue;
      }
      let kept = false;
      for (const [rung, match] of hit.built) {
        if (!(rung <= state.best)) continue;
        state.byRung[rung]!.push(match);
        state.best = rung;
        kept = true;
      }
      if (kept) this.options.onHit(hit.file.rel, hit.text);
    }
    await Promise.all(later);
  }

  private async runNapi(batch: Batch, rungs: number[], compiled: CompiledPattern, state: RungState): Promise<void> {
    const { signal } = this.options;
    const byPath = new Map(batch.files.map((f) => [f.absolute, f]));
    const matcher: NapiConfig =
      rungs.length === 1
        ? compiled.rungs[rungs[0]!]!.matcher
        : { rule: { any: rungs.map((i) => compiled.rungs[i]!.matcher.rule) } };
    const later: Array<Promise<void>> = [];
    let delivered = 0;
    let expected: number | undefined;
    let settle!: () => void;
    const allDelivered = new Promise<void>((resolve) => (settle = resolve));
    const check = (): void => {
      if (expected !== undefined && delivered >= expected) settle();
    };
    const onFile = (err: Error | null, nodes: SgNode[]): void => {
      delivered++;
      try {
        if (err) throw err;
        if (!signal.aborted) {
          const fallback = this.collect(byPath, nodes, rungs, compiled, state);
          if (fallback) later.push(fallback);
        }
      } catch (e) {
        this.failure ??= e;
      }
      check();
    };
    try {
      // Resolves with the number of files that had matches; their callbacks may still be queued.
      expected = await astGrep().findInFiles(
        napiLanguage(batch.language),
        { paths: [...byPath.keys()], matcher },
        onFile
      );
    } catch {
      // ast-grep refused the batch (nothing was delivered): the main thread searches it.
      for (const f of batch.files) await this.fallback(f, f.bytes.toString('utf8'));
      return;
    }
    check();
    await allDelivered;
    await Promise.all(later);
  }

  /** Keeps one file's matches; returns the main-thread search when the file changed under us. */
  private collect(
    byPath: Map<string, NativeFile>,
    nodes: SgNode[],
    rungs: number[],
    compiled: CompiledPattern,
    state: RungState
  ): Promise<void> | undefined {
    if (nodes.length === 0) return undefined;
    const root = nodes[0]!.getRoot();
    const file = byPath.get(root.filename());
    if (!file) throw new Error(`ast-grep reported a file it was not given: ${root.filename()}`);
    const text = file.bytes.toString('utf8');
    // The root node spans the text minus leading whitespace: equal there, ast-grep parsed our text.
    const top = root.root();
    const r = top.range();
    if (text.slice(r.start.index, r.end.index) !== top.text()) return this.fallback(file, text);
    const doc: SourceDocument = { file: file.rel, language: file.language, source: text, parsed: text };
    let kept = false;
    for (const node of nodes) {
      const rung =
        rungs.length === 1 ? rungs[0]! : rungs.find((i) => i <= state.best && node.matches(compiled.rungs[i]!.matcher));
      if (rung === undefined || rung > state.best) continue;
      state.byRung[rung]!.push(toMatch(doc, node, this.options.names));
      state.best = Math.min(state.best, rung);
      kept = true;
    }
    if (kept) this.options.onHit(file.rel, text);
    return undefined;
  }

  private async fallback(file: NativeFile, text: string): Promise<void> {
    const doc: SourceDocument = { file: file.rel, language: file.language, source: text, parsed: text };
    if (await this.options.fallback(doc)) this.options.onHit(file.rel, text);
  }
}
