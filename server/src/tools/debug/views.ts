/**
 * The text the `debug` tool answers with: where a session is stopped, stacks, variables,
 * breakpoint verdicts. Pure formatting over the session's views (`dap/debug-session.ts`).
 */
import type { DebugSession, FrameView, RunState, VariableView } from '../../dap/debug-session.js';
import type { BreakpointResult, CellRunEnd } from '../../dap/kernel-adapter.js';
import { describeSession } from '../../dap/session-manager.js';

/** `analysis.ipynb cell 2 (id ab12), line 3: total += i`. */
export function frameLine(f: FrameView): string {
  const src = f.sourceLine !== undefined ? `: ${f.sourceLine.trim()}` : '';
  return `${f.label}, line ${f.line}${src}`;
}

/** One frame per line: `#<frame id> <function> — <where>`. */
export function formatStack(frames: readonly FrameView[], total: number): string {
  const lines = frames.map((f) => `frame ${f.id} ${f.name} — ${frameLine(f)}`);
  if (total > frames.length) lines.push(`(${frames.length} of ${total} frames shown)`);
  return lines.join('\n') || '(no frames)';
}

/** `name (type) = value [expand: variables reference=7]`. */
export function formatVariables(vars: readonly VariableView[], more: boolean): string {
  const lines = vars.map((v) => {
    const type = v.type ? ` (${v.type})` : '';
    const expand = v.reference > 0 ? ` [expand: reference=${v.reference}]` : '';
    const cut = v.truncated ? ' [value cut at 400 characters]' : '';
    return `${v.name}${type} = ${v.value}${cut}${expand}`;
  });
  if (more) lines.push('(first 50 children shown)');
  return lines.join('\n') || '(no variables)';
}

/** Each breakpoint with its line's source and whether the adapter verified it. */
export function formatBreakpoints(
  where: string,
  results: readonly BreakpointResult[],
  lines: readonly string[] | undefined
): string {
  if (results.length === 0) return `${where}: breakpoints cleared.`;
  const rows = results.map((b) => {
    const text = lines?.[b.line - 1];
    const src = text === undefined ? ' (past the end of the source)' : `: ${text.trim() || '(blank line)'}`;
    const cond = b.condition ? ` if ${b.condition}` : '';
    const state = b.verified
      ? b.actualLine !== undefined
        ? `set, verified (moved to line ${b.actualLine})`
        : 'set, verified'
      : `NOT set — the debugger did not verify it${b.message ? `: ${b.message}` : ''}`;
    return `line ${b.line}${cond}${src} — ${state}`;
  });
  return `${where}:\n${rows.join('\n')}`;
}

/** What happened after a run/continue/step: stopped where, finished how, or still running. */
export async function formatRunState(
  session: DebugSession,
  state: RunState,
  waitedMs: number,
  cellEnd?: CellRunEnd
): Promise<string> {
  if (state === 'running') {
    return `Still running after ${Math.round(waitedMs / 1000)} s (no stop yet). Call debug status or continue to wait again, pause to stop it, or terminate.`;
  }
  if (state === 'ended') return `The session ended: ${session.ending?.message ?? 'unknown reason'}.`;
  if (state === 'finished') {
    const how = cellEnd
      ? cellEnd.status === 'ok'
        ? 'The cell finished without error.'
        : cellEnd.status === 'error'
          ? `The cell finished with an error: ${cellEnd.detail}.`
          : `The cell did not finish normally (${cellEnd.status}${cellEnd.detail ? `: ${cellEnd.detail}` : ''}).`
      : 'The program finished.';
    const out = session.output().text;
    const tail = out.trimEnd().split('\n').slice(-5).join('\n');
    return `${how}${tail ? `\nLast output:\n${tail}` : ''}${cellEnd ? '\nThe session stays open: run_cell again, or terminate.' : '\nCall output to read all of it, then terminate.'}`;
  }
  const stop = session.stopInfo;
  const { frames } = await session.stack(stop?.threadId).catch(() => ({ frames: [] as FrameView[] }));
  const top = frames[0];
  const why = stop
    ? `${stop.reason}${stop.text ? ` ${stop.text.split('(note')[0]!.trim()}` : ''}${stop.description ? `: ${stop.description}` : ''}`
    : 'stopped';
  const where = top ? ` in ${top.name} at ${frameLine(top)}` : '';
  return `Stopped (${why})${where}${stop?.threadId !== undefined ? ` [thread ${stop.threadId}]` : ''}${top ? ` [top frame_id=${top.id}]` : ''}.`;
}

/** `status` text. */
export function formatStatus(session: DebugSession | undefined): string {
  if (!session) return 'No debug session is running in this chat.';
  return `Running: ${describeSession(session)}.`;
}
