/**
 * A minimal logger. Everything goes to stderr: in `--stdio` mode stdout carries JSON-RPC,
 * and in socket mode stdout carries exactly one `CELLMATE_READY` line.
 */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string, error?: unknown): void;
}

/** A logger writing `<iso time> <level> [<scope>] message` lines to stderr. */
export function createStderrLogger(scope: string): Logger {
  const write = (level: string, message: string): void => {
    process.stderr.write(`${new Date().toISOString()} ${level} [${scope}] ${message}\n`);
  };
  return {
    info: (m) => write('info', m),
    warn: (m) => write('warn', m),
    error: (m, e) =>
      write('error', e === undefined ? m : `${m}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`)
  };
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = { info: () => {}, warn: () => {}, error: () => {} };
