#!/usr/bin/env node
/**
 * CLI of the companion server (started by the Python Jupyter server extension):
 *
 *   node server/dist/main.js --socket <path> --workspace <dir>
 *   node server/dist/main.js --stdio --workspace <dir>
 *   node server/dist/main.js mcp [--workspace <dir>]     (`cellmate mcp`: Cellmate's MCP server on stdio)
 *
 * Socket mode prints exactly one stdout line, `CELLMATE_READY <socketpath>`, once
 * listening; all logs go to stderr. SIGTERM/SIGINT close the socket and flush chats.
 */
import { parseCli, USAGE } from './config/cli.js';
import { createStderrLogger } from './config/logger.js';
import { startServer } from './server.js';
import { runMcpCommand } from './mcp/mcp-command.js';

async function main(): Promise<number | undefined> {
  if (process.argv[2] === 'mcp') return runMcpCommand(process.argv.slice(3));
  const cli = parseCli(process.argv.slice(2), process.cwd());
  if (cli.kind === 'help') {
    process.stderr.write(`${USAGE}\n`);
    return 0;
  }
  if (cli.kind === 'error') {
    process.stderr.write(`cellmate-server: ${cli.message}\n\n${USAGE}\n`);
    return 2;
  }
  const logger = createStderrLogger('cellmate-server');
  // Libraries log with console.log (e.g. @jupyterlab/services for notebook kernels); stdout
  // is the protocol in --stdio mode and a one-line contract in socket mode: send it to stderr.
  console.log = console.info = console.debug = (...args: unknown[]) => console.error(...args);
  const handle = await startServer({
    workspace: cli.workspace,
    socketPath: cli.socketPath,
    stdio: cli.stdio ? { input: process.stdin, output: process.stdout } : undefined,
    logger
  });
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal}: shutting down`);
    handle.dispose().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error('shutdown failed', error);
        process.exit(1);
      }
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  if (cli.stdio) {
    process.stdin.on('end', () => stop('stdin closed'));
  } else {
    process.stdout.write(`CELLMATE_READY ${handle.socketPath}\n`);
  }
  logger.info(`workspace ${handle.workspace}; ${cli.stdio ? 'serving stdio' : `listening on ${handle.socketPath}`}`);
  return undefined;
}

main().then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `cellmate-server: failed to start: ${error instanceof Error ? error.message : String(error)}\n`
    );
    process.exit(1);
  }
);
