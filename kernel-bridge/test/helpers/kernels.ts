/** Shared set-up for tests against real kernels. */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AnyMessage } from '../../src/messaging/messages.js';

export const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const REPO_DIR = resolve(PACKAGE_DIR, '..');
export const VENV_PYTHON = join(REPO_DIR, '.venv', 'bin', 'python');
export const HAS_VENV_PYTHON = existsSync(VENV_PYTHON);
export const JS_KERNEL_MAIN = join(PACKAGE_DIR, 'dist', 'js-kernel', 'main.js');

/**
 * The JS kernel runs from `dist/` in its own process, so build the package first
 * (incremental: about a second when nothing changed). Only the JS-kernel test file calls
 * this, so no two test files write `dist/` at once.
 */
export function buildKernelBridge(): void {
  const tsc = join(REPO_DIR, 'node_modules', 'typescript', 'bin', 'tsc');
  execFileSync(process.execPath, [tsc, '-b', PACKAGE_DIR], { cwd: REPO_DIR, stdio: 'pipe', timeout: 120_000 });
}

/** Text of the stream messages of one name, joined. */
export function streamText(iopub: AnyMessage[], name: 'stdout' | 'stderr'): string {
  return iopub
    .filter((m) => m.header.msg_type === 'stream' && (m.content as { name: string }).name === name)
    .map((m) => (m.content as { text: string }).text)
    .join('');
}

/** The IOPub messages of one type. */
export function ofType(iopub: AnyMessage[], type: string): AnyMessage[] {
  return iopub.filter((m) => m.header.msg_type === type);
}

/**
 * A stand-in for the server registry's `shell` tool, for EvalSession tests: the kernel's
 * shell magics arrive as `tool('shell', {command, cwd})` calls (EVAL-5). Runs `bash -c` in
 * `cwd` and answers in the shell tool's format (output, then `[exit code N]`); any other
 * tool, or a command matching `deny`, is refused like the registry would.
 */
export async function shellToolStandIn(
  name: string,
  args: unknown,
  deny?: RegExp
): Promise<{ ok: true; output: string } | { ok: false; error: string }> {
  const { spawnSync } = await import('node:child_process');
  const { command, cwd } = args as { command: string; cwd?: string };
  if (name !== 'shell') return { ok: false, error: `Tool "${name}" is not available here.` };
  if (deny?.test(command))
    return { ok: false, error: `Denied: shell on ${JSON.stringify(command)} is denied by the policy rule.` };
  const r = spawnSync('bash', ['-c', command], { cwd, encoding: 'utf8' });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  return { ok: true, output: `${out.length ? `${out.replace(/\n$/, '')}\n` : '(no output)\n'}[exit code ${r.status}]` };
}
