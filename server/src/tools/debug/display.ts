/**
 * The debug card's display (`DebugDisplay`, protocol/src/tool-display.ts): the session's
 * state, where it is stopped, the top frames and the top frame's locals. Best effort: a
 * view that fails (the adapter just went away) leaves that part out.
 */
import type { DebugDisplay } from '@cellmate/protocol';
import type { ActiveDebug } from '../../dap/session-manager.js';

const CARD_FRAMES = 10;
const CARD_LOCALS = 20;
const CARD_VALUE_CHARS = 200;

/** The card for a session now. */
export async function debugDisplay(a: ActiveDebug): Promise<DebugDisplay> {
  const { session } = a;
  const display: DebugDisplay = {
    kind: 'debug',
    sessionId: session.id,
    adapter: session.adapter,
    target: session.target,
    state: session.state,
    ...(a.notebook ? { notebook: a.notebook } : {})
  };
  if (a.kernel) display.breakpoints = a.kernel.breakpointList();
  const stop = session.stopInfo;
  if (!stop) return display;
  display.reason = `${stop.reason}${stop.text ? `: ${stop.text.split('(note')[0]!.trim()}` : ''}${stop.description ? ` ${stop.description}` : ''}`;
  try {
    const { frames } = await session.stack(stop.threadId);
    display.frames = frames.slice(0, CARD_FRAMES).map((f) => ({
      name: f.name,
      label: f.label,
      line: f.line,
      ...(f.sourceLine !== undefined ? { sourceLine: f.sourceLine } : {}),
      ...(f.cell ? { cell: f.cell } : {})
    }));
    const top = frames[0];
    if (top) {
      const scope = (await session.scopes(top.id))[0];
      if (scope) {
        const { variables } = await session.variables(scope.variablesReference);
        display.locals = variables.slice(0, CARD_LOCALS).map((v) => ({
          name: v.name,
          value: v.value.length > CARD_VALUE_CHARS ? `${v.value.slice(0, CARD_VALUE_CHARS)}…` : v.value,
          ...(v.type ? { type: v.type } : {})
        }));
      }
    }
  } catch {
    // the adapter went away mid-way: show what we have
  }
  return display;
}
