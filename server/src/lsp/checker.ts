/**
 * `lsp diagnostics "*"`: the project's own checker (`basedpyright --outputjson`,
 * `tsc --noEmit`, or a configured command with GNU `file:line:col: message` output) run in
 * the root, its output parsed into the same shape as server diagnostics. The process runs
 * in its own group with the scrubbed environment and is killed on abort.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { childEnv } from '../security/child-env.js';
import type { CheckerFormat } from './server-table.js';

/** One checker finding (1-based line). */
export interface CheckerDiagnostic {
  file: string;
  line: number;
  severity: 'error' | 'warning' | 'info' | 'hint';
  message: string;
  code?: string;
}

/** Runs `command args` in `cwd`; resolves with stdout (non-zero exit codes are normal for checkers). */
export function runChecker(
  executable: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal
): Promise<{ stdout: string; stderr: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(executable, [...args], {
      cwd,
      env: childEnv(env),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe']
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-4_000)));
    const kill = (): void => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    };
    signal.addEventListener('abort', kill, { once: true });
    child.once('error', (e) => reject(e));
    child.once('close', (code) => {
      signal.removeEventListener('abort', kill);
      resolve({ stdout, stderr, code });
    });
  });
}

/** Parses a checker's output (paths made absolute against `cwd`). */
export function parseCheckerOutput(format: CheckerFormat, stdout: string, cwd: string): CheckerDiagnostic[] {
  if (format === 'pyright-json') {
    const start = stdout.indexOf('{');
    const json = JSON.parse(start >= 0 ? stdout.slice(start) : stdout) as {
      generalDiagnostics?: Array<{
        file: string;
        severity: string;
        message: string;
        rule?: string;
        range?: { start: { line: number } };
      }>;
    };
    return (json.generalDiagnostics ?? []).map((d) => ({
      file: path.resolve(cwd, d.file),
      line: (d.range?.start.line ?? 0) + 1,
      severity: d.severity === 'information' ? 'info' : (d.severity as CheckerDiagnostic['severity']),
      message: d.message,
      ...(d.rule ? { code: d.rule } : {})
    }));
  }
  const out: CheckerDiagnostic[] = [];
  const re =
    format === 'tsc'
      ? /^(.+?)\((\d+),\d+\): (error|warning|message) (TS\d+): (.*)$/
      : /^(.+?):(\d+)(?::\d+)?: (?:(error|warning|note|info)\S*:? )?(.*)$/;
  for (const line of stdout.split('\n')) {
    const m = re.exec(line.trim());
    if (!m) continue;
    if (format === 'tsc')
      out.push({
        file: path.resolve(cwd, m[1]!),
        line: Number(m[2]),
        severity: m[3] === 'error' ? 'error' : m[3] === 'warning' ? 'warning' : 'info',
        message: m[5]!,
        code: m[4]!
      });
    else
      out.push({
        file: path.resolve(cwd, m[1]!),
        line: Number(m[2]),
        severity: m[3] === 'warning' ? 'warning' : m[3] === 'note' || m[3] === 'info' ? 'info' : 'error',
        message: m[4]!
      });
  }
  return out;
}
