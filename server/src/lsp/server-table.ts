/**
 * The language-server table (LSP-2, LSP-5): which server serves which files, found by which
 * root markers, started with which executable. Two built-in entries (basedpyright for
 * Python and notebooks, typescript-language-server for TS/JS) plus entries from JSON files
 * `~/.cellmate/lsp.json` and `<workspace>/.cellmate/lsp.json` (later files override an
 * entry of the same name; `"disabled": true` removes one). Pure apart from reading those
 * two files.
 *
 * Workspace trust: a workspace's own file (a cloned repository's) may map extensions, set
 * root markers, pick the notebook mode or disable a server, but what starts a process — a
 * `command` and its `args`, a `checker`, and the `settings` / `initializationOptions` a
 * server acts on (pyright runs the `python.pythonPath` it is given) — applies only in a
 * trusted workspace (`security/workspace-trust.ts`). Otherwise the agent's first `lsp` call
 * in that folder (read tier, no approval) would run whatever the repository says.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { cellmateHome } from '../config/home-paths.js';
import { trustHint } from '../security/workspace-trust.js';

/** One language server the companion may start. */
export interface ServerEntry {
  /** Unique name, e.g. `basedpyright`, `gopls`. */
  name: string;
  /** File extensions it serves, with the dot (`.py`), mapped to the LSP language id. */
  languages: Readonly<Record<string, string>>;
  /** The executable (a bare name is looked up, see `locate.ts`), and its arguments. */
  command: string;
  args: readonly string[];
  /** Files or folders whose presence makes a folder a root (nearest one wins). */
  rootMarkers: readonly string[];
  /** Serves `.ipynb` as LSP 3.17 notebook documents (else: one concatenated virtual document). */
  notebooks?: 'native' | 'concatenated';
  /**
   * Answers LSP 3.17 `textDocument/diagnostic` for text documents without declaring
   * `diagnosticProvider` (a server that declares it is pulled anyway); its diagnostics are
   * then pulled after a sync instead of awaited with a quiet period.
   */
  pullDiagnostics?: boolean;
  /** `initializationOptions` sent with `initialize`. */
  initializationOptions?: unknown;
  /** `workspace/configuration` answers: one nested object, a section `a.b` is `settings.a.b`. */
  settings?: Readonly<Record<string, unknown>>;
  /** The project checker `diagnostics "*"` runs in the root (e.g. `basedpyright`, `tsc --noEmit`). */
  checker?: { command: string; args: readonly string[]; format: CheckerFormat };
  /** Where the entry came from (status shows it). */
  source: string;
}

/** How a checker's output is parsed into diagnostics. */
export type CheckerFormat = 'pyright-json' | 'tsc' | 'gnu';

/** The two servers Cellmate ships (npm dependencies of `@cellmate/server`). */
export const BUILTIN_SERVERS: readonly ServerEntry[] = [
  {
    name: 'basedpyright',
    languages: { '.py': 'python', '.pyi': 'python', '.ipynb': 'python' },
    command: 'basedpyright-langserver',
    args: ['--stdio'],
    rootMarkers: ['pyproject.toml', 'pyrightconfig.json', 'setup.py', 'setup.cfg', 'requirements.txt', '.git'],
    notebooks: 'native',
    // It registers pull diagnostics only for clients that take dynamic registration (then it
    // stops pushing, and its pulls answer nothing for notebook cells); without that it keeps
    // pushing and answers pulls of text documents, checked on the spot.
    pullDiagnostics: true,
    // Standard checking (the errors a reviewer would flag, not basedpyright's "recommended" noise).
    settings: {
      basedpyright: {
        analysis: { diagnosticMode: 'openFilesOnly', typeCheckingMode: 'standard', autoImportCompletions: true }
      },
      python: {
        analysis: { diagnosticMode: 'openFilesOnly', typeCheckingMode: 'standard', autoImportCompletions: true }
      }
    },
    checker: { command: 'basedpyright', args: ['--outputjson'], format: 'pyright-json' },
    source: 'built-in'
  },
  {
    name: 'typescript',
    languages: {
      '.ts': 'typescript',
      '.tsx': 'typescriptreact',
      '.mts': 'typescript',
      '.cts': 'typescript',
      '.js': 'javascript',
      '.jsx': 'javascriptreact',
      '.mjs': 'javascript',
      '.cjs': 'javascript'
    },
    command: 'typescript-language-server',
    args: ['--stdio'],
    rootMarkers: ['tsconfig.json', 'jsconfig.json', 'package.json'],
    // No syntax-only server: while the project loads it answers definition with the import
    // line and hover with "import x" — plausible and wrong. Wait for the real answer instead.
    initializationOptions: { tsserver: { useSyntaxServer: 'never' } },
    checker: { command: 'tsc', args: ['--noEmit', '--pretty', 'false'], format: 'tsc' },
    source: 'built-in'
  }
];

const entrySchema = z.strictObject({
  languages: z.union([z.record(z.string(), z.string()), z.array(z.string())]).optional(),
  command: z.string().min(1).optional(),
  args: z.array(z.string()).optional(),
  rootMarkers: z.array(z.string().min(1)).min(1).optional(),
  notebooks: z.enum(['native', 'concatenated']).optional(),
  initializationOptions: z.unknown().optional(),
  settings: z.record(z.string(), z.unknown()).optional(),
  checker: z
    .strictObject({
      command: z.string().min(1),
      args: z.array(z.string()),
      format: z.enum(['pyright-json', 'tsc', 'gnu'])
    })
    .optional(),
  disabled: z.boolean().optional()
});
const fileSchema = z.strictObject({
  servers: z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/), entrySchema).optional(),
  /** Home file only: workspaces whose own file may start commands (`true`: every one). */
  trustedWorkspaces: z.union([z.literal(true), z.array(z.string())]).optional()
});

/** What a workspace's own file may set only in a trusted workspace (it starts or steers a process). */
const EXEC_KEYS = ['command', 'args', 'checker', 'settings', 'initializationOptions'] as const;

/** Options of {@link loadServerTable}. */
export interface ServerTableOptions {
  /** The workspace: a file inside it is the workspace's own (see the module comment); absent: every file applies in full. */
  workspace?: string;
  /** Whether the workspace is trusted (its own file then applies in full too). */
  trusted?: boolean;
  /** The home file named in the "how to trust" hint. */
  homeFile?: string;
}

/** A table file that could not be used (the message names the file and the problem). */
export class ServerTableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ServerTableError';
  }
}

/** Where the table files are read from. */
export function tableFiles(workspace: string, env: NodeJS.ProcessEnv): string[] {
  const home = cellmateHome(env);
  return [path.join(home, 'lsp.json'), path.join(workspace, '.cellmate', 'lsp.json')];
}

/**
 * The effective table: built-ins, then each file in order (an entry of the same name is
 * merged over the earlier one; a new one needs `languages`, `command` and `rootMarkers`).
 * A broken file is reported through `onProblem` and skipped, never fatal.
 */
export async function loadServerTable(
  files: readonly string[],
  onProblem: (error: ServerTableError) => void = () => {},
  options: ServerTableOptions = {}
): Promise<ServerEntry[]> {
  const table = new Map<string, ServerEntry>(BUILTIN_SERVERS.map((e) => [e.name, e]));
  const workspace = options.workspace === undefined ? undefined : path.resolve(options.workspace);
  const own = (file: string): boolean => workspace !== undefined && path.resolve(file).startsWith(workspace + path.sep);
  const parsedFiles: Array<{ file: string; parsed: z.infer<typeof fileSchema> }> = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      continue; // no file: nothing to add
    }
    try {
      parsedFiles.push({ file, parsed: fileSchema.parse(JSON.parse(text)) });
    } catch (error) {
      const why =
        error instanceof z.ZodError
          ? error.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`).join('; ')
          : (error as Error).message;
      onProblem(
        new ServerTableError(
          `${file}: ${why}. Expected {"servers": {"gopls": {"languages": [".go"], "command": "gopls", "args": [], "rootMarkers": ["go.mod"]}}}.`
        )
      );
    }
  }
  const trusted = workspace === undefined || options.trusted === true;
  const homeFile = options.homeFile ?? files.find((f) => !own(f)) ?? '~/.cellmate/lsp.json';
  for (const { file, parsed } of parsedFiles) {
    const untrusted = !trusted && own(file);
    for (const [name, given] of Object.entries(parsed.servers ?? {})) {
      let raw = given;
      if (untrusted) {
        const ignored = EXEC_KEYS.filter((k) => raw[k] !== undefined);
        if (ignored.length) {
          raw = Object.fromEntries(
            Object.entries(raw).filter(([k]) => !(EXEC_KEYS as readonly string[]).includes(k))
          ) as typeof raw;
          onProblem(
            new ServerTableError(
              `${file}: server "${name}": ignored ${ignored.map((k) => `"${k}"`).join(', ')} — a workspace's own file may start or steer a language server only in a workspace you trust; ` +
                `${trustHint(workspace!, homeFile)}, or define the server there.`
            )
          );
        }
      }
      if (raw.disabled) {
        table.delete(name);
        continue;
      }
      const before = table.get(name);
      const languages =
        raw.languages === undefined
          ? before?.languages
          : Array.isArray(raw.languages)
            ? Object.fromEntries(raw.languages.map((ext) => [ext, ext.replace(/^\./, '')]))
            : raw.languages;
      const command = raw.command ?? before?.command;
      const rootMarkers = raw.rootMarkers ?? before?.rootMarkers;
      if (!languages || !command || !rootMarkers) {
        onProblem(new ServerTableError(`${file}: server "${name}" needs "languages", "command" and "rootMarkers".`));
        continue;
      }
      table.set(name, {
        ...before,
        name,
        languages,
        command,
        rootMarkers,
        args: raw.args ?? before?.args ?? [],
        ...(raw.notebooks ? { notebooks: raw.notebooks } : {}),
        ...(raw.initializationOptions !== undefined ? { initializationOptions: raw.initializationOptions } : {}),
        ...(raw.settings ? { settings: raw.settings } : {}),
        ...(raw.checker ? { checker: raw.checker } : {}),
        source: file
      });
    }
  }
  return [...table.values()];
}

/** The entries that serve a file, by its extension (first match first). */
export function entriesFor(table: readonly ServerEntry[], file: string): ServerEntry[] {
  const ext = path.extname(file).toLowerCase();
  return table.filter((e) => Object.prototype.hasOwnProperty.call(e.languages, ext));
}

/** The LSP language id of a file for an entry. */
export function languageIdOf(entry: ServerEntry, file: string): string {
  return entry.languages[path.extname(file).toLowerCase()] ?? 'plaintext';
}
