/**
 * Review's axes (SPEC MODE-4): the checks `finalize_review` runs on the
 * companion itself — the model never gets a shell for them (Review's surface stays below
 * `exec`). Each axis says `passed`, `failed` or `not-run` and why; `review.ts` turns them
 * into the verdict (a failed axis → Block, one that could not run → at least Hold).
 *
 * - **lint**: the language server's diagnostics of every changed file (`lsp diagnostics
 *   <file>` through the registry: the same surface, policy and audit as the model's own
 *   call); an error or a warning fails it. `CELLMATE_REVIEW_LINT_COMMAND` (a shell command
 *   line the person who started Jupyter configured) replaces it.
 * - **type-check**: the project checker (`lsp diagnostics "*"`: basedpyright, tsc, or a
 *   configured one) — an error in a changed file it covers fails it; changed notebooks,
 *   which the checkers do not read, are judged by their language-server errors instead.
 * - **tests**: `CELLMATE_REVIEW_TEST_COMMAND` when configured (exit 0 passes); else
 *   `notebook_verify` on the notebooks in scope (changed ones and those importing a changed
 *   module): a notebook that errors fails it, one that could not run leaves it not-run.
 *
 * Commands come from the companion's environment only, never from the workspace: a cloned
 * repository must not be able to make a review run its code. Running notebooks does run
 * the repository's code, so that call is judged as exec on its own one-tool surface: the
 * policy asks the person (default), and a refusal leaves the axis not-run.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { LspDisplay } from '@cellmate/protocol';
import { childEnv } from '../security/child-env.js';
import type { ToolContext } from '../gate/define-tool.js';
import type { ReviewAxesPort } from '../tools/finalize_review/finalize_review.js';
import type { CheckerRun } from '../tools/lsp/lsp.js';
import type { ToolRegistry } from '../gate/registry.js';
import type { AxisResult } from '../modes/review/review.js';
import type { CapabilityProfile } from '../ports/vocabulary.js';
import type { CodeGraphs } from '../structural/graph/code-graph.js';
import { touchedNotebooks } from '../verify/touched-notebooks.js';
import type { NotebookVerdict } from '../verify/verdicts.js';

/** The environment variables that configure the axes. */
export const REVIEW_AXIS_ENV = {
  lint: 'CELLMATE_REVIEW_LINT_COMMAND',
  tests: 'CELLMATE_REVIEW_TEST_COMMAND',
  timeout: 'CELLMATE_REVIEW_COMMAND_TIMEOUT_MS'
} as const;

/** How many changed files the per-file language-server pass looks at. */
const MAX_FILES = 50;
/** Default budget of a configured command (10 minutes). */
const DEFAULT_COMMAND_TIMEOUT_MS = 10 * 60_000;

export interface ReviewAxesOptions {
  /** The registry the `lsp` calls go through (late-bound: the axes are built before it is complete). */
  registry: () => Pick<ToolRegistry, 'call' | 'get'>;
  /** The companion's environment: the axis commands and the child environment come from it. */
  env: NodeJS.ProcessEnv;
  /** The code graph, for the notebooks that import a changed module; absent: changed notebooks only. */
  graphs?: CodeGraphs;
}

/** The one-tool surface the tests axis runs notebooks on (judged as exec: the policy asks). */
const VERIFY_SURFACE: CapabilityProfile = { name: 'review-tests', maxTier: 'exec', allow: ['notebook_verify'] };

/** One changed file's language-server diagnostics, counted by severity. */
interface FileDiagnostics {
  file: string;
  errors: number;
  warnings: number;
}

/** The axes of the companion (see the module comment). */
export function createReviewAxes(options: ReviewAxesOptions): ReviewAxesPort {
  return {
    async run(files, ctx) {
      const lsp = options.registry().get('lsp') !== undefined;
      const existing = [...new Set(files)].filter((f) => existsSync(path.join(ctx.workspace, f)));
      ctx.progress?.({ lastLine: 'lint: language-server diagnostics of the changed files' });
      const perFile = lsp ? await serverDiagnostics(options, existing, ctx) : undefined;
      const lintCommand = options.env[REVIEW_AXIS_ENV.lint]?.trim();
      const lint = lintCommand
        ? await commandAxis('lint', lintCommand, existing, options.env, ctx)
        : lintFrom(perFile, files, existing);
      ctx.progress?.({ lastLine: 'type-check: the project checker' });
      const types = lsp
        ? await typeCheck(options, existing, perFile!, ctx)
        : { axis: 'type-check', status: 'not-run' as const, detail: 'no language-server tools in this companion' };
      const testCommand = options.env[REVIEW_AXIS_ENV.tests]?.trim();
      ctx.progress?.({ lastLine: testCommand ? `tests: ${testCommand}` : 'tests: no command configured' });
      const tests = testCommand
        ? await commandAxis('tests', testCommand, existing, options.env, ctx)
        : await notebookAxis(options, existing, ctx);
      return [lint, types, tests];
    }
  };
}

/** The tests axis without a command: the notebooks in scope through `notebook_verify`. */
async function notebookAxis(
  options: ReviewAxesOptions,
  files: readonly string[],
  ctx: ToolContext
): Promise<AxisResult> {
  const none = `could not run: no test command is configured (set ${REVIEW_AXIS_ENV.tests} for the companion)`;
  if (!options.registry().get('notebook_verify')) return { axis: 'tests', status: 'not-run', detail: none };
  const touched = options.graphs
    ? await touchedNotebooks(options.graphs.of(ctx.workspace), files, ctx.signal).catch(() => undefined)
    : files.filter((f) => f.endsWith('.ipynb')).map((path) => ({ path, why: 'changed' }));
  const notebooks = (touched ?? []).map((n) => n.path).filter((f) => existsSync(path.join(ctx.workspace, f)));
  if (notebooks.length === 0)
    return { axis: 'tests', status: 'not-run', detail: `${none}, and no notebook in scope to verify` };
  ctx.progress?.({
    lastLine: `tests: notebook_verify on ${notebooks.length} notebook${notebooks.length === 1 ? '' : 's'}`
  });
  const r = await options
    .registry()
    .call('notebook_verify', { notebooks: notebooks.slice(0, 200) }, { ...subContext(ctx), profile: VERIFY_SURFACE });
  if (!r.ok)
    return { axis: 'tests', status: 'not-run', detail: `notebook_verify did not run: ${r.output.split('\n')[0]}` };
  const verdicts = (Array.isArray(r.metadata?.notebooks) ? r.metadata.notebooks : []) as NotebookVerdict[];
  const failing = verdicts.filter((n) => n.status === 'error');
  const unrun = verdicts.filter((n) => n.status === 'could-not-run' || n.status === 'aborted');
  const where = (n: NotebookVerdict): string => {
    const cell = n.cells.find((c) => c.status === 'error');
    return cell ? `${n.path} cell ${cell.index + 1}: ${cell.error?.ename ?? 'error'}` : n.path;
  };
  if (failing.length)
    return { axis: 'tests', status: 'failed', detail: `notebook_verify: ${failing.map(where).join('; ')}` };
  if (unrun.length)
    return {
      axis: 'tests',
      status: 'not-run',
      detail: `notebook_verify could not run ${unrun.map((n) => `${n.path} (${n.reason ?? n.status})`).join('; ')}`
    };
  const changed = verdicts.filter((n) => n.status === 'changed').length;
  return {
    axis: 'tests',
    status: 'passed',
    detail: `notebook_verify: ${verdicts.length} notebook${verdicts.length === 1 ? '' : 's'} ran without errors${changed ? ` (${changed} with changed outputs)` : ''}`
  };
}

function subContext(ctx: ToolContext): ToolContext {
  const { callId: _call, progress: _progress, isPathAllowed: _paths, ...rest } = ctx;
  return rest;
}

/** `lsp diagnostics <file>` for each changed file; files no server serves (or the policy withholds) are left out. */
async function serverDiagnostics(
  options: ReviewAxesOptions,
  files: readonly string[],
  ctx: ToolContext
): Promise<{ served: FileDiagnostics[]; unserved: string[] }> {
  const served: FileDiagnostics[] = [];
  const unserved: string[] = [];
  for (const file of files.slice(0, MAX_FILES)) {
    if (ctx.signal.aborted) break;
    const r = await options.registry().call('lsp', { action: 'diagnostics', file }, subContext(ctx));
    if (!r.ok) {
      unserved.push(file);
      continue;
    }
    const locations = r.display?.kind === 'lsp' ? (r.display as LspDisplay).locations : [];
    served.push({
      file,
      errors: locations.filter((l) => l.severity === 'error').length,
      warnings: locations.filter((l) => l.severity === 'warning').length
    });
  }
  return { served, unserved };
}

function lintFrom(
  perFile: { served: FileDiagnostics[]; unserved: string[] } | undefined,
  files: readonly string[],
  existing: readonly string[]
): AxisResult {
  if (files.length === 0) return { axis: 'lint', status: 'not-run', detail: 'the review names no changed files' };
  if (existing.length === 0)
    return {
      axis: 'lint',
      status: 'not-run',
      detail: 'none of the changed files exists any more (deleted files have nothing to lint)'
    };
  if (!perFile)
    return {
      axis: 'lint',
      status: 'not-run',
      detail: `no language-server tools in this companion and no ${REVIEW_AXIS_ENV.lint}`
    };
  const { served, unserved } = perFile;
  if (served.length === 0)
    return {
      axis: 'lint',
      status: 'not-run',
      detail: `no language server serves the changed files (${existing.slice(0, 5).join(', ')}${existing.length > 5 ? ', …' : ''})`
    };
  const bad = served.filter((f) => f.errors + f.warnings > 0);
  const skipped = unserved.length
    ? `; ${unserved.length} file${unserved.length === 1 ? '' : 's'} without a language server`
    : '';
  const capped =
    existing.length > MAX_FILES ? `; only the first ${MAX_FILES} of ${existing.length} files were checked` : '';
  if (bad.length) {
    return {
      axis: 'lint',
      status: 'failed',
      detail: `language-server errors/warnings in ${bad.map((f) => `${f.file} (${f.errors} error${f.errors === 1 ? '' : 's'}, ${f.warnings} warning${f.warnings === 1 ? '' : 's'})`).join(', ')}${skipped}${capped}`
    };
  }
  return {
    axis: 'lint',
    status: 'passed',
    detail: `no errors or warnings from the language server in ${served.length} changed file${served.length === 1 ? '' : 's'}${skipped}${capped}`
  };
}

/** The project checker over the changed files it covers; changed notebooks by their language-server errors. */
async function typeCheck(
  options: ReviewAxesOptions,
  files: readonly string[],
  perFile: { served: FileDiagnostics[] },
  ctx: ToolContext
): Promise<AxisResult> {
  if (files.length === 0) return { axis: 'type-check', status: 'not-run', detail: 'no changed file exists to check' };
  const notebooks = perFile.served.filter((f) => f.file.endsWith('.ipynb'));
  const sources = files.filter((f) => !f.endsWith('.ipynb'));
  const parts: string[] = [];
  let errors = 0;
  let covered = notebooks.length;
  for (const nb of notebooks) {
    errors += nb.errors;
    if (nb.errors) parts.push(`${nb.file}: ${nb.errors} error${nb.errors === 1 ? '' : 's'} (language server)`);
  }
  let checkerProblem: string | undefined;
  if (sources.length) {
    const r = await options.registry().call('lsp', { action: 'diagnostics', file: '*' }, subContext(ctx));
    if (!r.ok) {
      checkerProblem = r.output.split('\n')[0];
    } else {
      const runs = (Array.isArray(r.metadata?.checkers) ? r.metadata.checkers : []) as CheckerRun[];
      const ran = runs.filter((c) => c.ran);
      const isCovered = (f: string): boolean =>
        ran.some(
          (c) =>
            c.extensions.includes(path.extname(f)) && (c.root === '.' || f === c.root || f.startsWith(`${c.root}/`))
        );
      const checked = sources.filter(isCovered);
      covered += checked.length;
      const locations = r.display?.kind === 'lsp' ? (r.display as LspDisplay).locations : [];
      const inChanged = locations.filter((l) => l.severity === 'error' && checked.includes(l.path));
      errors += inChanged.length;
      const byFile = new Map<string, number>();
      for (const l of inChanged) byFile.set(l.path, (byFile.get(l.path) ?? 0) + 1);
      for (const [file, n] of byFile)
        parts.push(`${file}: ${n} error${n === 1 ? '' : 's'} (${ran.map((c) => c.command).join(', ')})`);
      if (checked.length === 0) {
        checkerProblem = ran.length
          ? `the project checker (${ran.map((c) => c.command).join(', ')}) covers none of the changed files`
          : runs.map((c) => `${c.server}: ${c.problem ?? 'did not run'}`).join('; ') ||
            'no project checker can run here';
      }
    }
  }
  if (covered === 0)
    return {
      axis: 'type-check',
      status: 'not-run',
      detail: `could not run: ${checkerProblem ?? 'no language server serves the changed notebooks'}`
    };
  if (errors > 0) return { axis: 'type-check', status: 'failed', detail: parts.join('; ') };
  return {
    axis: 'type-check',
    status: 'passed',
    detail: `no type errors in ${covered} changed file${covered === 1 ? '' : 's'}${checkerProblem ? ` (${checkerProblem})` : ''}`
  };
}

/** A configured command line, run by `/bin/sh -c` in the workspace; exit 0 passes. */
async function commandAxis(
  axis: string,
  command: string,
  files: readonly string[],
  env: NodeJS.ProcessEnv,
  ctx: ToolContext
): Promise<AxisResult> {
  const raw = Number(env[REVIEW_AXIS_ENV.timeout]);
  const timeoutMs = Number.isInteger(raw) && raw > 0 ? raw : DEFAULT_COMMAND_TIMEOUT_MS;
  const r = await runCommand(
    command,
    ctx.workspace,
    childEnv(env, { CELLMATE_REVIEW_FILES: files.join('\n') }),
    ctx.signal,
    timeoutMs
  );
  const tail = r.output.trim().split('\n').slice(-5).join(' | ').slice(-600);
  if (r.error) return { axis, status: 'not-run', detail: `could not run \`${command}\`: ${r.error}` };
  if (r.timedOut)
    return {
      axis,
      status: 'not-run',
      detail: `\`${command}\` did not finish within ${Math.round(timeoutMs / 1000)} s and was stopped`
    };
  if (r.aborted) return { axis, status: 'not-run', detail: `\`${command}\` was stopped (the turn was stopped)` };
  if (r.code === 0) return { axis, status: 'passed', detail: `\`${command}\` exited 0` };
  return {
    axis,
    status: 'failed',
    detail: `\`${command}\` exited ${r.code ?? 'on a signal'}${tail ? `: ${tail}` : ''}`
  };
}

/** Runs a shell command line in its own process group; keeps the last 8 KB of its output; kills the group on abort or timeout. */
function runCommand(
  command: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal,
  timeoutMs: number
): Promise<{ code: number | null; output: string; timedOut: boolean; aborted: boolean; error?: string }> {
  return new Promise((resolve) => {
    let output = '';
    let timedOut = false;
    const child = spawn('/bin/sh', ['-c', command], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (c: string): void => {
      output = (output + c).slice(-8_000);
    };
    child.stdout.setEncoding('utf8').on('data', keep);
    child.stderr.setEncoding('utf8').on('data', keep);
    const kill = (): void => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, timeoutMs);
    signal.addEventListener('abort', kill, { once: true });
    const done = (result: { code: number | null; error?: string }): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', kill);
      resolve({ ...result, output, timedOut, aborted: signal.aborted });
    };
    child.once('error', (e) => done({ code: null, error: e.message }));
    child.once('close', (code) => done({ code }));
  });
}
