/**
 * Values of files the actor may not read, kept out of text a language server derives from
 * them. The location gate (`tools/lsp/result-gate.ts`) drops what *points into* a deny-ruled
 * file, but a server also follows data flow: `k = API_KEY` in an allowed file hovers as
 * `Literal['sk-…']`, and a diagnostic quotes the same type. So the registry builds, per call
 * of a tool that relays server text ({@link ToolDefinition.relaysServerText}) and for the
 * diagnostics a write hook adds, the set of literal values of every deny-ruled file in the
 * workspace and hides them the way known secrets are hidden (`security/redaction.ts`).
 *
 * Bounded: nothing is walked while no rule denies anything (the default policy); the walk
 * stops at {@link LIMITS}; each file's values are re-read only when its stat changes.
 */
import { readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { evaluatePolicy, globMatch, type PolicyRule } from '../policy/policy.js';
import type { ToolTier } from '../ports/vocabulary.js';
import { mapStrings } from '../security/redaction.js';
import { walkFiles } from '../workspace/walk.js';

/** Bounds of one collection. */
export const LIMITS = { files: 20_000, bytesPerFile: 1 << 20, valuesPerFile: 2_000, values: 20_000 } as const;
/** The replacement text (a reader sees that something was there). */
export const WITHHELD = '[withheld]';
/** Values at least this long are hidden wherever they appear; shorter ones only as a whole quoted literal. */
const ANYWHERE_CHARS = 8;
/** Shorter string values are never hidden (`"id"`, `"ok"` would blank half a hover). */
const MIN_QUOTED_CHARS = 4;
/** How long one walk's file list is reused (a burst of calls walks once). */
const WALK_TTL_MS = 2_000;

/** Folder names that hold installed or bundled library code, not a person's files (their text may be shown). */
export const LIBRARY_SEGMENTS: ReadonlySet<string> = new Set(['site-packages', 'dist-packages', 'typeshed-fallback']);

interface FileValues {
  stamp: string;
  values: string[];
}

/** Which files of a workspace the actor may not read, and their literal values. */
export class WithheldValues {
  private readonly perFile = new Map<string, FileValues>();
  private walked: { workspace: string; at: number; files: Promise<Walked> } | undefined;

  /**
   * The values to hide for a call of `tool` (tier `tier`) under `rules`: those of every
   * workspace file that `read` or the tool itself is denied, and of the files outside the
   * workspace that a `pyrightconfig.json` in it adds to the server's view (`extraPaths`),
   * which no tool may read.
   */
  async collect(
    workspace: string,
    rules: readonly PolicyRule[],
    tool: string,
    tier: ToolTier,
    signal: AbortSignal
  ): Promise<ValueSet> {
    // Only a deny rule that can reach `read` or this tool names files to walk for (`shell rm*` does not).
    const anyDeny = rules.some((r) => r.action === 'deny' && (globMatch(r.tool, 'read') || globMatch(r.tool, tool)));
    const walked = await this.files(workspace, signal);
    if (!anyDeny && walked.outside.length === 0) return EMPTY;
    const denied = (rel: string): boolean =>
      evaluatePolicy(rules, { tool: 'read', tier: 'read', subjects: [rel], subjectKind: 'path' }).action === 'deny' ||
      evaluatePolicy(rules, { tool, tier, subjects: [rel], subjectKind: 'path' }).action === 'deny';
    const sources = [
      ...(anyDeny ? walked.inside.filter(denied).map((rel) => path.join(workspace, rel)) : []),
      ...walked.outside
    ];
    const values = new Set<string>();
    for (const file of sources) {
      for (const v of await this.valuesOf(file)) {
        values.add(v);
        if (values.size >= LIMITS.values) return new ValueSet(values);
      }
    }
    return values.size ? new ValueSet(values) : EMPTY;
  }

  private files(workspace: string, signal: AbortSignal): Promise<Walked> {
    const now = Date.now();
    if (this.walked && this.walked.workspace === workspace && now - this.walked.at < WALK_TTL_MS)
      return this.walked.files;
    const files = (async (): Promise<Walked> => {
      const inside: string[] = [];
      const configs: string[] = [];
      for await (const rel of walkFiles(workspace, workspace, signal)) {
        inside.push(rel);
        if (path.posix.basename(rel) === 'pyrightconfig.json') configs.push(rel);
        if (inside.length >= LIMITS.files) break;
      }
      const outside: string[] = [];
      for (const folder of await extraPathsOutside(workspace, configs)) {
        for await (const rel of walkFiles(folder, folder, signal)) {
          outside.push(path.join(folder, rel));
          if (inside.length + outside.length >= LIMITS.files) break;
        }
      }
      return { inside, outside };
    })();
    this.walked = { workspace, at: now, files };
    files.catch(() => (this.walked = undefined));
    return files;
  }

  private async valuesOf(file: string): Promise<string[]> {
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) return [];
    const stamp = `${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
    const known = this.perFile.get(file);
    if (known?.stamp === stamp) return known.values;
    const text = info.size > LIMITS.bytesPerFile ? '' : await readFile(file, 'utf8').catch(() => '');
    const values = literalValues(text).slice(0, LIMITS.valuesPerFile);
    this.perFile.set(file, { stamp, values });
    return values;
  }
}

interface Walked {
  /** Workspace-relative files. */
  inside: string[];
  /** Absolute files outside the workspace that a server is configured to read. */
  outside: string[];
}

/**
 * Real folders outside the workspace that the workspace's `pyrightconfig.json` files name in
 * `extraPaths` (installed-library folders excepted). A file that is not plain JSON is skipped.
 */
async function extraPathsOutside(workspace: string, configs: readonly string[]): Promise<string[]> {
  const out = new Set<string>();
  const root = await realpath(workspace).catch(() => workspace);
  for (const rel of configs) {
    const file = path.join(workspace, rel);
    let extra: unknown;
    try {
      extra = (JSON.parse(await readFile(file, 'utf8')) as { extraPaths?: unknown }).extraPaths;
    } catch {
      continue;
    }
    if (!Array.isArray(extra)) continue;
    for (const p of extra) {
      if (typeof p !== 'string') continue;
      const real = await realpath(path.resolve(path.dirname(file), p)).catch(() => undefined);
      if (!real || real === root || real.startsWith(root + path.sep)) continue;
      if (real.split(path.sep).some((s) => LIBRARY_SEGMENTS.has(s))) continue;
      out.add(real);
    }
  }
  return [...out];
}

/** The values to hide in one result, and the function that hides them. */
export class ValueSet {
  private readonly anywhere: string[];
  private readonly quoted: Set<string>;
  private readonly fragments: string[];

  constructor(values: Iterable<string>) {
    const all = [...new Set(values)];
    // Longest first, so a value that contains another is replaced whole.
    this.anywhere = all.filter((v) => v.length >= ANYWHERE_CHARS).sort((a, b) => b.length - a.length);
    this.quoted = new Set(all);
    this.fragments = all.filter((v) => v.length >= MIN_QUOTED_CHARS && !/^\d+$/.test(v));
  }

  get size(): number {
    return this.quoted.size;
  }

  /**
   * `text` with each value replaced: a quoted literal (`'…'`, `"…"`, `` `…` ``, as hover and
   * diagnostics print literal types) that is a value or contains one — a server folds
   * `"sk-" + SUFFIX` into one literal — becomes `[withheld]` whole; a long value anywhere too.
   */
  hide(text: string): string {
    if (this.quoted.size === 0) return text;
    let out = text.replace(INNERMOST_QUOTED, (whole, _q: string, body: string) =>
      this.covers(body) ? WITHHELD : whole
    );
    out = out.replace(NUMBER, (n) => (n.length >= MIN_QUOTED_CHARS && this.quoted.has(n) ? WITHHELD : n));
    for (const v of this.anywhere) if (out.includes(v)) out = out.split(v).join(WITHHELD);
    return out;
  }

  /** Whether a quoted literal is, contains, or (cut short with `…`, as pyright prints long ones) starts a value. */
  private covers(body: string): boolean {
    if (this.quoted.has(body) || this.fragments.some((f) => body.includes(f))) return true;
    const cut = /^(.{4,}?)(?:…|\.\.\.)$/su.exec(body)?.[1];
    return cut !== undefined && this.fragments.some((f) => f.startsWith(cut));
  }

  /** A JSON-like value with every string inside hidden (objects and arrays copied). */
  hideDeep<T>(value: T): T {
    if (this.quoted.size === 0) return value;
    return mapStrings(value, (s) => this.hide(s)) as T;
  }
}

const EMPTY = new ValueSet([]);

/** A quoted literal as printed by a server or written in source (one line; escapes kept). */
const QUOTED = /(['"`])((?:\\.|(?!\1)[^\\\n])*)\1/g;
/** A quoted literal with no other quote inside (`"Literal['…']"` hides only the inner literal). */
const INNERMOST_QUOTED = /(['"`])((?:\\.|[^'"`\\\n])*)\1/g;
/** A number token (not part of a name, a longer number, or a `file:line` label). */
const NUMBER = /(?<![\w.:])-?\d[\d_]*(?:\.\d+)?(?![\w.])/g;
/** Triple-quoted strings, which may span lines. */
const TRIPLE = /("""|''')([\s\S]*?)\1/g;
/** `NAME = value` / `name: value` lines of a dotenv, ini or YAML file (unquoted values). */
const ASSIGNED = /^[ \t]*(?:export[ \t]+)?[\w.-]+[ \t]*[=:][ \t]*([^\s'"#][^\n#]*?)[ \t]*$/gm;

/**
 * The literal values in a file's text: quoted strings (their source text and, when it
 * differs, the text with the usual escapes decoded, which is how a server prints them),
 * numbers, triple-quoted strings and unquoted `KEY=value` right-hand sides.
 */
export function literalValues(text: string): string[] {
  const out = new Set<string>();
  const add = (v: string): void => {
    const t = v.trim();
    if (t.length >= MIN_QUOTED_CHARS || /^-?\d/.test(t)) out.add(t);
  };
  for (const m of text.matchAll(TRIPLE)) for (const line of m[2]!.split('\n')) add(line);
  for (const m of text.replace(TRIPLE, '').matchAll(QUOTED)) {
    add(m[2]!);
    const decoded = decodeEscapes(m[2]!);
    if (decoded !== m[2]) add(decoded);
  }
  for (const m of text.matchAll(NUMBER))
    if (m[0].replace(/[-_.]/g, '').length >= MIN_QUOTED_CHARS) add(m[0].replace(/_/g, ''));
  for (const m of text.matchAll(ASSIGNED)) if (m[1]!.length >= ANYWHERE_CHARS) add(m[1]!);
  return [...out];
}

function decodeEscapes(body: string): string {
  try {
    return JSON.parse(
      `"${body
        .replace(/\\'/g, "'")
        .replace(/\\`/g, '`')
        .replace(/(?<!\\)"/g, '\\"')}"`
    ) as string;
  } catch {
    return body;
  }
}
