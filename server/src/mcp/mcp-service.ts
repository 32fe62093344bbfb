/**
 * The MCP client side of the companion: the configured servers, started
 * lazily — the first `tool_search`, or the first call of a `server__…` name — and their
 * tools registered as deferred registry tools. The declared tool set never changes (the
 * cached prefix stays stable); a name that would shadow a built-in or another tool is
 * reported in the server's status and not registered.
 */
import type { McpServerStatus } from '@cellmate/protocol';
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Logger } from '../config/logger.js';
import type { ToolSource } from '../gate/registry.js';
import type { ToolDefinition } from '../gate/define-tool.js';
import { ApprovedDescriptions } from './approved-descriptions.js';
import { loadMcpConfig, mcpConfigFiles, untrustedMessage, type McpServerConfig } from './config.js';
import { isWorkspaceTrusted } from '../security/workspace-trust.js';
import { cellmateHome } from '../config/home-paths.js';
import { McpConnection } from './connection.js';
import { createMcpTool, qualifiedToolName, type McpToolEntry, type SchemaValidator } from './mcp-tool.js';

export type { McpServerStatus } from '@cellmate/protocol';

/** Where tools are registered (the registry). */
export interface ToolSink {
  get(name: string): ToolDefinition | undefined;
  register(definition: ToolDefinition): void;
}

export interface McpServiceOptions {
  workspace: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** Default: {@link mcpConfigFiles}. */
  configFiles?: readonly string[];
  /** Default: `<CELLMATE_HOME>/mcp-approved.json`. */
  approvalsFile?: string;
  /** Per-call budget of MCP tools (default 120 s). */
  callTimeoutMs?: number;
  /** Supervisor backoff (tests). */
  backoffInitialMs?: number;
}

interface ServerRecord {
  config: McpServerConfig;
  connection: McpConnection;
  entries: Map<string, McpToolEntry>;
  problems: string[];
  loading?: Promise<void>;
  loadedPid?: number;
  /** The server said its list changed since it was listed. */
  stale?: boolean;
}

type AjvLike = { compile(schema: object): SchemaValidator };

/** See the module comment. A {@link ToolSource} for the registry. */
export class McpService implements ToolSource {
  private servers = new Map<string, ServerRecord>();
  /**
   * Servers a workspace's own file defines (a command, or a URL that would be sent the
   * repository's headers and whose tool descriptions reach the model) in a workspace the
   * person does not trust: listed, never started or contacted — until it is trusted.
   */
  private untrusted: McpServerConfig[] = [];
  private configured: Promise<void> | undefined;
  /** What was wrong with the config files when they were read (a file or an entry left out). */
  private readonly configProblems: string[] = [];
  private readonly approvals: ApprovedDescriptions;
  private ajv: Promise<{ draft7: AjvLike; draft2020: AjvLike }> | undefined;

  constructor(private readonly options: McpServiceOptions) {
    const home = cellmateHome(options.env);
    this.approvals = new ApprovedDescriptions(options.approvalsFile ?? path.join(home, 'mcp-approved.json'), (m) =>
      options.logger.warn(m)
    );
  }

  /** Reads the config files (once); servers are not started. */
  async configure(): Promise<void> {
    this.configured ??= (async () => {
      const files = this.options.configFiles ?? mcpConfigFiles(this.options.workspace, this.options.env);
      const [homeFile, workspaceFile] = mcpConfigFiles(this.options.workspace, this.options.env) as [string, string];
      const configs = await loadMcpConfig(
        files,
        (e) => {
          this.options.logger.warn(e.message);
          this.configProblems.push(e.message);
        },
        workspaceFile
      );
      const trusted = isWorkspaceTrusted(this.options.workspace, this.options.env);
      for (const config of configs) {
        if (path.resolve(config.file) === workspaceFile && !trusted) {
          this.options.logger.warn(
            `MCP server "${config.name}" ${untrustedMessage(config, homeFile, this.options.workspace)}`
          );
          this.untrusted.push(config);
          continue;
        }
        this.add(config);
      }
    })();
    await this.configured;
    this.admitTrusted();
  }

  private add(config: McpServerConfig): void {
    // The record must exist before its connection (the connection's callbacks refer to it); it is set on the next line.
    const record: ServerRecord = {
      config,
      connection: undefined as unknown as McpConnection,
      entries: new Map(),
      problems: []
    };
    // tools/list_changed: the next search or call lists again (and judges the new texts).
    record.connection = new McpConnection(
      config,
      this.options.workspace,
      this.options.logger,
      this.options.backoffInitialMs ? { backoffInitialMs: this.options.backoffInitialMs } : {},
      () => {
        record.stale = true;
      }
    );
    this.servers.set(config.name, record);
  }

  /** The person trusted the workspace since: its own servers become available (started lazily as any other). */
  private admitTrusted(): void {
    if (this.untrusted.length === 0 || !isWorkspaceTrusted(this.options.workspace, this.options.env)) return;
    for (const config of this.untrusted.splice(0)) this.add(config);
  }

  /** Whether any server is configured (call {@link configure} first). */
  get hasServers(): boolean {
    return this.servers.size > 0;
  }

  /** `server__…` names belong to a configured server. */
  owns(name: string): boolean {
    return [...this.servers.keys()].some((s) => name.startsWith(`${s}__`));
  }

  /** Starts every server not yet listed (or restarted since) and registers its tools. */
  async load(sink: ToolSink, signal: AbortSignal, name?: string): Promise<void> {
    await this.configure();
    await this.approvals.load();
    const wanted = [...this.servers.values()].filter(
      (r) => name === undefined || name.startsWith(`${r.config.name}__`)
    );
    await Promise.all(wanted.map((r) => this.loadServer(r, sink, signal)));
  }

  /** For the model: why `server__x` is no tool (the server failed, or lists no such tool). */
  explainMissing(name: string): string | undefined {
    const record = [...this.servers.values()].find((r) => name.startsWith(`${r.config.name}__`));
    if (!record) return undefined;
    const state = record.connection.state();
    if (state.state === 'failed' || (record.loading === undefined && record.entries.size === 0)) {
      return `the MCP server "${record.config.name}" is not available${state.error ? ` (${state.error})` : ''}. Continue without it; the user can fix it in ${record.config.file}.`;
    }
    return `the MCP server "${record.config.name}" has no such tool. Call tool_search to find its tools.`;
  }

  /**
   * One sentence per config file or entry that was left out, saying what to fix; the files are
   * read once, when the companion starts, so a fix needs JupyterLab restarted.
   */
  async problems(): Promise<string[]> {
    await this.configure();
    return this.configProblems.map(
      (m) =>
        `MCP config: ${m.replace(/\.$/, '')}. Until it is fixed the servers it left out are not available; fix it and restart JupyterLab (MCP config is read when Cellmate starts).`
    );
  }

  /** The status list the pane shows. */
  async status(): Promise<McpServerStatus[]> {
    await this.configure();
    const homeFile = mcpConfigFiles(this.options.workspace, this.options.env)[0]!;
    return [...this.servers.values()]
      .map((r): McpServerStatus => ({
        name: r.config.name,
        transport: r.config.kind,
        file: r.config.file,
        tools: r.entries.size,
        problems: [...r.problems],
        ...r.connection.state()
      }))
      .concat(
        this.untrusted.map((config): McpServerStatus => {
          const error = untrustedMessage(config, homeFile, this.options.workspace);
          return {
            name: config.name,
            transport: config.kind,
            file: config.file,
            state: 'stopped',
            restarts: 0,
            error,
            tools: 0,
            problems: [error]
          };
        })
      );
  }

  /** Stops every server. */
  async dispose(): Promise<void> {
    await Promise.all([...this.servers.values()].map((r) => r.connection.dispose()));
  }

  private loadServer(record: ServerRecord, sink: ToolSink, signal: AbortSignal): Promise<void> {
    // Listed again after a restart: the new process may describe its tools differently.
    if (record.loading && !record.stale && record.loadedPid === record.connection.pid) return record.loading;
    record.stale = false;
    const loading = (async () => {
      try {
        const listed = await record.connection.listTools(signal);
        record.loadedPid = record.connection.pid;
        await this.register(record, listed, sink);
      } catch (error) {
        record.loading = undefined; // a failed start is retried by the next search
        this.options.logger.warn(
          `MCP server ${record.config.name}: ${error instanceof Error ? error.message : String(error)}`
        );
      }
    })();
    record.loading = loading;
    return loading;
  }

  private async register(
    record: ServerRecord,
    listed: Awaited<ReturnType<McpConnection['listTools']>>,
    sink: ToolSink
  ): Promise<void> {
    const ajv = await this.validators();
    const server = record.config.name;
    const identity =
      record.config.kind === 'stdio'
        ? `stdio:${JSON.stringify([record.config.command, ...record.config.args])}`
        : `http:${record.config.url}`;
    const problems: string[] = [];
    const seen = new Map<string, string>();
    for (const tool of listed) {
      const name = qualifiedToolName(server, tool.name, (t) => createHash('sha256').update(t).digest('hex'));
      const clash = seen.get(name);
      if (clash !== undefined) {
        problems.push(
          `"${tool.name}" is not available: its name ${name} is also the name of "${clash}" on the same server`
        );
        continue;
      }
      seen.set(name, tool.name);
      let validate: SchemaValidator;
      try {
        const dialect =
          typeof tool.inputSchema.$schema === 'string' && /draft-0[467]/.test(tool.inputSchema.$schema)
            ? ajv.draft7
            : ajv.draft2020;
        validate = dialect.compile(tool.inputSchema);
      } catch (error) {
        problems.push(
          `"${tool.name}" is not available: its input schema does not compile (${(error as Error).message})`
        );
        continue;
      }
      const existing = record.entries.get(name);
      if (existing) {
        existing.listed = tool;
        existing.validate = validate;
        continue;
      }
      const taken = sink.get(name);
      if (taken) {
        problems.push(
          `"${tool.name}" is not available: ${name} is already the name of another tool, which it may not shadow`
        );
        continue;
      }
      const entry: McpToolEntry = { listed: tool, validate };
      record.entries.set(name, entry);
      sink.register(
        createMcpTool(name, () => entry, {
          server,
          identity,
          tier: record.config.tier,
          // The card says what it talks to and whose file named it (a workspace's file is a cloned repository's).
          origin: `${record.config.kind === 'stdio' ? [record.config.command, ...record.config.args].join(' ') : record.config.url}, configured in ${record.config.file}`,
          connection: record.connection,
          approvals: this.approvals,
          timeoutMs: this.options.callTimeoutMs ?? 120_000
        })
      );
    }
    record.problems = problems;
    for (const p of problems) this.options.logger.warn(`MCP server ${server}: ${p}`);
  }

  private validators(): Promise<{ draft7: AjvLike; draft2020: AjvLike }> {
    this.ajv ??= (async () => {
      const [{ Ajv }, { Ajv2020 }, formats] = await Promise.all([
        import('ajv'),
        import('ajv/dist/2020.js'),
        import('ajv-formats')
      ]);
      // strict: false — a server's schema is used as given, unknown keywords included.
      const draft7 = new Ajv({ strict: false, allErrors: true });
      const draft2020 = new Ajv2020({ strict: false, allErrors: true });
      // Ajv-formats is CommonJS: under Node16 resolution its typings do not show the `default` a dynamic import yields.
      const addFormats = (formats as unknown as { default: (a: unknown) => void }).default;
      addFormats(draft7);
      addFormats(draft2020);
      // Ajv's generic `compile` signature does not match the narrow `AjvLike` the rest of the service needs.
      return { draft7: draft7 as unknown as AjvLike, draft2020: draft2020 as unknown as AjvLike };
    })();
    return this.ajv;
  }
}
