/**
 * One configured MCP server and its client connection. A stdio server is a
 * child process under the shared {@link ProcessSupervisor} (lazy start, restart on crash,
 * scrubbed environment, whole group killed on dispose); its JSON-RPC runs over the
 * supervisor's pipes through {@link GroupProcessTransport}. A Streamable HTTP server has no
 * process: the client connects on first use and again after a failed request.
 *
 * `@modelcontextprotocol/sdk` is imported here at first use only (ARCHITECTURE.md
 * "Processes"; `server/test/startup/lazy-imports.test.ts`).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../config/logger.js';
import { SERVER_VERSION } from '../base/version.js';
import { ProcessSupervisor, type SupervisorStatus } from '../supervisor/index.js';
import type { GroupProcess } from '../supervisor/process-group.js';
import type { McpServerConfig } from './config.js';

/** A tool as the server lists it (`tools/list`). */
export interface McpListedTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}

/** What a `tools/call` returned, reduced to what Cellmate shows. */
export interface McpCallResult {
  isError: boolean;
  content: Array<Record<string, unknown>>;
  structuredContent?: unknown;
}

/** A server's state for the pane's status list (`mcp/servers`). */
export interface McpServerState {
  state: 'not-started' | 'starting' | 'running' | 'failed' | 'stopped';
  restarts: number;
  pid?: number;
  error?: string;
}

/** Timeout of one MCP request (tools/list, tools/call). */
export const MCP_REQUEST_TIMEOUT_MS = 60_000;

/** The connection to one server; see the module comment. */
export class McpConnection {
  private readonly supervisor: ProcessSupervisor<Client> | undefined;
  private http: Promise<Client> | undefined;
  private httpError: string | undefined;
  private started = false;

  /**
   * @param onListChanged the server sent `notifications/tools/list_changed`: list again
   */
  constructor(
    readonly config: McpServerConfig,
    workspace: string,
    log: Logger,
    supervisorOptions: { backoffInitialMs?: number } = {},
    private readonly onListChanged: () => void = () => {}
  ) {
    if (config.kind === 'stdio') {
      this.supervisor = new ProcessSupervisor<Client>({
        name: `MCP server ${config.name}`,
        spawn: { command: config.command, args: config.args, cwd: config.cwd ?? workspace, env: config.env },
        log,
        retryHint: `fix "${config.name}" in ${config.file}; the next call retries in a few minutes`,
        idleMs: 0,
        startTimeoutMs: 30_000,
        ...supervisorOptions,
        connect: async (proc, signal) => connectClient(new GroupProcessTransport(proc), signal, onListChanged),
        shutdown: async (client) => void (await client.close().catch(() => undefined)),
        disposeClient: (client) => void client.close().catch(() => undefined)
      });
      this.supervisor.onDidExit((e) => {
        if (!e.expected) log.warn(`MCP server ${config.name} exited (${e.signal ?? e.code}); restarting`);
      });
    }
  }

  /** The connected client, starting the server on first use. */
  async client(signal?: AbortSignal): Promise<Client> {
    this.started = true;
    if (this.supervisor) return this.supervisor.get(signal);
    const config = this.config;
    if (config.kind !== 'http') throw new Error('unreachable');
    this.http ??= (async () => {
      const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
      const transport = new StreamableHTTPClientTransport(new URL(config.url), {
        requestInit: { headers: config.headers }
      });
      return connectClient(transport, signal ?? new AbortController().signal, this.onListChanged);
    })();
    try {
      const client = await this.http;
      this.httpError = undefined;
      return client;
    } catch (error) {
      this.http = undefined; // the next call tries again
      this.httpError = error instanceof Error ? error.message : String(error);
      throw new Error(`MCP server ${config.name} (${config.url}) could not be reached: ${this.httpError}`);
    }
  }

  /** All the server's tools (every page of `tools/list`). */
  async listTools(signal?: AbortSignal): Promise<McpListedTool[]> {
    const client = await this.client(signal);
    const tools: McpListedTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {}, { signal, timeout: MCP_REQUEST_TIMEOUT_MS });
      for (const t of page.tools)
        tools.push({
          name: t.name,
          ...(t.description !== undefined ? { description: t.description } : {}),
          inputSchema: t.inputSchema as Record<string, unknown>
        });
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  /** Calls one tool by the server's own name. */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    timeoutMs: number
  ): Promise<McpCallResult> {
    const client = await this.client(signal);
    const result = await client.callTool({ name, arguments: args }, undefined, { signal, timeout: timeoutMs });
    return {
      isError: result.isError === true,
      content: Array.isArray(result.content) ? (result.content as Array<Record<string, unknown>>) : [],
      ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {})
    };
  }

  /** The state shown in the pane's status list. */
  state(): McpServerState {
    if (this.supervisor) return fromSupervisor(this.supervisor.status(), this.started);
    if (!this.started) return { state: 'not-started', restarts: 0 };
    if (this.httpError) return { state: 'failed', restarts: 0, error: this.httpError };
    return { state: this.http ? 'running' : 'starting', restarts: 0 };
  }

  /** The number of the current process run (changes after a restart); HTTP: 0. */
  get pid(): number | undefined {
    return this.supervisor?.status().pid;
  }

  /** Stops the server (its whole process group) or closes the HTTP session. */
  async dispose(): Promise<void> {
    await this.supervisor?.dispose();
    const http = this.http;
    this.http = undefined;
    if (http) await http.then((c) => c.close()).catch(() => undefined);
  }
}

function fromSupervisor(s: SupervisorStatus, started: boolean): McpServerState {
  const base = { restarts: s.restarts, ...(s.pid !== undefined ? { pid: s.pid } : {}) };
  switch (s.state) {
    case 'running':
      return { state: 'running', ...base };
    case 'starting':
      return { state: 'starting', ...base };
    case 'failed':
      return { state: 'failed', ...base, ...(s.failure ? { error: s.failure.message } : {}) };
    default:
      return { state: started ? 'stopped' : 'not-started', ...base };
  }
}

async function connectClient(transport: Transport, signal: AbortSignal, onListChanged: () => void): Promise<Client> {
  const [{ Client }, { ToolListChangedNotificationSchema }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/types.js')
  ]);
  const client = new Client({ name: 'cellmate', version: SERVER_VERSION }, { capabilities: {} });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => onListChanged());
  await client.connect(transport, { signal, timeout: MCP_REQUEST_TIMEOUT_MS });
  return client;
}

/**
 * The SDK's stdio framing (newline-delimited JSON) over the pipes of a supervised process;
 * the SDK's own `StdioClientTransport` would spawn a second, unsupervised child.
 */
class GroupProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private closed = false;

  constructor(private readonly proc: GroupProcess) {}

  async start(): Promise<void> {
    const { ReadBuffer } = await import('@modelcontextprotocol/sdk/shared/stdio.js');
    const buffer = new ReadBuffer();
    this.proc.stdout.on('data', (chunk: Buffer) => {
      buffer.append(chunk);
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = buffer.readMessage();
        } catch (error) {
          this.onerror?.(error instanceof Error ? error : new Error(String(error)));
          continue;
        }
        if (!message) break;
        this.onmessage?.(message);
      }
    });
    this.proc.stdin.on('error', (error: Error) => this.onerror?.(error));
    void this.proc.exited.then(() => this.finish());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error('the MCP server process has exited');
    const { serializeMessage } = await import('@modelcontextprotocol/sdk/shared/stdio.js');
    await new Promise<void>((resolve, reject) => {
      this.proc.stdin.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
    });
  }

  async close(): Promise<void> {
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}
