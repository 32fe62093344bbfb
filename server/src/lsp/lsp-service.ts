/**
 * The language servers of one workspace (LSP-2, LSP-5): which entry and root serve a file
 * (nearest root marker; executable resolved, project bins first), one client per (entry,
 * root) on the shared `ProcessSupervisor` — started lazily on the first request that needs
 * it, restarted with backoff after a crash, a failed start remembered for a few minutes
 * (not respawned on every call), evicted when idle —, `reload` restarting the one of a
 * root, `status` naming what runs and, for a server that cannot, which half (root marker
 * or executable) is missing.
 */
import path from 'node:path';
import type { Logger } from '../config/logger.js';
import { ProcessSupervisor, SupervisorError } from '../supervisor/index.js';
import type { FrameBudget } from '../framing/index.js';
import { LspClient } from './lsp-client.js';
import { findRoot, locateServer } from './locate.js';
import { entriesFor, loadServerTable, tableFiles, type ServerEntry } from './server-table.js';
import { isWorkspaceTrusted } from '../security/workspace-trust.js';
import { cellmatePython } from '../workspace/cellmate-python.js';
import { bundledTsserver } from '../workspace/tool-bins.js';
import { launchEntry, type PinnedTools } from './untrusted-launch.js';
import { kernelPythonFor, type SpecCache } from './kernel-python.js';

/**
 * The "marker" of a notebook with no root marker above it: its own folder is the root
 * (bounded by the workspace) and its kernel's Python the interpreter (`kernel-python.ts`).
 */
export const NOTEBOOK_FOLDER = "no root marker: the notebook's folder";

/** How long a sync waits for a first publish by default (`CELLMATE_LSP_DIAGNOSTICS_WAIT_MS`). */
export const DIAGNOSTICS_WAIT_MS = 3_000;
/** Idle servers are stopped after this long (`CELLMATE_LSP_IDLE_MS`). */
export const DEFAULT_LSP_IDLE_MS = 10 * 60_000;
/** Servers one workspace runs at once (`CELLMATE_LSP_MAX_SERVERS`); past it the least recently used stops. */
export const DEFAULT_MAX_SERVERS = 4;
/** Servers the whole companion runs at once, over every workspace's service (`CELLMATE_LSP_MAX_SERVERS_TOTAL`). */
export const DEFAULT_MAX_SERVERS_TOTAL = 8;

/**
 * Every live service of this process: the total cap counts their servers together (a
 * read-tier `lsp diagnostics "<glob>"` over many roots would otherwise start a server per
 * root, ~150 MB each, with no bound).
 */
const services = new Set<LspService>();

/** Why no server serves a file. */
export type UnavailableReason = 'no-server' | 'no-root-marker' | 'executable-not-found' | 'start-failed';

/** A file has no usable server; `message` says why and what to do. */
export class LspUnavailableError extends Error {
  constructor(
    readonly reason: UnavailableReason,
    message: string,
    readonly entry?: ServerEntry
  ) {
    super(message);
    this.name = 'LspUnavailableError';
  }
}

/** Whether an entry can serve a file. */
export type Availability =
  | { ok: true; entry: ServerEntry; root: string; marker: string; executable: string; trusted: boolean }
  | { ok: false; entry: ServerEntry; reason: Exclude<UnavailableReason, 'no-server'>; message: string };

/** Options of {@link LspService}. */
export interface LspServiceOptions {
  workspace: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** Folders of the servers Cellmate ships (its own `node_modules/.bin`). */
  bundledBins: readonly string[];
  /** The interpreter and tsserver an untrusted workspace's servers get (default: Cellmate's own, `untrusted-launch.ts`). */
  pinned?: Partial<PinnedTools>;
  /** Servers this workspace runs at once (default {@link DEFAULT_MAX_SERVERS} or `CELLMATE_LSP_MAX_SERVERS`). */
  maxServers?: number;
  /** Servers the process runs at once over all services (default {@link DEFAULT_MAX_SERVERS_TOTAL} or `CELLMATE_LSP_MAX_SERVERS_TOTAL`). */
  maxServersTotal?: number;
  /** The memory budget the servers' output counts against (default: the one the whole companion shares, `framing/frame-budget.ts`). */
  frameBudget?: FrameBudget;
  /** Table files (default `~/.cellmate/lsp.json`, `<workspace>/.cellmate/lsp.json`). */
  tableFiles?: readonly string[];
  idleMs?: number;
  /**
   * How long to wait for a server's diagnostics after a sync (default 3 s, or
   * `CELLMATE_LSP_DIAGNOSTICS_WAIT_MS`); later ones still arrive (write hook: next result).
   */
  diagnosticsWaitMs?: number;
}

/** A client serving a file. */
export interface Served {
  client: LspClient;
  entry: ServerEntry;
  root: string;
}

/** One supervised server for one (entry, root). */
interface Slot {
  entry: ServerEntry;
  root: string;
  executable: string;
  trusted: boolean;
  supervisor: ProcessSupervisor<LspClient>;
  /** When a call last asked for it (least recently used stops first past a cap). */
  lastUsed: number;
  /** The interpreter it was given for a notebook folder root (the kernel's Python), and why not the kernel's. */
  interpreter?: { python: string | undefined; note?: string };
}

export class LspService {
  private readonly slots = new Map<string, Slot>();
  private table: Promise<ServerEntry[]> | undefined;
  /** What the table files said was wrong or ignored (shown by `status`). */
  private tableProblems: string[] = [];
  private disposed = false;
  private readonly specs: SpecCache = new Map();

  constructor(private readonly options: LspServiceOptions) {
    services.add(this);
  }

  get workspace(): string {
    return this.options.workspace;
  }

  /** The environment servers and checkers start with (scrubbed at spawn). */
  get env(): NodeJS.ProcessEnv {
    return this.options.env;
  }

  /** How long a sync waits for the server's diagnostics (see {@link LspServiceOptions.diagnosticsWaitMs}). */
  get diagnosticsWaitMs(): number {
    return this.options.diagnosticsWaitMs ?? DIAGNOSTICS_WAIT_MS;
  }

  /** Folders of the servers Cellmate ships. */
  get bundledBins(): readonly string[] {
    return this.options.bundledBins;
  }

  /** Whether the workspace is trusted now (asked at every resolution: trusting it applies from the next start). */
  trusted(): boolean {
    return isWorkspaceTrusted(this.options.workspace, this.options.env);
  }

  /** What an untrusted workspace's servers and checkers are pinned to (`untrusted-launch.ts`). */
  get pinned(): PinnedTools {
    return { python: cellmatePython(this.options.env), tsserver: bundledTsserver(), ...this.options.pinned };
  }

  /** The effective server table (read once; {@link reload} reads it again). */
  servers(): Promise<ServerEntry[]> {
    if (!this.table) {
      this.tableProblems = [];
      const defaults = tableFiles(this.options.workspace, this.options.env);
      const files = this.options.tableFiles ?? defaults;
      this.table = loadServerTable(
        files,
        (e) => {
          this.tableProblems.push(e.message);
          this.options.logger.warn(e.message);
        },
        { workspace: this.options.workspace, trusted: this.trusted(), homeFile: defaults[0] }
      );
    }
    return this.table;
  }

  /** For each entry claiming the file: can it serve it, and if not, why. */
  async availability(absolute: string): Promise<Availability[]> {
    const entries = entriesFor(await this.servers(), absolute);
    const trusted = this.trusted();
    return Promise.all(
      entries.map(async (entry): Promise<Availability> => {
        const found =
          (await findRoot(absolute, entry.rootMarkers, this.options.workspace)) ??
          notebookFolder(absolute, this.options.workspace);
        if (!found) {
          return {
            ok: false,
            entry,
            reason: 'no-root-marker',
            message: `${entry.name}: no root marker (${entry.rootMarkers.join(', ')}) between ${rel(this.options.workspace, path.dirname(absolute))} and the workspace root`
          };
        }
        const executable = await locateServer(entry, {
          root: found.root,
          workspace: this.options.workspace,
          pathEnv: this.options.env.PATH,
          bundledBins: this.options.bundledBins,
          trusted
        });
        if (!executable) {
          const where = trusted
            ? 'in node_modules/.bin or .venv/bin of the project, nor on PATH'
            : "on PATH nor among the servers Cellmate ships (the project's own node_modules/.bin and .venv/bin count only in a workspace you trust)";
          return {
            ok: false,
            entry,
            reason: 'executable-not-found',
            message: `${entry.name}: root ${rel(this.options.workspace, found.root)} (${found.marker}) found, but executable not found: "${entry.command}" is not ${where}`
          };
        }
        return { ok: true, entry, root: found.root, marker: found.marker, executable, trusted };
      })
    );
  }

  /** The running (or just started) server for a file; throws {@link LspUnavailableError}. */
  async serverFor(absolute: string, signal?: AbortSignal): Promise<Served> {
    if (this.disposed) throw new LspUnavailableError('start-failed', 'The language servers are shut down.');
    const all = await this.availability(absolute);
    const usable = all.find((a): a is Extract<Availability, { ok: true }> => a.ok);
    if (!usable) {
      if (all.length === 0)
        throw new LspUnavailableError(
          'no-server',
          `No language server is configured for ${path.extname(absolute) || 'files without an extension'} files (${rel(this.options.workspace, absolute)}). Add one in .cellmate/lsp.json.`
        );
      const first = all[0] as Extract<Availability, { ok: false }>;
      throw new LspUnavailableError(
        first.reason,
        `${all.map((a) => (a.ok ? '' : a.message)).join('; ')}.`,
        first.entry
      );
    }
    // A notebook in a plain folder: its kernel's Python, so what the kernel imports resolves.
    const interpreter =
      usable.marker === NOTEBOOK_FOLDER
        ? await kernelPythonFor(absolute, {
            workspace: this.options.workspace,
            env: this.options.env,
            trusted: usable.trusted,
            cache: this.specs
          })
        : undefined;
    const slot = this.slotFor(usable.entry, usable.root, usable.executable, usable.trusted, interpreter);
    slot.lastUsed = Date.now();
    if (!live(slot)) await this.makeRoom(slot);
    try {
      return { client: await slot.supervisor.get(signal), entry: usable.entry, root: usable.root };
    } catch (error) {
      if (error instanceof SupervisorError && error.code === 'start-failed')
        throw new LspUnavailableError('start-failed', error.message, usable.entry);
      throw error;
    }
  }

  private slotFor(
    entry: ServerEntry,
    root: string,
    executable: string,
    trusted: boolean,
    interpreter?: Slot['interpreter']
  ): Slot {
    const key = `${entry.name}\u0000${root}`;
    const known = this.slots.get(key);
    // A new executable (a project venv appeared), a change of trust (what the server may
    // load) or another kernel's Python gets a new supervisor; the old one stops.
    if (
      known &&
      known.executable === executable &&
      known.trusted === trusted &&
      known.interpreter?.python === interpreter?.python
    )
      return known;
    if (known) void known.supervisor.dispose();
    const name = `${entry.name} for ${rel(this.options.workspace, root)}`;
    const log = (line: string): void => this.options.logger.info(`[${name}] ${line}`);
    const supervisor = new ProcessSupervisor<LspClient>({
      name,
      spawn: { command: executable, args: entry.args, cwd: root },
      log: this.options.logger,
      retryHint: 'fix it and call lsp with action "reload" to try now',
      idleMs: this.options.idleMs ?? DEFAULT_LSP_IDLE_MS,
      connect: (proc) =>
        LspClient.start(
          launchEntry(entry, executable, trusted, this.pinned, interpreter?.python),
          root,
          proc,
          log,
          this.options.frameBudget
        ),
      shutdown: (client) => client.shutdown(),
      disposeClient: (client) => client.dispose()
    });
    const slot: Slot = {
      entry,
      root,
      executable,
      trusted,
      supervisor,
      lastUsed: Date.now(),
      ...(interpreter ? { interpreter } : {})
    };
    this.slots.set(key, slot);
    return slot;
  }

  /**
   * Before `wanted` starts: while this workspace, or the process, runs as many servers as
   * its cap allows, the least recently used one (never `wanted`) is stopped. It starts
   * again on the next call that needs it.
   */
  private async makeRoom(wanted: Slot): Promise<void> {
    const perWorkspace =
      this.options.maxServers ?? envCount(this.options.env.CELLMATE_LSP_MAX_SERVERS) ?? DEFAULT_MAX_SERVERS;
    const total =
      this.options.maxServersTotal ??
      envCount(this.options.env.CELLMATE_LSP_MAX_SERVERS_TOTAL) ??
      DEFAULT_MAX_SERVERS_TOTAL;
    for (;;) {
      const mine = [...this.slots.values()].filter((s) => s !== wanted && live(s));
      const all = [...services]
        .flatMap((svc) => [...svc.slots.values()].map((slot) => ({ svc, slot })))
        .filter(({ slot }) => slot !== wanted && live(slot));
      const victims =
        mine.length >= perWorkspace
          ? mine.map((slot) => ({ svc: this as LspService, slot }))
          : all.length >= total
            ? all
            : [];
      const oldest = victims.sort((a, b) => a.slot.lastUsed - b.slot.lastUsed)[0];
      if (!oldest) return;
      oldest.svc.options.logger.info(
        `[${oldest.slot.entry.name} for ${rel(oldest.svc.workspace, oldest.slot.root)}] stopped: ${mine.length >= perWorkspace ? `${perWorkspace} language servers run in this workspace already (CELLMATE_LSP_MAX_SERVERS)` : `${total} language servers run already (CELLMATE_LSP_MAX_SERVERS_TOTAL)`}; it was the least recently used`
      );
      oldest.svc.slots.delete(`${oldest.slot.entry.name}\u0000${oldest.slot.root}`);
      await oldest.slot.supervisor.dispose();
    }
  }

  /** Restarts the server of the root that serves `absolute` (forgets a failed start, re-reads the table). */
  async reload(absolute: string): Promise<string> {
    this.table = undefined;
    this.specs.clear();
    const all = await this.availability(absolute);
    const lines: string[] = [];
    for (const a of all) {
      if (!a.ok) {
        lines.push(a.message);
        continue;
      }
      const key = `${a.entry.name}\u0000${a.root}`;
      const old = this.slots.get(key);
      this.slots.delete(key);
      const wasRunning = old?.supervisor.status().state === 'running';
      await old?.supervisor.dispose();
      lines.push(
        `${a.entry.name} for ${rel(this.options.workspace, a.root)}: ${wasRunning ? 'stopped; it starts again on the next call' : 'not running; it starts on the next call'}`
      );
    }
    return lines.join('\n') || `No language server is configured for ${rel(this.options.workspace, absolute)}.`;
  }

  /** What runs, for which roots, and what a file (default: the workspace root) would get (LSP-4 `status`). */
  async status(probe?: string): Promise<string> {
    const lines: string[] = [];
    const running: string[] = [];
    for (const slot of this.slots.values()) {
      const st = slot.supervisor.status();
      if (st.state === 'stopped' || st.state === 'disposed') continue;
      const failure = st.failure ? `; start failed: ${st.failure.message}` : '';
      const python = slot.interpreter
        ? `, Python ${slot.interpreter.python ?? 'none'}${slot.interpreter.note ? ` (${slot.interpreter.note})` : " (the notebook kernel's)"}`
        : '';
      running.push(
        `- ${slot.entry.name} for ${rel(this.options.workspace, slot.root)} (${st.state}${st.pid ? `, pid ${st.pid}` : ''}, ${slot.entry.source}${python}${st.restarts ? `, restarted ${st.restarts}×` : ''}${failure})`
      );
    }
    lines.push(
      running.length
        ? `Running:\n${running.join('\n')}`
        : 'Running: none (servers start on the first request that needs one).'
    );
    const checks: string[] = [];
    for (const entry of await this.servers()) {
      if (probe && !entriesFor([entry], probe).length) continue;
      const file = probe ?? path.join(this.options.workspace, `probe${Object.keys(entry.languages)[0] ?? ''}`);
      const [a] = (await this.availability(file)).filter((x) => x.entry.name === entry.name);
      if (!a) continue;
      checks.push(
        a.ok
          ? `- ${entry.name} (${Object.keys(entry.languages).join(' ')}): usable — root ${rel(this.options.workspace, a.root)} (${a.marker}), executable ${a.executable}`
          : `- ${entry.name} (${Object.keys(entry.languages).join(' ')}): not usable — ${a.reason === 'no-root-marker' ? 'no root marker' : 'executable not found'}: ${a.message}`
      );
    }
    lines.push(
      this.trusted()
        ? 'Workspace trusted: its own node_modules/.bin and .venv/bin tools and interpreter are used.'
        : "Workspace not trusted: servers and checkers come from PATH and Cellmate's own, with Cellmate's Python and TypeScript — nothing from the workspace's node_modules or .venv runs (trusting it: \"trustedWorkspaces\" in ~/.cellmate/lsp.json)."
    );
    lines.push(
      `Servers for ${probe ? rel(this.options.workspace, probe) : 'the workspace root'}:\n${checks.join('\n') || '- none configured'}`
    );
    if (this.tableProblems.length)
      lines.push(
        `Configuration problems (the rest of the table applies):\n${this.tableProblems.map((p) => `- ${p}`).join('\n')}`
      );
    return lines.join('\n');
  }

  /** The clients that run now (never starts one). */
  async runningClients(): Promise<LspClient[]> {
    const out: LspClient[] = [];
    for (const slot of this.slots.values()) {
      if (slot.supervisor.status().state !== 'running') continue;
      const c = await slot.supervisor.get().catch(() => undefined);
      if (c?.alive) out.push(c);
    }
    return out;
  }

  /** Stops every server (process groups killed). */
  async dispose(): Promise<void> {
    this.disposed = true;
    services.delete(this);
    const all = [...this.slots.values()];
    this.slots.clear();
    await Promise.all(all.map((s) => s.supervisor.dispose()));
  }
}

/** Whether a slot's server runs or is starting (what a cap counts). */
function live(slot: Slot): boolean {
  const state = slot.supervisor.status().state;
  return state === 'running' || state === 'starting';
}

/** A positive whole number from an environment variable, else undefined. */
function envCount(value: string | undefined): number | undefined {
  const n = Number(value);
  return value && Number.isInteger(n) && n > 0 ? n : undefined;
}

/** A notebook's own folder as its root when no marker is found (inside the workspace only). */
function notebookFolder(absolute: string, workspace: string): { root: string; marker: string } | undefined {
  if (!absolute.toLowerCase().endsWith('.ipynb')) return undefined;
  const top = path.resolve(workspace);
  const dir = path.dirname(path.resolve(absolute));
  return dir === top || dir.startsWith(top + path.sep) ? { root: dir, marker: NOTEBOOK_FOLDER } : undefined;
}

function rel(workspace: string, absolute: string): string {
  return path.relative(workspace, absolute) || '.';
}
