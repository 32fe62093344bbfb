/**
 * The language servers of one workspace (LSP-2, LSP-5): which entry and root serve a file
 * (nearest root marker; executable resolved, project bins first), one client per (entry,
 * root) started lazily on the first request that needs it, restarted after a crash on the
 * next call, a failed start remembered for a while (not respawned on every call), idle
 * servers evicted, `reload` restarting the one of a root, `status` naming what runs and —
 * for a server that cannot — which half (root marker or executable) is missing.
 */
import path from 'node:path';
import type { Logger } from '../config/logger.js';
import { LspClient } from './lsp-client.js';
import { startServerProcess, type ServerProcess, type StartProcessOptions } from './process-adapter.js';
import { findRoot, resolveExecutable } from './resolve.js';
import { entriesFor, loadServerTable, tableFiles, type ServerEntry } from './server-table.js';

/** Idle servers are stopped after this long (`CELLMATE_LSP_IDLE_MS`). */
export const DEFAULT_LSP_IDLE_MS = 10 * 60_000;
/** A server that failed to start is not tried again for this long. */
export const FAILED_START_RETRY_MS = 3 * 60_000;

/** Why no server serves a file. */
export type UnavailableReason = 'no-server' | 'no-root-marker' | 'executable-not-found' | 'start-failed';

/** A file has no usable server; `message` says why and what to do. */
export class LspUnavailableError extends Error {
  constructor(readonly reason: UnavailableReason, message: string, readonly entry?: ServerEntry) {
    super(message);
    this.name = 'LspUnavailableError';
  }
}

/** Whether an entry can serve a file. */
export type Availability =
  | { ok: true; entry: ServerEntry; root: string; marker: string; executable: string }
  | { ok: false; entry: ServerEntry; reason: Exclude<UnavailableReason, 'no-server'>; message: string };

/** Options of {@link LspService}. */
export interface LspServiceOptions {
  workspace: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** Folders of the servers Cellmate ships (its own `node_modules/.bin`). */
  bundledBins: readonly string[];
  /** Table files (default `~/.cellmate/lsp.json`, `<workspace>/.cellmate/lsp.json`). */
  tableFiles?: readonly string[];
  idleMs?: number;
  /** How processes start (default: the shared process seam); tests inject faults here. */
  startProcess?: (options: StartProcessOptions) => Promise<ServerProcess>;
}

/** A client serving a file. */
export interface Served {
  client: LspClient;
  entry: ServerEntry;
  root: string;
}

export class LspService {
  private readonly clients = new Map<string, Promise<LspClient>>();
  private readonly failed = new Map<string, { message: string; until: number }>();
  private readonly restarts = new Map<string, number>();
  private table: Promise<ServerEntry[]> | undefined;
  private readonly idleTimer: NodeJS.Timeout;
  private disposed = false;

  constructor(private readonly options: LspServiceOptions) {
    const idle = options.idleMs ?? DEFAULT_LSP_IDLE_MS;
    this.idleTimer = setInterval(() => void this.evictIdle(idle), Math.max(1_000, Math.min(idle, 60_000)));
    this.idleTimer.unref();
  }

  get workspace(): string {
    return this.options.workspace;
  }

  /** The environment servers and checkers start with (scrubbed at spawn). */
  get env(): NodeJS.ProcessEnv {
    return this.options.env;
  }

  /** Folders of the servers Cellmate ships. */
  get bundledBins(): readonly string[] {
    return this.options.bundledBins;
  }

  /** The effective server table (read once; {@link reload} reads it again). */
  servers(): Promise<ServerEntry[]> {
    this.table ??= loadServerTable(this.options.tableFiles ?? tableFiles(this.options.workspace, this.options.env), (e) => this.options.logger.warn(e.message));
    return this.table;
  }

  /** For each entry claiming the file: can it serve it, and if not, why. */
  async availability(absolute: string): Promise<Availability[]> {
    const entries = entriesFor(await this.servers(), absolute);
    return Promise.all(entries.map(async (entry): Promise<Availability> => {
      const found = await findRoot(absolute, entry.rootMarkers, this.options.workspace);
      if (!found) {
        return { ok: false, entry, reason: 'no-root-marker', message: `${entry.name}: no root marker (${entry.rootMarkers.join(', ')}) between ${rel(this.options.workspace, path.dirname(absolute))} and the workspace root` };
      }
      const executable = await resolveExecutable(entry, { root: found.root, workspace: this.options.workspace, pathEnv: this.options.env.PATH, bundledBins: this.options.bundledBins });
      if (!executable) {
        return { ok: false, entry, reason: 'executable-not-found', message: `${entry.name}: root ${rel(this.options.workspace, found.root)} (${found.marker}) found, but executable not found: "${entry.command}" is not in node_modules/.bin or .venv/bin of the project, nor on PATH` };
      }
      return { ok: true, entry, root: found.root, marker: found.marker, executable };
    }));
  }

  /** The running (or just started) server for a file; throws {@link LspUnavailableError}. */
  async serverFor(absolute: string): Promise<Served> {
    const all = await this.availability(absolute);
    const usable = all.find((a): a is Extract<Availability, { ok: true }> => a.ok);
    if (!usable) {
      if (all.length === 0) throw new LspUnavailableError('no-server', `No language server is configured for ${path.extname(absolute) || 'files without an extension'} files (${rel(this.options.workspace, absolute)}). Add one in .cellmate/lsp.json.`);
      const first = all[0] as Extract<Availability, { ok: false }>;
      throw new LspUnavailableError(first.reason, `${all.map((a) => (a.ok ? '' : a.message)).join('; ')}.`, first.entry);
    }
    const key = `${usable.entry.name}\u0000${usable.root}`;
    const existing = this.clients.get(key);
    if (existing) {
      const client = await existing.catch(() => undefined);
      if (client?.alive) return { client, entry: usable.entry, root: usable.root };
      this.clients.delete(key);
    }
    const failure = this.failed.get(key);
    if (failure && failure.until > Date.now()) {
      throw new LspUnavailableError('start-failed', `${usable.entry.name} for ${rel(this.options.workspace, usable.root)} failed to start (${failure.message}); not retried until ${new Date(failure.until).toISOString()} — fix it and call lsp with action "reload" to try now.`, usable.entry);
    }
    const starting = this.start(usable.entry, usable.root, usable.executable, key);
    this.clients.set(key, starting);
    try {
      return { client: await starting, entry: usable.entry, root: usable.root };
    } catch (error) {
      this.clients.delete(key);
      const message = (error as Error).message;
      this.failed.set(key, { message, until: Date.now() + FAILED_START_RETRY_MS });
      throw new LspUnavailableError('start-failed', `${usable.entry.name} could not start for ${rel(this.options.workspace, usable.root)}: ${message}. Not retried for ${FAILED_START_RETRY_MS / 60_000} minutes (or until lsp "reload").`, usable.entry);
    }
  }

  private async start(entry: ServerEntry, root: string, executable: string, key: string): Promise<LspClient> {
    if (this.disposed) throw new Error('the language-server service is disposed');
    const log = (line: string): void => this.options.logger.info(`[${entry.name} ${rel(this.options.workspace, root)}] ${line}`);
    const spawn = this.options.startProcess ?? startServerProcess;
    const proc = await spawn({ executable, args: entry.args, cwd: root, env: this.options.env, log });
    try {
      const client = await LspClient.start(entry, root, proc, log);
      void proc.exited.then(({ code, signal }) => {
        if (this.disposed) return;
        this.options.logger.warn(`${entry.name} for ${rel(this.options.workspace, root)} exited (${signal ?? `code ${code}`}); the next call restarts it`);
        this.restarts.set(key, (this.restarts.get(key) ?? 0) + 1);
      });
      this.failed.delete(key);
      return client;
    } catch (error) {
      proc.kill();
      throw error;
    }
  }

  /** Restarts the server of the root that serves `absolute` (also forgets a failed start and re-reads the table). */
  async reload(absolute: string): Promise<string> {
    this.table = undefined;
    const all = await this.availability(absolute);
    const lines: string[] = [];
    for (const a of all) {
      if (!a.ok) {
        lines.push(a.message);
        continue;
      }
      const key = `${a.entry.name}\u0000${a.root}`;
      this.failed.delete(key);
      const old = this.clients.get(key);
      this.clients.delete(key);
      if (old) await old.then((c) => c.dispose(), () => undefined);
      lines.push(`${a.entry.name} for ${rel(this.options.workspace, a.root)}: ${old ? 'stopped; it starts again on the next call' : 'was not running; it starts on the next call'}`);
    }
    return lines.join('\n') || `No language server is configured for ${rel(this.options.workspace, absolute)}.`;
  }

  /** What runs, for which roots, and what the workspace root would get (LSP-4 `status`). */
  async status(probe?: string): Promise<string> {
    const lines: string[] = [];
    const running: string[] = [];
    for (const [key, pending] of this.clients) {
      const client = await pending.catch(() => undefined);
      if (!client?.alive) continue;
      const restarts = this.restarts.get(key) ?? 0;
      running.push(`- ${client.entry.name} for ${rel(this.options.workspace, client.root)} (pid ${client.process.pid ?? '?'}, ${client.entry.source}${restarts ? `, restarted ${restarts}×` : ''})`);
    }
    lines.push(running.length ? `Running:\n${running.join('\n')}` : 'Running: none (servers start on the first request that needs one).');
    const target = probe ?? this.options.workspace;
    const table = await this.servers();
    const checks: string[] = [];
    for (const entry of table) {
      const ext = Object.keys(entry.languages)[0] ?? '';
      const file = probe ?? path.join(target, `probe${ext}`);
      if (probe && !entriesFor([entry], probe).length) continue;
      const [a] = (await this.availability(file)).filter((x) => x.entry.name === entry.name);
      if (!a) continue;
      const key = a.ok ? `${entry.name}\u0000${a.root}` : '';
      const failure = a.ok ? this.failed.get(key) : undefined;
      checks.push(a.ok
        ? `- ${entry.name} (${Object.keys(entry.languages).join(' ')}): usable — root ${rel(this.options.workspace, a.root)} (${a.marker}), executable ${a.executable}${failure && failure.until > Date.now() ? `; last start failed: ${failure.message}` : ''}`
        : `- ${entry.name} (${Object.keys(entry.languages).join(' ')}): not usable — ${a.reason === 'no-root-marker' ? 'no root marker' : 'executable not found'}: ${a.message}`);
    }
    lines.push(`Servers for ${probe ? rel(this.options.workspace, probe) : 'the workspace root'}:\n${checks.join('\n') || '- none configured'}`);
    return lines.join('\n');
  }

  /** Running clients (write-time diagnostics only sync into servers that already run or start for a file). */
  async runningClients(): Promise<LspClient[]> {
    const out: LspClient[] = [];
    for (const pending of this.clients.values()) {
      const c = await pending.catch(() => undefined);
      if (c?.alive) out.push(c);
    }
    return out;
  }

  private async evictIdle(idleMs: number): Promise<void> {
    const now = Date.now();
    for (const [key, pending] of [...this.clients]) {
      const client = await pending.catch(() => undefined);
      if (client && now - client.lastUsed > idleMs) {
        this.clients.delete(key);
        this.options.logger.info(`stopping idle ${client.entry.name} for ${rel(this.options.workspace, client.root)}`);
        await client.dispose();
      }
    }
  }

  /** Stops every server (process groups killed). */
  async dispose(): Promise<void> {
    this.disposed = true;
    clearInterval(this.idleTimer);
    const all = [...this.clients.values()];
    this.clients.clear();
    await Promise.all(all.map((p) => p.then((c) => c.dispose(), () => undefined)));
  }
}

function rel(workspace: string, absolute: string): string {
  return path.relative(workspace, absolute) || '.';
}
