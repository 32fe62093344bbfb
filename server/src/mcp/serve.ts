/**
 * Where Cellmate's MCP server ({@link createCellmateMcpServer}) is served:
 *
 * - `cellmate mcp` (`node server/dist/main.js mcp --workspace <dir>`): one stdio session
 *   with its own registry of the exposed tools (same policy files, audit log and redaction
 *   as the companion, built by the one `createHarness`);
 * - the companion's `mcp.sock`, next to its JSON-RPC socket in the same 0700 folder: HTTP
 *   over a Unix socket, Streamable HTTP in stateless JSON mode, one short-lived SDK
 *   transport per request. No TCP port: the Jupyter route `<base_url>cellmate/mcp` relays
 *   authenticated requests to it (`jupyterlab_cellmate/handlers.py` `McpHandler`).
 */
import { chmod, rm } from 'node:fs/promises';
import http from 'node:http';
import type { Logger } from '../config/logger.js';
import { loadConfigFile } from '../config/config-file.js';
import { bundledServerBins } from '../workspace/tool-bins.js';
import { DocumentSync } from '../lsp/documents.js';
import { LspService } from '../lsp/lsp-service.js';
import { builtinTools } from '../tools/builtin-tools.js';
import { createHarness } from '../tools/harness.js';
import { PaneHub } from '../notebooks/pane-hub.js';
import type { ToolRegistry } from '../gate/registry.js';
import { createCellmateMcpServer, exposedRegistry } from './expose.js';

/** Largest request body the HTTP endpoint reads. */
export const MCP_HTTP_MAX_BODY = 16 * 1024 * 1024;

/** Serves one MCP session over stdio until the input ends; resolves once it closed. */
export async function serveMcpStdio(options: {
  workspace: string;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
}): Promise<void> {
  const { workspace, env, logger } = options;
  const lsp = new LspService({ workspace, env, logger, bundledBins: bundledServerBins(env) });
  const docs = new DocumentSync(lsp, new PaneHub());
  const harness = createHarness({
    workspace,
    env,
    // The same table as the companion's, for what this process holds (no kernels, panes or chats);
    // `exposedRegistry` then picks the stateless tools MCP clients may call.
    tools: (ports) => builtinTools({ catalog: ports.catalog, lsp: { service: lsp, docs } }),
    onProblem: (message, error) =>
      logger.warn(
        error === undefined ? message : `${message}: ${error instanceof Error ? error.message : String(error)}`
      )
  });
  harness.redactor.addConfig(await loadConfigFile(env));
  const server = await createCellmateMcpServer(exposedRegistry(harness.registry, harness), workspace);
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const closed = new Promise<void>((resolve) => (server.onclose = resolve));
  await server.connect(
    new StdioServerTransport(options.input as NodeJS.ReadStream, options.output as NodeJS.WriteStream)
  );
  options.input.once('end', () => void server.close());
  await closed;
  await lsp.dispose();
  await harness.audit.flush();
  harness.dispose();
}

/** The HTTP endpoint on a Unix socket; see the module comment. */
export interface McpSocketEndpoint {
  socketPath: string;
  dispose(): Promise<void>;
}

/** Listens on `socketPath` (mode 0600) and answers MCP over Streamable HTTP from `registry`. */
export async function listenMcpSocket(
  socketPath: string,
  registry: ToolRegistry,
  workspace: string,
  logger: Logger
): Promise<McpSocketEndpoint> {
  await rm(socketPath, { force: true });
  const server = http.createServer((req, res) => {
    handle(req, res, registry, workspace).catch((error: unknown) => {
      logger.warn(`MCP HTTP request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  await chmod(socketPath, 0o600);
  return {
    socketPath,
    async dispose() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(socketPath, { force: true });
    }
  };
}

async function handle(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  registry: ToolRegistry,
  workspace: string
): Promise<void> {
  if (req.method !== 'POST') {
    // Stateless: no server-initiated stream (GET) and no session to end (DELETE).
    res.writeHead(405, { 'content-type': 'application/json', allow: 'POST' });
    res.end(
      JSON.stringify({
        jsonrpc: '2.0',
        error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless, use POST.' },
        id: null
      })
    );
    return;
  }
  const body = await readBody(req);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        jsonrpc: '2.0',
        error: { code: -32700, message: 'Parse error: the body is not JSON.' },
        id: null
      })
    );
    return;
  }
  const { StreamableHTTPServerTransport } = await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  const server = await createCellmateMcpServer(registry, workspace);
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, parsed);
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MCP_HTTP_MAX_BODY) throw new Error(`request body over ${MCP_HTTP_MAX_BODY} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
