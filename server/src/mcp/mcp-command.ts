/**
 * `cellmate mcp [--workspace <dir>]`: Cellmate's stateless tools as an MCP
 * server on stdin/stdout for another agent; logs go to stderr. See `serve.ts`.
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createStderrLogger } from '../config/logger.js';
import { serveMcpStdio } from './serve.js';

/** Usage of the `mcp` subcommand. */
export const MCP_USAGE = `Usage: cellmate mcp [--workspace <dir>]

Serves Cellmate's stateless tools (read, grep, glob, ast_grep, code_graph, lsp) as an MCP
server over stdin/stdout, with the workspace's policy files and audit log (actor "mcp").`;

/** Runs the subcommand; resolves with the exit code once the client disconnected. */
export async function runMcpCommand(argv: readonly string[]): Promise<number> {
  let workspace: string;
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: { workspace: { type: 'string' }, help: { type: 'boolean', default: false } },
      strict: true,
      allowPositionals: false
    });
    if (values.help) {
      process.stderr.write(`${MCP_USAGE}\n`);
      return 0;
    }
    workspace = await realpath(path.resolve(values.workspace ?? process.cwd()));
  } catch (error) {
    process.stderr.write(`cellmate mcp: ${(error as Error).message}\n\n${MCP_USAGE}\n`);
    return 2;
  }
  // stdout is the protocol: nothing else may print there.
  console.log = console.info = console.debug = (...args: unknown[]) => console.error(...args);
  await serveMcpStdio({
    workspace,
    env: process.env,
    logger: createStderrLogger('cellmate-mcp'),
    input: process.stdin,
    output: process.stdout
  });
  return 0;
}
