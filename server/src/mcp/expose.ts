/**
 * Cellmate as an MCP server: the stateless tools — read, grep, glob,
 * ast_grep, code_graph, lsp — listed with the schema and description the model sees, and
 * every call made through the one registry wrapper as actor `mcp` (same surface, policy,
 * path confinement, redaction and audit; nobody answers approval cards there, so `ask` is
 * deny). Tools bound to a live per-chat resource (eval, debug, ask_user, workers, notebook
 * and write tools) are not exposed. Served over stdio (`cellmate mcp`) and Streamable HTTP
 * (the companion's `mcp.sock`, relayed by the Jupyter route `<base_url>cellmate/mcp`).
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { AuditSink, PolicyPort } from '../ports/gate-ports.js';
import type { Redactor } from '../security/redaction.js';
import { FatalToolError } from '../base/tool-errors.js';
import { ToolRegistry } from '../gate/registry.js';
import { SERVER_VERSION } from '../base/version.js';

/** The tools an MCP client may list and call. */
export const EXPOSED_TOOLS: readonly string[] = ['read', 'grep', 'glob', 'ast_grep', 'code_graph', 'lsp'];

/** The chat id the audit log files MCP calls under. */
export const MCP_AUDIT_CHAT = 'mcp';

/**
 * The registry MCP clients call: the exposed definitions of `tools` (the companion's own
 * objects), with the companion's policy, audit and redactor — and no approval port: nobody
 * answers cards for an MCP client, so whatever would ask is denied at once (fail-closed)
 * instead of waiting on a card no pane shows.
 */
export function exposedRegistry(
  tools: Pick<ToolRegistry, 'get'>,
  parts: { policy: PolicyPort; audit: AuditSink; redactor: Pick<Redactor, 'redact' | 'redactDeep'> }
): ToolRegistry {
  const definitions = EXPOSED_TOOLS.map((name) => tools.get(name)).filter((d) => d !== undefined);
  return new ToolRegistry(definitions, { policy: parts.policy, audit: parts.audit, redactor: parts.redactor });
}

/** Builds an SDK `Server` (not yet connected) answering `tools/list` and `tools/call` from the registry. */
export async function createCellmateMcpServer(registry: ToolRegistry, workspace: string): Promise<Server> {
  const [{ Server }, { CallToolRequestSchema, ListToolsRequestSchema }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/types.js')
  ]);
  const exposed = (): string[] =>
    EXPOSED_TOOLS.filter((name) => registry.get(name) !== undefined && !registry.get(name)!.deferred);
  const server = new Server({ name: 'cellmate', version: SERVER_VERSION }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: exposed().map((name) => ({
      name,
      description: registry.modelDescription(name),
      inputSchema: registry.inputJsonSchema(name) as { type: 'object'; [key: string]: unknown },
      annotations: { readOnlyHint: registry.get(name)!.tier === 'read', openWorldHint: false }
    }))
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    if (!exposed().includes(name)) {
      return {
        isError: true,
        content: [
          {
            type: 'text' as const,
            text: `Cellmate does not expose "${name}" over MCP. Exposed tools: ${exposed().join(', ')}.`
          }
        ]
      };
    }
    let result: Awaited<ReturnType<ToolRegistry['call']>>;
    try {
      result = await registry.call(name, request.params.arguments ?? {}, {
        workspace,
        signal: extra.signal,
        actor: 'mcp',
        chatId: MCP_AUDIT_CHAT,
        callId: String(extra.requestId)
      });
    } catch (error) {
      // A model turn ends on these (repeated denials: the circuit breaker); an MCP call just fails.
      if (!(error instanceof FatalToolError)) throw error;
      return { isError: true, content: [{ type: 'text' as const, text: error.message }] };
    }
    const content: Array<{ type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string }> = [
      { type: 'text', text: result.output }
    ];
    if (result.ok)
      for (const a of result.attachments ?? []) content.push({ type: 'image', data: a.data, mimeType: a.mediaType });
    return { isError: !result.ok, content };
  });
  return server;
}
