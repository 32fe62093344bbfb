/**
 * One running language server for one root: the JSON-RPC connection over the shared
 * Content-Length framing, `initialize`, the documents it has open (text documents and LSP
 * 3.17 notebook documents, full-text sync), the diagnostics it published or was asked for,
 * and typed requests with cancellation. Knows nothing about tools or notebooks' JSON.
 *
 * Diagnostics come two ways and are kept as one record per document: pushed
 * (`textDocument/publishDiagnostics`), or pulled (LSP 3.17 `textDocument/diagnostic`, with
 * the previous result id) for the text documents of a server that declares
 * `diagnosticProvider`, or whose table entry says it answers pulls (`pullDiagnostics`). A
 * pulled answer is for the text the server had when it answered, so no quiet period is
 * needed after it; `workspace/diagnostic/refresh` pulls the open documents again, which is
 * how a pull server's later findings arrive.
 *
 * Pull support is declared without dynamic registration: basedpyright registers pull only
 * when the client takes dynamic registration, and then stops pushing and answers pulls for
 * notebook cells with nothing; without it, it pushes as before and answers pulls for text
 * documents.
 */
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import {
  CancellationTokenSource,
  createMessageConnection,
  Emitter,
  type Event,
  type MessageConnection
} from 'vscode-jsonrpc/node.js';
import type {
  Diagnostic,
  DiagnosticOptions,
  DocumentDiagnosticReport,
  InitializeResult,
  PublishDiagnosticsParams,
  ServerCapabilities
} from 'vscode-languageserver-protocol';
import {
  companionBudget,
  createFramedReader,
  createFramedWriter,
  FramingError,
  type FrameBudget
} from '../framing/index.js';
import type { GroupProcess } from '../supervisor/index.js';
import type { ServerEntry } from './server-table.js';

/** How long `initialize` may take before the start counts as failed. */
export const INITIALIZE_TIMEOUT_MS = 60_000;

/** A request to the server failed or the server is gone. */
export class LspRequestError extends Error {
  constructor(
    message: string,
    readonly code: 'exited' | 'failed' | 'cancelled',
    options?: { cause?: unknown }
  ) {
    super(message, options);
    this.name = 'LspRequestError';
  }
}

/** The diagnostics last published for one document. */
export interface PublishedDiagnostics {
  uri: string;
  version?: number;
  diagnostics: Diagnostic[];
  /** Increments on every publish (any document): orders publishes. */
  sequence: number;
}

/** What the client needs of its process (the supervisor's `GroupProcess`). */
export type LspProcess = Pick<GroupProcess, 'pid' | 'stdin' | 'stdout' | 'exited' | 'killGroup'>;

/** One cell of a notebook document as sent to the server. */
export interface NotebookCellText {
  uri: string;
  kind: 'code' | 'markup';
  languageId: string;
  text: string;
}

export class LspClient {
  private readonly connection: MessageConnection;
  private readonly diagnosticsEmitter = new Emitter<PublishedDiagnostics>();
  private readonly published = new Map<string, PublishedDiagnostics>();
  private readonly open = new Map<string, { version: number; text: string }>();
  private readonly notebooks = new Map<string, { version: number; cells: NotebookCellText[] }>();
  /** Per pulled document: the server's last result id and items (an `unchanged` answer reuses them). */
  private readonly pulled = new Map<string, { resultId?: string; diagnostics: Diagnostic[] }>();
  /** Set while open documents are pulled again after a refresh; `true` when another refresh came meanwhile. */
  private refreshing: { again: boolean } | undefined;
  private sequence = 0;
  private exited = false;
  /** Why Cellmate stopped the server itself (the shared memory budget), for the errors of its pending requests. */
  private stopReason: string | undefined;
  capabilities: ServerCapabilities = {};
  /** Time of the last request or sync (idle eviction). */
  lastUsed = Date.now();

  /** Fires on every `textDocument/publishDiagnostics` and every pulled answer. */
  readonly onDiagnostics: Event<PublishedDiagnostics> = this.diagnosticsEmitter.event;

  private constructor(
    readonly entry: ServerEntry,
    readonly root: string,
    readonly process: LspProcess,
    log: (line: string) => void,
    budget: FrameBudget
  ) {
    const reader = createFramedReader(process.stdout, { log, budget: { shared: budget, name: entry.name } });
    // Past the shared budget the server is stopped (its output is no longer read); the supervisor starts it again on the next call.
    reader.onError((error) => {
      if (!(error instanceof FramingError) || error.code !== 'over-budget' || this.stopReason) return;
      this.stopReason = `${error.message}. Cellmate stopped ${entry.name}; the next lsp call starts it again (a smaller request — one file, a narrower query — avoids this)`;
      log(this.stopReason);
      process.killGroup('SIGKILL');
    });
    this.connection = createMessageConnection(reader, createFramedWriter(forgivingSink(process.stdin)));
    this.connection.onNotification('textDocument/publishDiagnostics', (p: PublishDiagnosticsParams) => {
      this.record(p.uri, p.diagnostics, p.version ?? undefined);
    });
    this.connection.onRequest('workspace/diagnostic/refresh', () => {
      void this.refreshPulled();
      return null;
    });
    this.connection.onRequest('workspace/configuration', (p: { items: Array<{ section?: string }> }) =>
      p.items.map((item) => settingAt(entry.settings, item.section))
    );
    this.connection.onRequest('client/registerCapability', () => null);
    this.connection.onRequest('client/unregisterCapability', () => null);
    this.connection.onRequest('window/workDoneProgress/create', () => null);
    this.connection.onRequest('window/showMessageRequest', () => null);
    this.connection.onRequest('workspace/workspaceFolders', () => [{ uri: pathToFileURL(root).href, name: 'root' }]);
    // Edits are applied by Cellmate's own all-or-nothing edit, never on the server's say-so.
    this.connection.onRequest('workspace/applyEdit', () => ({
      applied: false,
      failureReason: 'Cellmate applies edits itself'
    }));
    this.connection.onNotification('window/logMessage', (p: { type: number; message: string }) => {
      if (p.type <= 2) log(`server: ${p.message.split('\n')[0]}`);
    });
    this.connection.onNotification(() => undefined);
    this.connection.onError(([error]) => log(`connection error: ${error.message}`));
    void process.exited.then(() => {
      this.exited = true;
      this.connection.dispose();
    });
    this.connection.listen();
  }

  /** Connects to a started process and runs `initialize` / `initialized`. */
  static async start(
    entry: ServerEntry,
    root: string,
    process: LspProcess,
    log: (line: string) => void,
    budget: FrameBudget = companionBudget()
  ): Promise<LspClient> {
    const client = new LspClient(entry, root, process, log, budget);
    const rootUri = pathToFileURL(root).href;
    const init = client.request<InitializeResult>(
      'initialize',
      {
        processId: globalThis.process.pid,
        clientInfo: { name: 'cellmate' },
        rootUri,
        rootPath: root,
        workspaceFolders: [{ uri: rootUri, name: 'root' }],
        initializationOptions: entry.initializationOptions,
        capabilities: {
          workspace: {
            configuration: true,
            workspaceFolders: true,
            symbol: {},
            applyEdit: false,
            workspaceEdit: { documentChanges: true },
            diagnostics: { refreshSupport: true }
          },
          textDocument: {
            synchronization: { didSave: true, dynamicRegistration: false },
            publishDiagnostics: { relatedInformation: false, versionSupport: true, codeDescriptionSupport: true },
            diagnostic: { dynamicRegistration: false, relatedDocumentSupport: false },
            definition: { linkSupport: true },
            typeDefinition: { linkSupport: true },
            implementation: { linkSupport: true },
            references: {},
            hover: { contentFormat: ['markdown', 'plaintext'] },
            documentSymbol: { hierarchicalDocumentSymbolSupport: true },
            codeAction: {
              codeActionLiteralSupport: {
                codeActionKind: { valueSet: ['', 'quickfix', 'refactor', 'source', 'source.organizeImports'] }
              },
              isPreferredSupport: true
            },
            rename: { prepareSupport: true }
          },
          notebookDocument: { synchronization: { dynamicRegistration: false, executionSummarySupport: false } },
          window: { workDoneProgress: false }
        }
      },
      undefined,
      INITIALIZE_TIMEOUT_MS
    );
    // The supervisor races this against the process's exit and quotes its stderr on failure.
    const result = await init;
    client.capabilities = result.capabilities;
    void client.connection.sendNotification('initialized', {});
    return client;
  }

  /** Whether the process is still running. */
  get alive(): boolean {
    return !this.exited;
  }

  /** Sends a request; aborting `signal` cancels it. */
  async request<R>(method: string, params: unknown, signal?: AbortSignal, timeoutMs?: number): Promise<R> {
    if (this.exited) throw new LspRequestError(this.stopReason ?? `${this.entry.name} is not running`, 'exited');
    this.lastUsed = Date.now();
    const source = new CancellationTokenSource();
    const cancel = (): void => source.cancel();
    signal?.addEventListener('abort', cancel, { once: true });
    let timer: NodeJS.Timeout | undefined;
    try {
      const reply = this.connection.sendRequest<R>(method, params, source.token);
      const gone = this.process.exited.then(() => {
        throw new LspRequestError(this.stopReason ?? `${this.entry.name} exited while answering ${method}`, 'exited');
      });
      const racers: Array<Promise<R>> = [reply, gone];
      if (timeoutMs !== undefined) {
        racers.push(
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => {
              source.cancel();
              reject(
                new LspRequestError(`${this.entry.name} did not answer ${method} within ${timeoutMs} ms`, 'failed')
              );
            }, timeoutMs);
          })
        );
      }
      return await Promise.race(racers);
    } catch (error) {
      if (error instanceof LspRequestError) throw error;
      // Stopped by Cellmate: the connection is disposed before the exit is seen; the reason is what to say.
      if (this.stopReason) throw new LspRequestError(this.stopReason, 'exited', { cause: error });
      if (signal?.aborted) throw new LspRequestError(`${method} was cancelled`, 'cancelled', { cause: error });
      throw new LspRequestError(`${this.entry.name} failed ${method}: ${(error as Error).message}`, 'failed', {
        cause: error
      });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', cancel);
      source.dispose();
    }
  }

  /**
   * Makes the server see `text` for `uri` (didOpen the first time, a full-text didChange
   * after), then didSave. Returns the version sent; unchanged text sends nothing.
   */
  async sync(
    uri: string,
    languageId: string,
    text: string,
    options: { save?: boolean } = {}
  ): Promise<{ version: number; changed: boolean }> {
    this.lastUsed = Date.now();
    const known = this.open.get(uri);
    if (known && known.text === text) return { version: known.version, changed: false };
    const version = (known?.version ?? 0) + 1;
    this.open.set(uri, { version, text });
    if (!known)
      await this.connection.sendNotification('textDocument/didOpen', {
        textDocument: { uri, languageId, version, text }
      });
    else
      await this.connection.sendNotification('textDocument/didChange', {
        textDocument: { uri, version },
        contentChanges: [{ text }]
      });
    if (options.save) await this.connection.sendNotification('textDocument/didSave', { textDocument: { uri }, text });
    return { version, changed: true };
  }

  /** Whether `uri` is a document (or notebook cell) the server has open now. */
  isOpen(uri: string): boolean {
    const u = normalizeUri(uri);
    if ([...this.open.keys()].some((k) => normalizeUri(k) === u)) return true;
    return [...this.notebooks.values()].some((n) => n.cells.some((c) => normalizeUri(c.uri) === u));
  }

  /** The text last synced for `uri`, if open. */
  openText(uri: string): string | undefined {
    return (
      this.open.get(uri)?.text ?? [...this.notebooks.values()].flatMap((n) => n.cells).find((c) => c.uri === uri)?.text
    );
  }

  /**
   * Makes the server see a notebook document (LSP 3.17): the first time didOpen, after that
   * didClose + didOpen of the new cells (simple and exact; cells are small). Unchanged
   * cells send nothing.
   */
  async syncNotebook(uri: string, cells: NotebookCellText[]): Promise<{ version: number; changed: boolean }> {
    this.lastUsed = Date.now();
    const known = this.notebooks.get(uri);
    if (known && sameCells(known.cells, cells)) return { version: known.version, changed: false };
    const version = (known?.version ?? 0) + 1;
    if (known) {
      await this.connection.sendNotification('notebookDocument/didClose', {
        notebookDocument: { uri },
        cellTextDocuments: known.cells.map((c) => ({ uri: c.uri }))
      });
    }
    this.notebooks.set(uri, { version, cells });
    await this.connection.sendNotification('notebookDocument/didOpen', {
      notebookDocument: {
        uri,
        notebookType: 'jupyter-notebook',
        version,
        cells: cells.map((c) => ({ kind: c.kind === 'code' ? 2 : 1, document: c.uri }))
      },
      cellTextDocuments: cells.map((c) => ({ uri: c.uri, languageId: c.languageId, version, text: c.text }))
    });
    return { version, changed: true };
  }

  /** The diagnostics last published for `uri` (pushed or pulled). */
  diagnosticsOf(uri: string): PublishedDiagnostics | undefined {
    return this.published.get(normalizeUri(uri));
  }

  /** The server's pull-diagnostics options when it answers `textDocument/diagnostic` (LSP 3.17). */
  get pullDiagnostics(): DiagnosticOptions | undefined {
    const declared = this.capabilities.diagnosticProvider;
    if (declared) return declared as DiagnosticOptions;
    return this.entry.pullDiagnostics ? { interFileDependencies: true, workspaceDiagnostics: false } : undefined;
  }

  /** Whether `uri`'s diagnostics are pulled: a text document open on a server that answers pulls (notebook cells wait for pushes). */
  pullsFor(uri: string): boolean {
    return this.pullDiagnostics !== undefined && this.open.has(uri);
  }

  /**
   * Asks the server for the diagnostics of an open document (`textDocument/diagnostic`, with
   * the previous result id) and records them as its latest, for the version synced before
   * the request (the server reads its notifications in order). Fails like {@link request}.
   */
  async pull(uri: string, signal?: AbortSignal): Promise<PublishedDiagnostics> {
    const key = normalizeUri(uri);
    const version = this.open.get(uri)?.version;
    const previous = this.pulled.get(key);
    const identifier = this.pullDiagnostics?.identifier;
    const report = await this.request<DocumentDiagnosticReport>(
      'textDocument/diagnostic',
      {
        textDocument: { uri },
        ...(identifier ? { identifier } : {}),
        ...(previous?.resultId ? { previousResultId: previous.resultId } : {})
      },
      signal
    );
    const diagnostics = report.kind === 'full' ? report.items : (previous?.diagnostics ?? []);
    this.pulled.set(key, { ...(report.resultId ? { resultId: report.resultId } : {}), diagnostics });
    return this.record(uri, diagnostics, version);
  }

  /** Keeps `diagnostics` as the document's latest, unless they are for an older text than those kept (a push and a pull can cross). */
  private record(uri: string, diagnostics: Diagnostic[], version: number | undefined): PublishedDiagnostics {
    const key = normalizeUri(uri);
    const known = this.published.get(key);
    if (known?.version !== undefined && version !== undefined && version < known.version) return known;
    const record: PublishedDiagnostics = {
      uri,
      diagnostics,
      sequence: ++this.sequence,
      ...(version !== undefined ? { version } : {})
    };
    this.published.set(key, record);
    this.diagnosticsEmitter.fire(record);
    return record;
  }

  /** Pulls every open document again (the server said its results changed); refreshes that come meanwhile coalesce. */
  private async refreshPulled(): Promise<void> {
    if (!this.pullDiagnostics) return;
    if (this.refreshing) {
      this.refreshing.again = true;
      return;
    }
    this.refreshing = { again: true };
    try {
      while (this.refreshing.again && !this.exited) {
        this.refreshing.again = false;
        const uris = [...this.open.keys()];
        // A document that fails to pull keeps its last record; the next refresh or wait asks again.
        await Promise.all(uris.map((u) => this.pull(u).catch(() => undefined)));
      }
    } finally {
      this.refreshing = undefined;
    }
  }

  /** The sequence number of the last publish (a "since" mark for waiting). */
  get lastSequence(): number {
    return this.sequence;
  }

  /** The polite goodbye (`shutdown`, then `exit`); the supervisor kills the group after it. */
  async shutdown(): Promise<void> {
    if (this.exited) return;
    await this.request('shutdown', null, undefined, 2_000).catch(() => undefined);
    await this.connection.sendNotification('exit').catch(() => undefined);
  }

  /** Releases the connection (the process is the supervisor's). */
  dispose(): void {
    this.exited = true;
    this.connection.dispose();
    this.diagnosticsEmitter.dispose();
  }
}

function sameCells(a: readonly NotebookCellText[], b: readonly NotebookCellText[]): boolean {
  return (
    a.length === b.length && a.every((c, i) => c.uri === b[i]!.uri && c.text === b[i]!.text && c.kind === b[i]!.kind)
  );
}

/** URIs compared the way servers echo them (percent-encoding of `:` and case of drive letters vary). */
export function normalizeUri(uri: string): string {
  try {
    return decodeURIComponent(uri);
  } catch {
    return uri;
  }
}

/** `settings.a.b` for section `a.b`; the whole object without a section; null when absent. */
export function settingAt(settings: unknown, section: string | undefined): unknown {
  if (!section) return settings ?? null;
  let at: unknown = settings;
  for (const key of section.split('.')) {
    if (typeof at !== 'object' || at === null) return null;
    at = (at as Record<string, unknown>)[key];
  }
  return at ?? null;
}

/**
 * The server's stdin, minus write errors: vscode-jsonrpc's `sendRequest` rethrows a failed
 * write inside an async promise executor — an unhandled rejection (EPIPE) whenever a server
 * dies mid-write. A write to a process that is gone is dropped instead; every request is
 * raced against the process's exit, which then says what happened.
 */
function forgivingSink(target: NodeJS.WritableStream): NodeJS.WritableStream {
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      const stream = target as NodeJS.WritableStream & { destroyed?: boolean; writable?: boolean };
      if (stream.destroyed || stream.writable === false) return callback();
      target.write(chunk, () => callback());
    }
  });
}
