/**
 * The ast-grep CLI (`@ast-grep/cli`, the same engine as `@ast-grep/napi`) as the parser and
 * matcher of plain source files (SPEC AST-3 and its speed target).
 *
 * Why a second door to the same engine: napi hands JavaScript UTF-16 offsets, so it parses
 * every file as UTF-16; measured on the venv's 13,478 site-packages files, its
 * `findInFiles` spends ~1.3× the CPU of the CLI on the same files and pattern, which bounds
 * any search of a pattern with no literal word (nothing to prefilter on) at ~1.3× `sg`. The
 * CLI reads UTF-8 and reports byte offsets; `matches.ts` turns them into the same matches.
 *
 * What runs: the platform package's own binary (`@ast-grep/cli-<platform>`, resolved from
 * `@ast-grep/cli` the way its postinstall does, so no install script is needed) in a
 * checkout, else `ast-grep` in `$CELLMATE_TOOL_BINS` (a wheel: the PyPI `ast-grep-cli`
 * dependency's script) — only a release of the same minor version as `@ast-grep/napi` — with a
 * config file Cellmate writes into a private temporary folder — never a workspace's
 * `sgconfig.yml` (`-c` is explicit and the process runs in that folder). Python is the
 * config's custom language, loaded from `@ast-grep/lang-python`'s own `parser.so`: the
 * grammar napi, notebooks and the code graph use (grammars/check-abi.mjs). Files are passed
 * one by one by absolute path, already chosen by Cellmate's walk and policy.
 *
 * The CLI's JSON does not say which nodes of a `$$$NAME` run are named (napi's `isNamed`,
 * which captures show); each rule asks ast-grep itself with a `rewrite` transform that
 * spells each node of the run `N` (a `$META` pattern: named nodes only) or `U`.
 *
 * `CELLMATE_STRUCTURAL_ENGINE=napi` turns this off (napi's `findInFiles` does the work); so
 * does a binary that is missing or does not run.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { NapiConfig } from '@ast-grep/napi';
import { toolBinDirs } from '../workspace/tool-bins.js';
import { dynamicLanguagePackage } from './ast-languages.js';
import type { StructuralLanguage } from './languages.js';

/** A runnable CLI and the config it runs with. */
export interface SgCli {
  binary: string;
  /** The `sgconfig.yml` Cellmate wrote (its folder is the process's working directory). */
  config: string;
  version: string;
}

/** One node as the CLI's JSON reports it (offsets in UTF-8 bytes). */
export interface SgJsonNode {
  text: string;
  range: { byteOffset: { start: number; end: number }; start: { line: number; column: number } };
}

/** One match line of `--json=stream`. */
export interface SgJsonMatch extends SgJsonNode {
  file: string;
  ruleId: string;
  metaVariables: {
    single: Record<string, SgJsonNode>;
    multi: Record<string, SgJsonNode[]>;
    transformed: Record<string, string>;
  };
}

/** The name of each language in the CLI (Python: the config's custom language). */
const CLI_LANGUAGE: Record<StructuralLanguage, string> = {
  python: 'cellmatepython',
  javascript: 'javascript',
  typescript: 'typescript',
  tsx: 'tsx'
};

/** The file extensions the CLI gives each language (it matches them case-sensitively). */
const CLI_EXTENSIONS: Record<StructuralLanguage, readonly string[]> = {
  python: ['py', 'pyi'],
  javascript: ['js', 'mjs', 'cjs', 'jsx'],
  typescript: ['ts', 'mts', 'cts'],
  tsx: ['tsx']
};

/** True when the CLI sees `file` as `language` (by its extension, as written). */
export function cliTakes(file: string, language: StructuralLanguage): boolean {
  const dot = file.lastIndexOf('.');
  return dot >= 0 && CLI_EXTENSIONS[language].includes(file.slice(dot + 1));
}

const require = createRequire(import.meta.url);
let located: SgCli | null | undefined;

/** The CLI, found and checked on first use; undefined when it cannot run here (napi is used). */
export function sgCli(): SgCli | undefined {
  if (located === undefined) located = findSgCli() ?? null;
  return located ?? undefined;
}

function platformPackage(): string | undefined {
  const { platform, arch } = process;
  if (platform === 'linux' && (arch === 'x64' || arch === 'arm64')) return `@ast-grep/cli-linux-${arch}-gnu`;
  if (platform === 'darwin' && (arch === 'x64' || arch === 'arm64')) return `@ast-grep/cli-darwin-${arch}`;
  if (platform === 'win32' && (arch === 'x64' || arch === 'arm64' || arch === 'ia32'))
    return `@ast-grep/cli-win32-${arch}-msvc`;
  return undefined;
}

/** The binaries to try, in order (see the module doc). */
function candidates(env: NodeJS.ProcessEnv, npm: boolean): string[] {
  const exe = process.platform === 'win32' ? 'ast-grep.exe' : 'ast-grep';
  const found: string[] = [];
  const pkg = platformPackage();
  if (npm && pkg) {
    try {
      const cli = createRequire(require.resolve('@ast-grep/cli/package.json'));
      found.push(path.join(path.dirname(cli.resolve(`${pkg}/package.json`)), exe));
    } catch {
      // not installed here (a wheel's bundle): the tool folders may have it
    }
  }
  for (const dir of toolBinDirs(env)) found.push(path.join(dir, exe));
  return found;
}

/**
 * Finds a CLI that runs and is the same engine as napi (same minor release), and writes its
 * config. `npm: false` skips the npm package (tests of the tool-folder path).
 */
export function findSgCli(env: NodeJS.ProcessEnv = process.env, options: { npm?: boolean } = {}): SgCli | undefined {
  if (env.CELLMATE_STRUCTURAL_ENGINE === 'napi') return undefined;
  const napi = (require('@ast-grep/napi/package.json') as { version: string }).version;
  const minor = napi.split('.').slice(0, 2).join('.');
  let binary: string | undefined;
  let version = '';
  for (const candidate of candidates(env, options.npm ?? true)) {
    const probe = spawnSync(candidate, ['--version'], {
      encoding: 'utf8',
      env: {},
      timeout: 10_000,
      windowsHide: true
    });
    const v = probe.status === 0 ? /^ast-grep (\d+\.\d+)\.\d+/.exec(probe.stdout.trim()) : null;
    if (v && v[1] === minor) {
      binary = candidate;
      version = probe.stdout.trim();
      break;
    }
  }
  if (!binary) return undefined;
  let python: ReturnType<typeof dynamicLanguagePackage>;
  try {
    python = dynamicLanguagePackage('python');
  } catch {
    return undefined;
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cellmate-sg-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const config = path.join(dir, 'sgconfig.yml');
  // JSON is YAML: no quoting rules to get wrong for the library's path.
  writeFileSync(
    config,
    JSON.stringify({
      ruleDirs: [],
      customLanguages: {
        [CLI_LANGUAGE.python]: {
          libraryPath: python.libraryPath,
          extensions: CLI_EXTENSIONS.python,
          expandoChar: python.expandoChar,
          languageSymbol: python.languageSymbol
        }
      }
    }),
    { mode: 0o600 }
  );
  return { binary, config, version };
}

/** A name built from `stem` that `pattern` does not use (for Cellmate's own metavariables). */
function freshName(stem: string, pattern: string): string {
  let name = stem;
  for (let i = 0; pattern.includes(name); i++) name = `${stem}${i}`;
  return name;
}

/** What one scan runs: a language, the ladder rungs as rules (`r<index>`), the files. */
export interface SgScan {
  language: StructuralLanguage;
  /** The pattern as written (to keep Cellmate's own metavariable names clear of it). */
  pattern: string;
  rungs: Array<{ index: number; matcher: NapiConfig }>;
  /** The capturing `$$$NAME` metavariables, whose named nodes a match must tell apart. */
  multi: string[];
  paths: string[];
  signal: AbortSignal;
}

/** Per `$$$NAME`: the transform under which a match's `N`/`U` marks for its nodes arrive. */
export type NamedKeys = Record<string, string>;

/** The {@link NamedKeys} a scan of `pattern` uses. */
export function namedKeys(pattern: string, multi: readonly string[]): NamedKeys {
  return Object.fromEntries(multi.map((name, i) => [name, freshName(`CMNAMED${i}X`, pattern)]));
}

/** Options every call takes: JSON lines, and no ignore file may drop a file it is named. */
const OUTPUT = [
  '--json=stream',
  ...['hidden', 'dot', 'exclude', 'global', 'parent', 'vcs'].flatMap((k) => ['--no-ignore', k])
];

/**
 * `ast-grep run` for one rung with no `$$$NAME` to tell apart: a quarter less CPU per file
 * than `scan` with the same rule (measured on the venv's site-packages). Undefined when the
 * scan needs `scan`.
 */
function runArgs(cli: SgCli, scan: SgScan): string[] | undefined {
  if (scan.rungs.length !== 1 || scan.multi.length > 0) return undefined;
  const rule = scan.rungs[0]!.matcher.rule as { pattern?: unknown } | undefined;
  if (!rule || Object.keys(rule).length !== 1) return undefined;
  const pattern = rule.pattern;
  let selector: string[] = [];
  let text: string;
  if (typeof pattern === 'string') text = pattern;
  else if (pattern && typeof pattern === 'object' && Object.keys(pattern).length === 2) {
    const { context, selector: kind } = pattern as { context?: unknown; selector?: unknown };
    if (typeof context !== 'string' || typeof kind !== 'string') return undefined;
    text = context;
    selector = ['--selector', kind];
  } else return undefined;
  return [
    'run',
    '-c',
    cli.config,
    '--custom-languages',
    'allow',
    '--lang',
    CLI_LANGUAGE[scan.language],
    '--pattern',
    text,
    ...selector,
    ...OUTPUT,
    '--',
    ...scan.paths
  ];
}

/** `ast-grep scan` with each rung as its own rule (`r<index>`) and the named marks of `$$$NAME` runs. */
function scanArgs(cli: SgCli, scan: SgScan, node: string, keys: NamedKeys): string[] {
  const rules = scan.rungs.map(({ index, matcher }) =>
    JSON.stringify({
      id: `r${index}`,
      language: CLI_LANGUAGE[scan.language],
      severity: 'hint',
      rule: matcher.rule,
      ...(scan.multi.length > 0
        ? {
            rewriters: [
              { id: 'cellmate-named', rule: { pattern: `$${node}` }, fix: 'N' },
              { id: 'cellmate-unnamed', rule: { regex: '[\\s\\S]*' }, fix: 'U' }
            ],
            transform: Object.fromEntries(
              scan.multi.map((name) => [
                keys[name],
                {
                  rewrite: { source: `$$$${name}`, rewriters: ['cellmate-named', 'cellmate-unnamed'], joinBy: '' }
                }
              ])
            )
          }
        : {})
    })
  );
  return [
    'scan',
    '-c',
    cli.config,
    '--custom-languages',
    'allow',
    '--inline-rules',
    rules.join('\n---\n'),
    ...OUTPUT,
    '--',
    ...scan.paths
  ];
}

/** Runs one scan; calls `onMatch` per match line. Rejects when the CLI fails (the caller falls back). */
export function sgScan(cli: SgCli, scan: SgScan, onMatch: (m: SgJsonMatch) => void): Promise<void> {
  const node = freshName('CMNODE', scan.pattern);
  const keys = namedKeys(scan.pattern, scan.multi);
  const args = runArgs(cli, scan) ?? scanArgs(cli, scan, node, keys);
  // `run` reports no rule: its one rung is the scan's.
  const ruleId = args[0] === 'run' ? `r${scan.rungs[0]!.index}` : undefined;
  return new Promise<void>((resolve, reject) => {
    if (scan.signal.aborted) {
      reject(scan.signal.reason);
      return;
    }
    // An empty environment: the CLI needs none, and the companion's (API keys) is not its business.
    const child = spawn(cli.binary, args, {
      cwd: path.dirname(cli.config),
      env: {},
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true
    });
    const onAbort = (): void => {
      child.kill('SIGKILL');
    };
    scan.signal.addEventListener('abort', onAbort, { once: true });
    let stderr = '';
    let failure: unknown;
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => {
      if (stderr.length < 4000) stderr += d;
    });
    // Lines split on the bytes (readline's decoding and regexp cost three times the parse).
    let rest: Buffer | undefined;
    const onLine = (line: string): void => {
      if (failure !== undefined || line.length === 0) return;
      try {
        const m = JSON.parse(line) as SgJsonMatch;
        if (ruleId !== undefined) m.ruleId = ruleId;
        onMatch(m);
      } catch (e) {
        failure = e;
        child.kill('SIGKILL');
      }
    };
    child.stdout.on('data', (chunk: Buffer) => {
      const buf = rest ? Buffer.concat([rest, chunk]) : chunk;
      let i = 0;
      for (let j = buf.indexOf(10, i); j >= 0; j = buf.indexOf(10, i)) {
        onLine(buf.toString('utf8', i, j));
        i = j + 1;
      }
      rest = i < buf.length ? buf.subarray(i) : undefined;
    });
    let exited: { code: number | null; error?: Error } | undefined;
    let linesDone = false;
    const settle = (): void => {
      if (!exited || !linesDone) return;
      scan.signal.removeEventListener('abort', onAbort);
      if (scan.signal.aborted) reject(scan.signal.reason);
      else if (failure !== undefined) reject(failure);
      else if (exited.error) reject(exited.error);
      // `run` exits 1 when nothing matched.
      else if (exited.code !== 0 && !(ruleId !== undefined && exited.code === 1 && stderr.trim() === ''))
        reject(new Error(`ast-grep exited with ${exited.code}: ${stderr.trim().slice(0, 500)}`));
      else resolve();
    };
    child.stdout.on('end', () => {
      if (rest) onLine(rest.toString('utf8'));
      rest = undefined;
      linesDone = true;
      settle();
    });
    child.on('error', (error) => {
      exited = { code: null, error };
      linesDone = true;
      settle();
    });
    child.on('close', (code) => {
      exited ??= { code };
      settle();
    });
  });
}
