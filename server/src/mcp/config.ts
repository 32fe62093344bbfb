/**
 * MCP server configuration: `~/.cellmate/mcp.json` (`CELLMATE_HOME`)
 * then `<workspace>/.cellmate/mcp.json`, in the `{"mcpServers": {name: …}}` shape other MCP
 * clients use. A server of the same name in a later file replaces the earlier one — except
 * that the workspace's own file never replaces one of the person's. A broken file or entry
 * is reported and skipped, never fatal.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { cellmateHome } from '../config/home-paths.js';
import { trustHint } from '../security/workspace-trust.js';
import { z } from 'zod';
import type { ToolTier } from '../ports/vocabulary.js';

/** A server started as a child process speaking MCP over stdin/stdout. */
export interface StdioServerConfig {
  kind: 'stdio';
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  tier: ToolTier;
  /** The file the entry came from (errors and the status list name it). */
  file: string;
}

/** A server reached over Streamable HTTP. */
export interface HttpServerConfig {
  kind: 'http';
  name: string;
  url: string;
  headers: Record<string, string>;
  tier: ToolTier;
  file: string;
}

export type McpServerConfig = StdioServerConfig | HttpServerConfig;

/** A config file or entry that could not be used; the message names file, entry and fix. */
export class McpConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpConfigError';
  }
}

const tier = z.enum(['read', 'write', 'exec']).optional();
const stdioEntry = z.object({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().optional(),
  tier,
  disabled: z.boolean().optional()
});
const httpEntry = z.object({
  type: z.enum(['http', 'streamable-http', 'streamableHttp']).optional(),
  url: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string(), z.string()).optional(),
  tier,
  disabled: z.boolean().optional()
});
const fileSchema = z.object({ mcpServers: z.record(z.string(), z.unknown()) });

/** Server names become tool-name prefixes: letters, digits, `_` and `-`. */
const SERVER_NAME = /^[A-Za-z0-9_-]{1,40}$/;

/** The config files, in the order they apply. */
export function mcpConfigFiles(workspace: string, env: NodeJS.ProcessEnv): string[] {
  const home = cellmateHome(env);
  return [path.join(home, 'mcp.json'), path.join(workspace, '.cellmate', 'mcp.json')];
}

const EXAMPLE =
  '{"mcpServers": {"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]}, "remote": {"url": "https://example.org/mcp"}}}';

/** Why a workspace's server was not started or contacted, and the one line that changes that (workspace trust: `security/workspace-trust.ts`). */
export function untrustedMessage(config: McpServerConfig, homeFile: string, workspace: string): string {
  const what =
    config.kind === 'stdio'
      ? `a command (${JSON.stringify(config.command)}); commands from a workspace's files run`
      : `a server at ${config.url}; servers from a workspace's files are contacted`;
  return `not started: ${config.file} is the workspace's own file and defines ${what} only in a workspace you trust — ${trustHint(workspace, homeFile)}, or define the server there.`;
}

/**
 * Reads the files (missing ones are skipped); problems go to `onProblem`. An entry of
 * `workspaceFile` (the workspace's own, a cloned repository's) never replaces an entry of
 * the same name from an earlier file: the name would carry the person's trust (approved
 * descriptions, their expectations) to the repository's server. It may disable one.
 */
export async function loadMcpConfig(
  files: readonly string[],
  onProblem: (error: McpConfigError) => void = () => {},
  workspaceFile?: string
): Promise<McpServerConfig[]> {
  const servers = new Map<string, McpServerConfig>();
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      continue;
    }
    let parsed: z.infer<typeof fileSchema>;
    try {
      parsed = fileSchema.parse(JSON.parse(text));
    } catch (error) {
      onProblem(new McpConfigError(`${file}: ${describe(error)}. Expected ${EXAMPLE}.`));
      continue;
    }
    for (const [name, raw] of Object.entries(parsed.mcpServers)) {
      if (!SERVER_NAME.test(name)) {
        onProblem(
          new McpConfigError(
            `${file}: server name ${JSON.stringify(name)} must be 1–40 letters, digits, "_" or "-" (it prefixes its tools' names).`
          )
        );
        continue;
      }
      const entry = parseEntry(file, name, raw, onProblem);
      const earlier = servers.get(name);
      if (
        entry &&
        entry !== 'disabled' &&
        earlier &&
        workspaceFile !== undefined &&
        path.resolve(file) === path.resolve(workspaceFile)
      ) {
        onProblem(
          new McpConfigError(
            `${file}: server "${name}" is ignored: ${earlier.file} defines a server of that name, and a workspace's own file never replaces it (give the workspace's server another name).`
          )
        );
        continue;
      }
      if (entry === 'disabled') servers.delete(name);
      else if (entry) servers.set(name, entry);
    }
  }
  return [...servers.values()];
}

function parseEntry(
  file: string,
  name: string,
  raw: unknown,
  onProblem: (error: McpConfigError) => void
): McpServerConfig | 'disabled' | undefined {
  const isHttp = typeof raw === 'object' && raw !== null && 'url' in raw;
  const result = isHttp ? httpEntry.safeParse(raw) : stdioEntry.safeParse(raw);
  if (!result.success) {
    onProblem(
      new McpConfigError(
        `${file}: server "${name}": ${describe(result.error)}. A server has either {"command", "args", "env"} (stdio) or {"url", "headers"} (Streamable HTTP).`
      )
    );
    return undefined;
  }
  const data = result.data;
  if (data.disabled) return 'disabled';
  if ('url' in data)
    return { kind: 'http', name, url: data.url, headers: data.headers ?? {}, tier: data.tier ?? 'exec', file };
  const cwd = data.cwd ? path.resolve(path.dirname(file), data.cwd) : undefined;
  return {
    kind: 'stdio',
    name,
    command: data.command,
    args: data.args ?? [],
    env: data.env ?? {},
    ...(cwd ? { cwd } : {}),
    tier: data.tier ?? 'exec',
    file
  };
}

function describe(error: unknown): string {
  if (error instanceof z.ZodError)
    return error.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`).join('; ');
  return error instanceof Error ? error.message : String(error);
}
