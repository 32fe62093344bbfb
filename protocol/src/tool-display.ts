/** Tool-card displays by kind (issue #9): what a card shows beyond the result text. */
import type { EvalKernelInfo } from './kernel-info';

/**
 * What a tool card shows beyond the result text, tagged by `kind`; the pane renders each kind
 * with its own renderer (`lab-extension/src/widgets/tool-displays.ts`) and falls back to the
 * text renderer for a kind it does not know. Later kinds (a structural edit's `diff`, LSP
 * `locations`, a debugger's `debug` state) are added here as new members of the union.
 * Chat files written before kinds existed carry eval displays without `kind`.
 */
export type ToolCallDisplay = EvalDisplay | TextDisplay | DebugDisplay;

/** The kinds of {@link ToolCallDisplay}. */
export type ToolCallDisplayKind = ToolCallDisplay['kind'];

/** An eval card: the kernel, the rewritten magics, the rich outputs (MIME bundles shown untrusted). */
export interface EvalDisplay {
  kind: 'eval';
  kernel?: EvalKernelInfo;
  /** One line per rewritten magic (SPEC EVAL-4). */
  rewrites?: string[];
  /** In order: `text/plain` (stdout), `application/vnd.jupyter.stderr`, `text/html`, `image/png` (base64)… */
  outputs?: Array<Record<string, string>>;
}

/** A block of plain text (shown as text, never as HTML), optionally with a label. */
export interface TextDisplay {
  kind: 'text';
  text: string;
  /** A short heading over the text, e.g. `stderr`. */
  label?: string;
}

/** One frame on a debug card. */
export interface DebugFrameDisplay {
  name: string;
  /** `src/app.py` or `analysis.ipynb cell 3 (id 1a2b)`. */
  label: string;
  line: number;
  sourceLine?: string;
  /** Set when the frame is in a notebook cell (the pane scrolls the open notebook to it). */
  cell?: { notebook: string; cellId?: string; index: number };
}

/** A debugger card (SPEC DBG, issue #12): where the session is stopped, its stack and locals. */
export interface DebugDisplay {
  kind: 'debug';
  /** The chat's session id (the Terminate button names it). */
  sessionId: string;
  adapter: string;
  target: string;
  state: 'running' | 'stopped' | 'finished' | 'ended';
  /** Why it stopped (`breakpoint`, `exception: ValueError …`). */
  reason?: string;
  /** The top frames, the first is where it is stopped (at most 10). */
  frames?: DebugFrameDisplay[];
  /** The top frame's locals (at most 20; values cut at 200 characters). */
  locals?: Array<{ name: string; value: string; type?: string }>;
}
