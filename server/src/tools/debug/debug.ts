/**
 * The `debug` tool (SPEC DBG-1…5): one debug session per chat (`dap/session-manager.ts`)
 * over any adapter's {@link DapChannel} — process adapters (debugpy, lldb-dap, delve) or the
 * notebook kernel's own debugger (`run_cell`). `exec` tier, not parallel-safe: a session is
 * shared state. Every wait for a stop is bounded ("still running" is an answer).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { KernelManager } from '../../kernels/kernel-manager.js';
import { describeAdapters } from '../../dap/adapters.js';
import type { DebugSession } from '../../dap/debug-session.js';
import { KernelDebugTarget, verdict, type LineBreakpoint } from '../../dap/kernel-adapter.js';
import { DapRequestError } from '../../dap/protocol.js';
import {
  SessionRunningError,
  sourceKey,
  type ActiveDebug,
  type BreakpointSource,
  type DebugSessionManager,
  type ProcessLauncher
} from '../../dap/session-manager.js';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool, type ToolContext, type ToolOutput } from '../../gate/define-tool.js';
import { ToolInputError } from '../../base/tool-errors.js';
import type { NotebookPort } from '../../notebooks/pane-hub.js';
import { page } from '../../workspace/output-shaping.js';
import { resolveWorkspacePath } from '../../workspace/workspace-path.js';
import { readCell } from './cells.js';
import { debugJudgements, debugSubjects } from './debug-subjects.js';
import { debugDisplay } from './display.js';
import { formatBreakpoints, formatRunState, formatStack, formatStatus, formatVariables, frameLine } from './views.js';

export const DEBUG_ACTIONS = [
  'adapters',
  'status',
  'breakpoints',
  'exception_breakpoints',
  'launch',
  'attach',
  'run_cell',
  'continue',
  'pause',
  'step_over',
  'step_in',
  'step_out',
  'threads',
  'stack',
  'scopes',
  'variables',
  'evaluate',
  'output',
  'terminate'
] as const;

/**
 * Actions that only look (at the adapters, the session, a stopped program) or only say where
 * to stop: read tier. Breakpoints run nothing; the launch or run_cell they wait for still asks.
 */
const VIEW_ACTIONS: ReadonlySet<string> = new Set([
  'adapters',
  'status',
  'threads',
  'stack',
  'scopes',
  'variables',
  'output',
  'breakpoints',
  'exception_breakpoints'
]);
/**
 * Actions that move or end a session already running: no new question, because the person
 * (or a rule) allowed the launch or run_cell that started it, and these run nothing else.
 */
const SESSION_ACTIONS: ReadonlySet<string> = new Set([
  'continue',
  'pause',
  'step_over',
  'step_in',
  'step_out',
  'terminate'
]);

export const debugParameters = z.strictObject({
  action: z.enum(DEBUG_ACTIONS).describe('What to do (see the description for the arguments each action uses).'),
  file: z
    .string()
    .min(1)
    .optional()
    .describe('breakpoints: a source file, or a notebook (.ipynb) with `cell`; run_cell: the notebook.'),
  cell: z
    .string()
    .min(1)
    .optional()
    .describe('A notebook cell: its id (from notebook_read) or "#<n>" counting from 1.'),
  lines: z
    .array(z.number().int().min(1))
    .max(100)
    .optional()
    .describe('breakpoints: line numbers (1-based; within the cell for a notebook cell). [] clears the source.'),
  condition: z.string().optional().describe('breakpoints: stop only when this expression is true.'),
  filters: z
    .array(z.enum(['raised', 'uncaught']))
    .optional()
    .describe('exception_breakpoints: raised and/or uncaught; [] clears.'),
  adapter: z
    .enum(['debugpy', 'lldb', 'delve'])
    .optional()
    .describe('launch: which adapter (default: from the program, .py → debugpy, .go → delve, else lldb).'),
  program: z
    .string()
    .min(1)
    .optional()
    .describe('launch: the program (a .py script, a Go package folder or a compiled binary).'),
  args: z.array(z.string()).optional().describe('launch: program arguments.'),
  cwd: z.string().optional().describe('launch: working folder (default: the workspace).'),
  env: z.record(z.string(), z.string()).optional().describe('launch: extra environment variables.'),
  port: z.number().int().min(1).max(65535).optional().describe('attach: the loopback port a debugpy listens on.'),
  thread_id: z.number().int().optional().describe('continue/pause/steps/stack: thread (default: the stopped one).'),
  frame_id: z
    .number()
    .int()
    .optional()
    .describe('scopes/evaluate: frame id from stack (evaluate default: the top frame).'),
  reference: z.number().int().min(1).optional().describe('variables: a reference from scopes or variables.'),
  expression: z.string().min(1).optional().describe("evaluate: the expression, evaluated in the frame's own scope."),
  offset: z.number().int().min(1).optional().describe('output: first line (1-based). Default 1.'),
  limit: z.number().int().min(1).max(2000).optional().describe('output: lines to return. Default 200.')
});
type DebugArgs = z.output<typeof debugParameters>;

export interface DebugToolOptions {
  sessions: DebugSessionManager;
  /** The kernels `run_cell` debugs in (the focused notebook's, else the chat's private one). */
  kernels?: KernelManager;
  /** Open notebooks (cell code comes from the open document when there is one). */
  port?: NotebookPort;
  env?: NodeJS.ProcessEnv;
  /** Process adapters; without it `launch`/`attach` are refused with why. */
  launchProcess?: ProcessLauncher;
}

const need = <T>(value: T | undefined, what: string, action: string): T => {
  if (value === undefined) throw new ToolInputError(`debug ${action} needs \`${what}\`.`);
  return value;
};

/** Builds the debug tool around a session manager (DBG-1: registered only with one). */
export function createDebugTool(options: DebugToolOptions) {
  const { sessions } = options;

  const active = (ctx: ToolContext, action: string): ActiveDebug => {
    const a = sessions.chat(ctx.chatId).active;
    if (!a)
      throw new ToolInputError(
        `debug ${action}: no debug session is running in this chat. Start one with run_cell (a notebook cell) or launch (a program).`
      );
    return a;
  };
  const stopped = (ctx: ToolContext, action: string): DebugSession => {
    const { session } = active(ctx, action);
    if (session.state !== 'stopped')
      throw new ToolInputError(
        `debug ${action}: the debuggee is not stopped (it is ${session.state}). ${session.state === 'running' ? 'Call pause, or wait with status.' : 'Set a breakpoint and run again.'}`
      );
    return session;
  };

  async function breakpoints(args: DebugArgs, ctx: ToolContext): Promise<string> {
    const file = need(args.file, 'file', 'breakpoints');
    const lines: LineBreakpoint[] = need(args.lines, 'lines', 'breakpoints').map((line) => ({
      line,
      ...(args.condition ? { condition: args.condition } : {})
    }));
    const resolved = await resolveWorkspacePath(ctx.workspace, file);
    const state = sessions.chat(ctx.chatId);
    const a = state.active;
    if (resolved.relative.endsWith('.ipynb') || args.cell !== undefined) {
      const ref = need(args.cell, 'cell', 'breakpoints in a notebook');
      const cell = await readCell({
        absolute: resolved.absolute,
        relative: resolved.relative,
        ref,
        port: options.port,
        signal: ctx.signal
      });
      const source: BreakpointSource = { kind: 'cell', notebook: resolved.relative, cell: ref };
      setStored(state.breakpoints, source, lines);
      const where = `${resolved.relative} cell ${ref}`;
      const codeLines = cell.code.split(/\r?\n/);
      if (a?.kernel) return formatBreakpoints(where, await a.kernel.setCellBreakpoints(cell, lines), codeLines);
      return pending(where, lines, codeLines, 'run_cell');
    }
    const source: BreakpointSource = { kind: 'file', path: resolved.absolute, relative: resolved.relative };
    setStored(state.breakpoints, source, lines);
    const text = await readFile(resolved.absolute, 'utf8').catch(() => undefined);
    if (text === undefined) throw new ToolInputError(`${resolved.relative} does not exist.`);
    const codeLines = text.split(/\r?\n/);
    // A file works under the kernel's debugger too (a module the notebook imports).
    if (a)
      return formatBreakpoints(resolved.relative, await setFileBreakpoints(a, resolved.absolute, lines), codeLines);
    return pending(resolved.relative, lines, codeLines, 'launch or run_cell');
  }

  async function runCell(args: DebugArgs, ctx: ToolContext): Promise<ToolOutput> {
    const file = need(args.file, 'file', 'run_cell');
    const ref = need(args.cell, 'cell', 'run_cell');
    const resolved = await resolveWorkspacePath(ctx.workspace, file);
    const cell = await readCell({
      absolute: resolved.absolute,
      relative: resolved.relative,
      ref,
      port: options.port,
      signal: ctx.signal
    });
    const state = sessions.chat(ctx.chatId);
    let a = state.active;
    if (a && !a.kernel) throw new SessionRunningError(a.session);
    if (a?.kernel?.busy)
      throw new ToolInputError(
        `debug run_cell: a cell is still running under the debugger (session ${a.session.id}, ${a.session.state}). Call continue until it finishes, or terminate.`
      );
    const notes: string[] = [];
    if (!a) {
      if (!options.kernels) throw new ToolInputError('debug run_cell: no kernels are available in this companion.');
      const { handle, notes: kernelNotes } = await options.kernels.acquire(ctx.chatId, 'python');
      notes.push(...kernelNotes);
      const label =
        handle.info.origin === 'notebook'
          ? `the notebook's kernel (${handle.info.notebookPath ?? handle.info.name})`
          : "this chat's private Python kernel";
      const kernel = await KernelDebugTarget.start(handle.session.client, { kernelLabel: label });
      // While a cell is paused here, evals in this kernel (any chat's) are refused with where, not queued.
      const pausedAt = (): string | undefined => kernel.pausedAt();
      handle.pausedInDebugger = pausedAt;
      kernel.session.onDidChange((s) => {
        if (s === 'ended' && handle.pausedInDebugger === pausedAt) delete handle.pausedInDebugger;
      });
      const notebook = handle.info.origin === 'notebook' ? handle.info.notebookPath : undefined;
      a = { session: kernel.session, kernel, ...(notebook ? { notebook } : {}) };
      sessions.begin(ctx.chatId, a);
      notes.push(
        `Started debug session ${kernel.session.id} in ${label}${kernel.joined ? ' (joined the debugger already on in that kernel)' : ''}.`
      );
    }
    const kernel = a.kernel!;
    // Every stored cell breakpoint (a function defined in another cell stops there too).
    const verdicts: string[] = [];
    for (const bp of state.breakpoints.values()) {
      if (bp.source.kind === 'file') {
        const text = await readFile(bp.source.path, 'utf8').catch(() => '');
        verdicts.push(
          formatBreakpoints(
            bp.source.relative,
            await setFileBreakpoints(a, bp.source.path, bp.lines),
            text.split(/\r?\n/)
          )
        );
        continue;
      }
      const target =
        bp.source.notebook === resolved.relative && bp.source.cell === ref
          ? cell
          : await readCell({
              absolute: path.join(ctx.workspace, bp.source.notebook),
              relative: bp.source.notebook,
              ref: bp.source.cell,
              port: options.port,
              signal: ctx.signal
            }).catch(() => undefined);
      if (!target) continue;
      const results = await kernel.setCellBreakpoints(target, bp.lines);
      verdicts.push(
        formatBreakpoints(`${bp.source.notebook} cell ${bp.source.cell}`, results, target.code.split(/\r?\n/))
      );
    }
    await kernel.setExceptionFilters(state.exceptionFilters);
    await kernel.runCell(cell);
    const runState = await a.session.waitForStop(sessions.stopWaitMs, ctx.signal);
    const text = await formatRunState(a.session, runState, sessions.stopWaitMs, kernel.lastCellRun);
    const filters = state.exceptionFilters.length ? `Exception breakpoints: ${state.exceptionFilters.join(', ')}.` : '';
    return result(
      `run_cell ${resolved.relative} ${ref}`,
      [...notes, ...verdicts, filters, `Ran ${resolved.relative} cell ${ref} under the debugger.`, text],
      a
    );
  }

  async function resume(
    args: DebugArgs,
    ctx: ToolContext,
    command: 'continue' | 'next' | 'stepIn' | 'stepOut'
  ): Promise<ToolOutput> {
    const session = stopped(ctx, args.action);
    const threadId = await session.threadId(args.thread_id);
    await sessions.chat(ctx.chatId).active?.kernel?.reassertBreakpoints();
    session.markRunning();
    await session.channel.request(command, { threadId });
    const state = await session.waitForStop(sessions.stopWaitMs, ctx.signal);
    const a = active(ctx, args.action);
    return result(args.action, [await formatRunState(session, state, sessions.stopWaitMs, a.kernel?.lastCellRun)], a);
  }

  async function run(args: DebugArgs, ctx: ToolContext): Promise<ToolOutput> {
    const state = sessions.chat(ctx.chatId);
    switch (args.action) {
      case 'adapters': {
        const all = await describeAdapters({ workspace: ctx.workspace, env: options.env ?? process.env });
        return { title: 'debug adapters', output: all.map((s) => s.message).join('\n'), metadata: { adapters: all } };
      }
      case 'status': {
        const a = state.active;
        const lines = [formatStatus(a?.session)];
        if (a) lines.push(await formatRunState(a.session, a.session.state, 0, a.kernel?.lastCellRun));
        return result('debug status', lines, a);
      }
      case 'breakpoints': {
        const text = await breakpoints(args, ctx);
        // With a session, the card too: the pane syncs JupyterLab's debugger gutter from it.
        return state.active
          ? result(`breakpoints ${args.file ?? ''}`, [text], state.active)
          : { title: `breakpoints ${args.file ?? ''}`, output: text };
      }
      case 'exception_breakpoints': {
        state.exceptionFilters = [...need(args.filters, 'filters', 'exception_breakpoints')];
        const a = state.active;
        if (a?.kernel) await a.kernel.setExceptionFilters(state.exceptionFilters);
        else if (a) await a.session.channel.request('setExceptionBreakpoints', { filters: state.exceptionFilters });
        const what = state.exceptionFilters.length
          ? `stop on ${state.exceptionFilters.join(' and ')} exceptions`
          : 'exception breakpoints cleared';
        return {
          title: 'exception breakpoints',
          output: `${what}${a ? ' (applied to the running session)' : ' (applied when the session starts)'}.`
        };
      }
      case 'run_cell':
        return runCell(args, ctx);
      case 'launch':
      case 'attach': {
        sessions.assertNoSession(ctx.chatId);
        if (!options.launchProcess)
          throw new ToolInputError(
            `debug ${args.action}: program debugging is not available in this companion; use run_cell for notebook cells.`
          );
        const a = await options.launchProcess({ ...args, action: args.action }, ctx, state);
        sessions.begin(ctx.chatId, a);
        const runState = await a.session.waitForStop(sessions.stopWaitMs, ctx.signal);
        return result(
          `${args.action} ${a.session.target}`,
          [
            `Started debug session ${a.session.id} (${a.session.adapter}: ${a.session.target}).`,
            ...(a.breakpoints ?? []).map((b) => formatBreakpoints(b.where, b.results, b.lines)),
            await formatRunState(a.session, runState, sessions.stopWaitMs)
          ],
          a
        );
      }
      case 'continue':
        return resume(args, ctx, 'continue');
      case 'step_over':
        return resume(args, ctx, 'next');
      case 'step_in':
        return resume(args, ctx, 'stepIn');
      case 'step_out':
        return resume(args, ctx, 'stepOut');
      case 'pause': {
        const a = active(ctx, 'pause');
        if (a.session.state === 'stopped')
          return result('pause', ['Already stopped.', await formatRunState(a.session, 'stopped', 0)], a);
        await a.session.channel.request('pause', { threadId: await a.session.threadId(args.thread_id) });
        return result(
          'pause',
          [
            await formatRunState(
              a.session,
              await a.session.waitForStop(sessions.stopWaitMs, ctx.signal),
              sessions.stopWaitMs,
              a.kernel?.lastCellRun
            )
          ],
          a
        );
      }
      case 'threads': {
        const threads = await active(ctx, 'threads').session.threads();
        return {
          title: 'threads',
          output: threads.map((t) => `thread ${t.id}: ${t.name}`).join('\n') || '(no threads)'
        };
      }
      case 'stack': {
        const { frames, total } = await stopped(ctx, 'stack').stack(args.thread_id);
        return result('stack', [formatStack(frames, total)], active(ctx, 'stack'));
      }
      case 'scopes': {
        const session = stopped(ctx, 'scopes');
        const frameId = args.frame_id ?? (await session.stack()).frames[0]?.id;
        const scopes = await session.scopes(need(frameId, 'frame_id', 'scopes'));
        return {
          title: `scopes of frame ${frameId}`,
          output:
            scopes
              .map((s) => `${s.name}: reference=${s.variablesReference}${s.expensive ? ' (expensive)' : ''}`)
              .join('\n') || '(no scopes)'
        };
      }
      case 'variables': {
        const { variables, more } = await stopped(ctx, 'variables').variables(
          need(args.reference, 'reference', 'variables')
        );
        return { title: `variables ${args.reference}`, output: formatVariables(variables, more) };
      }
      case 'evaluate': {
        const r = await stopped(ctx, 'evaluate').evaluate(
          need(args.expression, 'expression', 'evaluate'),
          args.frame_id
        );
        const expand = r.reference > 0 ? ` [expand: reference=${r.reference}]` : '';
        return {
          title: `evaluate ${args.expression}`,
          output: `${r.result}${r.type ? ` (${r.type})` : ''}${expand}${r.frameId !== undefined ? `\n(in frame ${r.frameId})` : ''}`
        };
      }
      case 'output':
        return output(args, ctx);
      case 'terminate': {
        const notebook = state.active?.notebook;
        const ended = await sessions.terminate(ctx.chatId);
        if (!ended) return { title: 'terminate', output: 'No debug session was running in this chat.' };
        return {
          title: 'terminate',
          output: `Terminated debug session ${ended.id} (${ended.adapter}: ${ended.target}); its adapter is stopped.`,
          display: {
            kind: 'debug',
            sessionId: ended.id,
            adapter: ended.adapter,
            target: ended.target,
            state: 'ended',
            ...(notebook ? { notebook } : {})
          }
        };
      }
    }
  }

  function output(args: DebugArgs, ctx: ToolContext): ToolOutput {
    const { session } = active(ctx, 'output');
    const { text, dropped } = session.output();
    const lines = text.length ? text.replace(/\n$/, '').split('\n') : [];
    const offset = args.offset ?? 1;
    const limit = args.limit ?? 200;
    const p = page({
      entries: lines.slice(offset - 1),
      offset,
      limit,
      total: lines.length,
      maxChars: 20_000,
      noun: { one: 'line', many: 'lines' },
      tool: 'debug output'
    });
    const head = dropped ? `(${dropped} older characters of output were dropped)\n` : '';
    return { title: `output of session ${session.id}`, output: `${head}${p.text || '(no output yet)'}` };
  }

  return defineTool({
    name: 'debug',
    tier: 'exec',
    description: TOOL_DESCRIPTIONS.debug,
    parameters: debugParameters,
    examples: [
      {
        args: { action: 'breakpoints', file: 'analysis.ipynb', cell: '#3', lines: [3] },
        comment: "stop at line 3 of the notebook's third cell"
      },
      {
        args: { action: 'run_cell', file: 'analysis.ipynb', cell: '#3' },
        comment: "run that cell under the kernel's debugger; returns where it stopped"
      },
      { args: { action: 'evaluate', expression: 'len(rows) - i' }, comment: 'evaluate in the stopped frame' },
      {
        args: { action: 'launch', program: 'tools/report.py', args: ['--month', '11'] },
        comment: 'debug a Python program (stops at its breakpoints)'
      },
      { args: { action: 'continue' }, comment: 'run to the next stop (or "still running" after a bound)' }
    ],
    timeoutMs: 120_000,
    parallelSafe: false,
    outputShaping: 'paged',
    paths: (a) => [a.file, a.program, a.cwd],
    // Views, and stepping a session already allowed to start, ask nothing; what runs code asks.
    policyTier: (a, ctx) =>
      VIEW_ACTIONS.has(a.action) || (SESSION_ACTIONS.has(a.action) && sessions.chat(ctx.chatId).active)
        ? 'read'
        : 'exec',
    policySubjects: debugSubjects,
    alsoJudgedAs: debugJudgements,
    async execute(args, ctx) {
      const notice = sessions.takeUnreported(ctx.chatId);
      try {
        const r = await run(args, ctx);
        return notice ? { ...r, output: `${notice}\n${r.output}` } : r;
      } catch (e) {
        if (e instanceof DapRequestError || e instanceof SessionRunningError)
          throw new ToolInputError(notice ? `${notice}\n${e.message}` : e.message, { cause: e });
        throw e;
      }
    }
  });
}

/** Sends a file's breakpoints to the running session; the adapter's verdict for each. */
async function setFileBreakpoints(a: ActiveDebug, absolute: string, lines: readonly LineBreakpoint[]) {
  const body = await a.session.channel.request('setBreakpoints', {
    source: { path: absolute },
    breakpoints: lines.map((l) => ({ line: l.line, ...(l.condition ? { condition: l.condition } : {}) }))
  });
  return lines.map((l, i) => verdict(l, body.breakpoints[i]));
}

function setStored(
  store: Map<string, { source: BreakpointSource; lines: LineBreakpoint[] }>,
  source: BreakpointSource,
  lines: LineBreakpoint[]
): void {
  if (lines.length === 0) store.delete(sourceKey(source));
  else store.set(sourceKey(source), { source, lines });
}

function pending(
  where: string,
  lines: readonly LineBreakpoint[],
  codeLines: readonly string[],
  starter: string
): string {
  if (lines.length === 0) return `${where}: breakpoints cleared.`;
  const rows = lines.map((l) => {
    const text = codeLines[l.line - 1];
    return `line ${l.line}${l.condition ? ` if ${l.condition}` : ''}${text === undefined ? ' (past the end of the source)' : `: ${text.trim() || '(blank line)'}`} — pending, not verified yet`;
  });
  return `${where} (no session yet: sent to the debugger and verified when ${starter} starts it):\n${rows.join('\n')}`;
}

async function result(title: string, parts: readonly string[], a: ActiveDebug | undefined): Promise<ToolOutput> {
  return { title, output: parts.filter(Boolean).join('\n'), ...(a ? { display: await debugDisplay(a) } : {}) };
}

export { frameLine };
