import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { dangerousCommandReason } from '../../policy/dangerous-command.js';
import { shellSubjects } from '../../policy/shell-subjects.js';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool } from '../../gate/define-tool.js';
import { ToolInputError } from '../../base/tool-errors.js';
import { resolveWorkspacePath } from '../../workspace/workspace-path.js';
import { childEnv } from '../../security/child-env.js';
import { signalGroup, trackGroup } from '../../supervisor/process-group.js';

export const DEFAULT_SHELL_TIMEOUT_MS = 120_000;
export const MAX_SHELL_TIMEOUT_MS = 600_000;
/** Output kept in memory; past this the rest is counted, not kept (said in the result). */
const MAX_CAPTURE_CHARS = 32 * 1024 * 1024;
/** After SIGTERM, the group gets this long before SIGKILL. */
const KILL_GRACE_MS = 2_000;

export const shellParameters = z.strictObject({
  command: z
    .string({ error: 'must be a string (a bash command line)' })
    .min(1, { error: 'must not be empty' })
    .refine((c) => !c.includes('\0'), { error: 'must not contain NUL bytes' })
    .describe('The bash command line to run, e.g. "python -m pytest -q".'),
  cwd: z
    .string({ error: 'must be a folder path relative to the workspace' })
    .optional()
    .describe('Working folder relative to the workspace. Default: the workspace root.'),
  timeout_ms: z
    .number({ error: 'must be a number of milliseconds' })
    .int({ error: 'must be a whole number of milliseconds' })
    .min(1_000, { error: 'must be at least 1000' })
    .max(MAX_SHELL_TIMEOUT_MS, { error: `must be at most ${MAX_SHELL_TIMEOUT_MS}` })
    .optional()
    .describe(`Kill the command after this many milliseconds. Default ${DEFAULT_SHELL_TIMEOUT_MS}.`)
});

/** `shell`: `bash -c` in its own process group; timeout and abort kill the whole tree. */
export const shellTool = defineTool({
  name: 'shell',
  tier: 'exec',
  description: TOOL_DESCRIPTIONS.shell,
  parameters: shellParameters,
  examples: [
    { args: { command: 'python -m pytest -q tests/' }, comment: 'run the tests' },
    { args: { command: 'git status --short', cwd: '.' }, comment: 'what changed' }
  ],
  timeoutMs: MAX_SHELL_TIMEOUT_MS + 10_000,
  actionClasses: ['run-process'],
  policySubjects: (args) => shellSubjects(args.command),
  dangerReason: (args) => dangerousCommandReason(args.command),
  async execute(args, ctx) {
    const cwd = await resolveWorkspacePath(ctx.workspace, args.cwd ?? '.');
    if (!cwd.exists || !(await stat(cwd.absolute)).isDirectory()) {
      throw new ToolInputError(`cwd "${args.cwd}" is not a folder in the workspace.`);
    }
    const timeoutMs = args.timeout_ms ?? DEFAULT_SHELL_TIMEOUT_MS;
    const run = await runShell(args.command, cwd.absolute, timeoutMs, ctx.signal);
    const status = run.timedOut
      ? `[killed after the ${timeoutMs} ms timeout${run.signal ? ` (${run.signal})` : ''}]`
      : run.signal
        ? `[killed by ${run.signal}]`
        : `[exit code ${run.code}]`;
    const dropped =
      run.droppedChars > 0 ? `\n[${run.droppedChars} more characters of output were not kept (over 32 MB)]` : '';
    const body = run.output.length > 0 ? `${run.output.replace(/\n$/, '')}\n` : '(no output)\n';
    return {
      title: `${args.command.slice(0, 60)} → ${run.timedOut ? 'timeout' : (run.signal ?? `exit ${run.code}`)}`,
      output: `${body}${status}${dropped}`,
      metadata: { exitCode: run.code, signal: run.signal, timedOut: run.timedOut }
    };
  }
});

interface ShellRun {
  output: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  droppedChars: number;
}

/** Runs `bash -c` in a new process group; kills the group on timeout or abort (and on exit). */
export function runShell(command: string, cwd: string, timeoutMs: number, signal: AbortSignal): Promise<ShellRun> {
  // Secrets stay out of the command's environment (security/child-env.ts).
  const env = childEnv(process.env);
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    // Killed if the companion exits first (the one registry of live process groups).
    const untrack = child.pid !== undefined ? trackGroup(child.pid) : () => undefined;
    let output = '';
    let dropped = 0;
    let timedOut = false;
    let killTimer: NodeJS.Timeout | undefined;
    const onData = (chunk: Buffer): void => {
      const text = chunk.toString('utf8');
      if (output.length + text.length <= MAX_CAPTURE_CHARS) output += text;
      else dropped += text.length;
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const killGroup = (): void => {
      if (child.pid === undefined || child.exitCode !== null) return;
      if (!signalGroup(child.pid, 'SIGTERM')) return;
      killTimer ??= setTimeout(() => signalGroup(child.pid!, 'SIGKILL'), KILL_GRACE_MS);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    const onAbort = (): void => killGroup();
    signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      reject(error);
    });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      signal.removeEventListener('abort', onAbort);
      // Children that outlive bash (backgrounded with &) keep the group: end them too.
      untrack();
      if (child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
      resolve({ output, code, signal: sig, timedOut, droppedChars: dropped });
    });
  });
}
