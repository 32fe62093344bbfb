/**
 * `launch` / `attach` for the process adapters (DBG-4/5): debugpy (`python -m
 * debugpy.adapter`, the project's venv python first), lldb (`lldb-dap`, stdio) and delve
 * (`dlv dap --listen 127.0.0.1:0`, TCP, one client). The start sequence copes with the real
 * adapters' order (FACTS): `initialize` → send `launch`/`attach` without awaiting it (debugpy
 * answers it only after `configurationDone`) → the `initialized` event → breakpoints and
 * exception filters → `configurationDone` → the launch response.
 */
import path from 'node:path';
import { ToolInputError } from '../base/tool-errors.js';
import { readFile } from 'node:fs/promises';
import { resolveWorkspacePath } from '../workspace/workspace-path.js';
import { adapterStatus, type ProcessAdapterName } from './adapters.js';
import { startAdapterProcess } from './adapter-process.js';
import { DapClient } from './dap-client.js';
import { DebugSession } from './debug-session.js';
import { verdict } from './kernel-adapter.js';
import type { BreakpointReport, ChatDebugState, ProcessLauncher } from './session-manager.js';
import type { DebugProtocol } from './protocol.js';

/** Start-up bound: initialize → stopped-or-running. */
const START_TIMEOUT_MS = 60_000;

/** The adapter for a program when none is named. */
export function adapterFor(program: string): ProcessAdapterName {
  if (program.endsWith('.py')) return 'debugpy';
  if (program.endsWith('.go')) return 'delve';
  return 'lldb';
}

/** Builds the `launch`/`attach` starter the debug tool uses. */
export function processLauncher(opts: { env: NodeJS.ProcessEnv }): ProcessLauncher {
  return async (args, ctx, state) => {
    const attach = args.action === 'attach';
    const program = attach ? undefined : args.program;
    if (!attach && !program) throw new ToolInputError('debug launch needs `program`.');
    if (attach && args.port === undefined)
      throw new ToolInputError('debug attach needs `port` (a debugpy listening on 127.0.0.1).');
    const resolved = program ? await resolveWorkspacePath(ctx.workspace, program) : undefined;
    const name: ProcessAdapterName = attach ? 'debugpy' : (args.adapter ?? adapterFor(resolved!.absolute));
    const status = await adapterStatus(name, { workspace: ctx.workspace, env: opts.env }, resolved?.absolute);
    if (!status.usable || !status.command) throw new ToolInputError(`debug ${args.action}: ${status.message}.`);
    const cwd = args.cwd ? (await resolveWorkspacePath(ctx.workspace, args.cwd)).absolute : ctx.workspace;
    const command = name === 'delve' ? [...status.command, '--listen', '127.0.0.1:0'] : status.command;
    const proc = await startAdapterProcess(command, { cwd, tcp: name === 'delve', name });
    const client = new DapClient(proc.reader, proc.writer, name, name === 'delve');
    void proc.exited.then((how) =>
      client.close(
        new Error(
          `the adapter process ended (${how})${proc.stderrTail() ? `; stderr: ${proc.stderrTail().split('\n').slice(-3).join(' | ')}` : ''}`
        )
      )
    );
    const target = attach ? `attach 127.0.0.1:${args.port}` : resolved!.relative;
    const session = new DebugSession(client, {
      adapter: name,
      target,
      ...(name === 'lldb' ? { evaluateContext: 'watch' as const } : {}),
      onEnd: async () => {
        await client.request('disconnect', { terminateDebuggee: true }, { timeoutMs: 3000 }).catch(() => undefined);
        proc.kill();
      }
    });
    let breakpoints: BreakpointReport[];
    try {
      breakpoints = await configure(
        client,
        name,
        state,
        attach
          ? { connect: { host: '127.0.0.1', port: args.port! }, justMyCode: true }
          : launchArguments(name, resolved!.absolute, args.args ?? [], cwd, args.env ?? {}, status.command[0]!)
      );
    } catch (e) {
      await session.end({ reason: 'adapter-exited', message: (e as Error).message });
      throw new ToolInputError(`debug ${args.action} failed: ${(e as Error).message}`, { cause: e });
    }
    return { session, breakpoints, pid: proc.pid };
  };
}

function launchArguments(
  name: ProcessAdapterName,
  program: string,
  argv: string[],
  cwd: string,
  env: Record<string, string>,
  exe: string
): Record<string, unknown> {
  if (name === 'debugpy')
    return {
      type: 'python',
      request: 'launch',
      program,
      args: argv,
      cwd,
      env,
      console: 'internalConsole',
      justMyCode: true,
      python: [exe]
    };
  // outputMode remote: delve sends the debuggee's stdout/stderr as `output` events (default: its own stdout).
  if (name === 'delve')
    return {
      request: 'launch',
      mode: program.endsWith('.go') ? 'debug' : 'exec',
      program: program.endsWith('.go') ? path.dirname(program) : program,
      args: argv,
      cwd,
      env,
      outputMode: 'remote'
    };
  return { request: 'launch', program, args: argv, cwd, env: Object.entries(env).map(([k, v]) => `${k}=${v}`) };
}

/** Runs the start sequence; answers one line per breakpoint source with the adapter's verdicts. */
async function configure(
  client: DapClient,
  name: ProcessAdapterName,
  state: ChatDebugState,
  launchArgs: Record<string, unknown>
): Promise<BreakpointReport[]> {
  const initialized = new Promise<void>((resolve) => {
    const sub = client.onEvent((e) => {
      if (e.event === 'initialized') {
        sub.dispose();
        resolve();
      }
    });
  });
  const caps = await client.request(
    'initialize',
    {
      clientID: 'cellmate',
      clientName: 'Cellmate',
      adapterID: name,
      pathFormat: 'path',
      linesStartAt1: true,
      columnsStartAt1: true,
      supportsVariableType: true,
      supportsRunInTerminalRequest: false,
      locale: 'en'
    },
    { timeoutMs: START_TIMEOUT_MS }
  );
  const started = client.request(launchArgs.connect ? 'attach' : 'launch', launchArgs, { timeoutMs: START_TIMEOUT_MS });
  started.catch(() => undefined);
  await Promise.race([initialized, started.then(() => initialized)]);
  const reports: BreakpointReport[] = [];
  for (const bp of state.breakpoints.values()) {
    if (bp.source.kind !== 'file') continue;
    const body = await client.request('setBreakpoints', {
      source: { path: bp.source.path },
      breakpoints: bp.lines.map((l) => ({ line: l.line, ...(l.condition ? { condition: l.condition } : {}) }))
    });
    const text = await readFile(bp.source.path, 'utf8').catch(() => '');
    reports.push({
      where: bp.source.relative,
      results: bp.lines.map((l, i) => verdict(l, body.breakpoints[i])),
      lines: text.split(/\r?\n/)
    });
  }
  const known = new Set(
    (caps?.exceptionBreakpointFilters ?? []).map((f: DebugProtocol.ExceptionBreakpointsFilter) => f.filter)
  );
  const filters = state.exceptionFilters.filter((f) => known.has(f));
  if (known.size > 0) await client.request('setExceptionBreakpoints', { filters });
  if (caps?.supportsConfigurationDoneRequest) await client.request('configurationDone', undefined);
  await started;
  return reports;
}
