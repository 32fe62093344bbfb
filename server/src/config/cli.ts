import { parseArgs } from 'node:util';

/** Parsed command line of `main.js`. */
export type CliOptions =
  | { kind: 'run'; workspace: string; socketPath?: string; stdio: boolean }
  | { kind: 'help' }
  | { kind: 'error'; message: string };

/** Usage text printed by `--help` and on argument errors. */
export const USAGE = `Usage: node server/dist/main.js --workspace <dir> (--socket <path> | --stdio)

  --socket <path>     listen for JSON-RPC connections on this Unix socket (mode 0600);
                      prints "CELLMATE_READY <path>" on stdout once listening
  --stdio             serve one JSON-RPC connection over stdin/stdout (debugging, tests)
  --workspace <dir>   the workspace root (default: the current directory)
  --help              show this help

Environment: OPENAI_API_KEY, ANTHROPIC_API_KEY, CELLMATE_OPENAI_COMPATIBLE_API_KEY,
CELLMATE_CONFIG (default ~/.cellmate/config.json), CELLMATE_STREAM_IDLE_TIMEOUT_MS,
CELLMATE_MAX_STEPS, CELLMATE_SCRIPT_LOG.`;

/** Parses argv (without node and script). Pure. */
export function parseCli(argv: readonly string[], cwd: string): CliOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        socket: { type: 'string' },
        stdio: { type: 'boolean', default: false },
        workspace: { type: 'string' },
        help: { type: 'boolean', default: false }
      },
      strict: true,
      allowPositionals: false
    }));
  } catch (error) {
    return { kind: 'error', message: (error as Error).message };
  }
  if (values.help) return { kind: 'help' };
  if (values.socket !== undefined && values.stdio)
    return { kind: 'error', message: 'use either --socket or --stdio, not both' };
  if (values.socket === undefined && !values.stdio)
    return { kind: 'error', message: 'one of --socket <path> or --stdio is required' };
  if (values.socket !== undefined && values.socket.trim() === '')
    return { kind: 'error', message: '--socket needs a path' };
  return { kind: 'run', workspace: values.workspace ?? cwd, socketPath: values.socket, stdio: values.stdio };
}
