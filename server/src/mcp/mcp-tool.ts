/**
 * One MCP server tool as a registry tool: deferred (found through
 * `tool_search`), named `server__tool`, tier from the server's config, arguments validated
 * against the server's own JSON Schema (ajv, compiled when the tools are listed), and a
 * `dangerReason` that makes the registry ask whenever the tool's description and schema are
 * not the ones a person approved before (first use, or changed since: tool poisoning).
 */
import { z } from 'zod';
import type { ToolAttachment, ToolDefinition, ToolOutput } from '../gate/define-tool.js';
import { ToolInputError } from '../base/tool-errors.js';
import type { ApprovedDescriptions } from './approved-descriptions.js';
import { descriptionHash } from './approved-descriptions.js';
import type { McpConnection, McpListedTool } from './connection.js';

/** An ajv validate function (ajv's own type is not imported at the top level: it loads lazily). */
export interface SchemaValidator {
  (data: unknown): boolean;
  errors?: Array<{ instancePath: string; message?: string; params?: Record<string, unknown> }> | null;
}

/** The live entry behind a registered MCP tool; refreshed when the server lists again. */
export interface McpToolEntry {
  listed: McpListedTool;
  validate: SchemaValidator;
}

/** Provider tool names: OpenAI and Anthropic accept `^[a-zA-Z0-9_-]{1,64}$`. */
export const TOOL_NAME_MAX = 64;

/**
 * The registry name of a server's tool: `server__tool`, with every character outside
 * `[A-Za-z0-9_-]` replaced by `_`; a name over 64 characters keeps its first 55 and a hash of
 * the whole so two long names stay distinct.
 */
export function qualifiedToolName(server: string, tool: string, hash: (text: string) => string): string {
  const name = `${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, '_');
  return name.length <= TOOL_NAME_MAX ? name : `${name.slice(0, 55)}_${hash(`${server}__${tool}`).slice(0, 8)}`;
}

/** What the tool needs besides its entry. */
export interface McpToolDeps {
  server: string;
  /** Identity of the server for approvals (command line or URL). */
  identity: string;
  /** Where the server is and which file configured it, for the approval card: `https://… (configured in ~/.cellmate/mcp.json)`. */
  origin: string;
  tier: ToolDefinition['tier'];
  connection: McpConnection;
  approvals: ApprovedDescriptions;
  timeoutMs: number;
}

/** Builds the registry tool; `entry()` is read on every use, so a re-listing takes effect at once. */
export function createMcpTool(name: string, entry: () => McpToolEntry, deps: McpToolDeps): ToolDefinition {
  const parameters = z
    .record(z.string(), z.unknown(), { error: 'must be an object of arguments' })
    .superRefine((value, ctx) => {
      const current = entry();
      if (current.validate(value)) return;
      for (const e of current.validate.errors ?? []) {
        const at = e.instancePath ? e.instancePath.slice(1).split('/') : [];
        const extra =
          e.params && 'additionalProperty' in e.params
            ? ` (${String(e.params.additionalProperty)})`
            : e.params && 'missingProperty' in e.params
              ? ` (${String(e.params.missingProperty)})`
              : '';
        ctx.addIssue({ code: 'custom', message: `${e.message ?? 'is invalid'}${extra}`, path: at });
      }
    });
  const approvalText = (): { hash: string; description: string } => {
    const { listed } = entry();
    const description = listed.description ?? '(no description)';
    return { hash: descriptionHash(description, listed.inputSchema), description };
  };
  const definition: ToolDefinition = {
    name,
    tier: deps.tier,
    get description(): string {
      return `[MCP server ${deps.server}] ${entry().listed.description ?? entry().listed.name}`;
    },
    get inputSchema(): Record<string, unknown> {
      return entry().listed.inputSchema;
    },
    parameters,
    examples: [],
    deferred: true,
    timeoutMs: deps.timeoutMs,
    dangerLabel: 'MCP tool not yet approved',
    dangerReason() {
      const shown = approvalText();
      const approved = deps.approvals.get(deps.identity, entry().listed.name);
      if (approved?.hash === shown.hash) return undefined;
      const quoted = JSON.stringify(clip(shown.description, 1_500));
      return approved
        ? `the MCP server "${deps.server}" (${deps.origin}) CHANGED this tool's description or schema since it was approved (possible tool poisoning); it now says ${quoted}, the approved text was ${JSON.stringify(clip(approved.description, 500))}`
        : `first use of "${entry().listed.name}" from the MCP server "${deps.server}" (${deps.origin}), which describes it as ${quoted}`;
    },
    async execute(args, ctx): Promise<ToolOutput> {
      // Reached only when the text was approved before or a person just approved it (the floor asked).
      await deps.approvals.approve(deps.identity, entry().listed.name, approvalText());
      const result = await deps.connection.callTool(
        entry().listed.name,
        args as Record<string, unknown>,
        ctx.signal,
        deps.timeoutMs
      );
      const { text, attachments } = renderContent(result.content, result.structuredContent);
      if (result.isError) throw new ToolInputError(`${name} returned an error: ${text || '(no message)'}`);
      return {
        title: `${deps.server}: ${entry().listed.name}`,
        output: text || '(no output)',
        ...(attachments.length > 0 ? { attachments } : {}),
        metadata: { mcpServer: deps.server, mcpTool: entry().listed.name }
      };
    }
  };
  return definition;
}

/** MCP content blocks → the model's text plus images. */
export function renderContent(
  content: ReadonlyArray<Record<string, unknown>>,
  structured: unknown
): { text: string; attachments: ToolAttachment[] } {
  const parts: string[] = [];
  const attachments: ToolAttachment[] = [];
  for (const block of content) {
    if (block.type === 'text' && typeof block.text === 'string') parts.push(block.text);
    else if (block.type === 'image' && typeof block.data === 'string' && typeof block.mimeType === 'string') {
      attachments.push({ type: 'image', mediaType: block.mimeType, data: block.data });
      parts.push(`[image ${block.mimeType}]`);
    } else if (block.type === 'resource' && typeof block.resource === 'object' && block.resource !== null) {
      const r = block.resource as Record<string, unknown>;
      parts.push(
        typeof r.text === 'string'
          ? `[resource ${String(r.uri)}]\n${r.text}`
          : `[resource ${String(r.uri)} (${String(r.mimeType ?? 'binary')})]`
      );
    } else if (block.type === 'resource_link')
      parts.push(`[resource link ${String(block.uri)}${block.name ? ` "${String(block.name)}"` : ''}]`);
    else parts.push(JSON.stringify(block));
  }
  if (parts.length === 0 && structured !== undefined) parts.push(JSON.stringify(structured, null, 1));
  return { text: parts.join('\n'), attachments };
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
