/**
 * JupyterLab's own debugger kept in step with the kernel debugger Cellmate drives (issue
 * #12). While the agent debugs an open notebook's own kernel, JupyterLab's debugger handler
 * is asked to update that notebook: it reads the kernel's `debugInfo` (started, breakpoints,
 * stopped threads), so its bug button turns on, the agent's breakpoints are drawn in the
 * cells' gutters and the sidebar shows the stopped frame. After the session ended the same
 * update turns them off — unless the user's own JupyterLab debugger is on (the kernel
 * adapter joined it and leaves it running). Without JupyterLab's debugger this does nothing.
 *
 * JupyterLab's state restore writes its merged breakpoints back to the kernel, so it runs
 * only to turn JupyterLab's debugger on or off: once it is on for this notebook's kernel, the
 * breakpoints a card carries (the session's, after each debug call) go into JupyterLab's
 * model only — its gutters follow, and nothing is written to the kernel that could undo a
 * change the agent made meanwhile (the companion also sets them again before a resume).
 */
import type { IDebugger } from '@jupyterlab/debugger';
import type { INotebookFocus } from './notebook-focus';

/** The session's cell breakpoints as a debug card carries them (kernel source path → lines). */
export type CellBreakpoints = ReadonlyArray<{ source: string; lines: readonly number[] }>;

/** The pane's `syncNotebookDebugger` action (see `widgets/debug-card.ts`). */
export type NotebookDebuggerSync = (notebook: string, breakpoints?: CellBreakpoints) => void;

/** Builds {@link NotebookDebuggerSync} over JupyterLab's debugger service and handler. */
export function notebookDebuggerSync(
  service: IDebugger | null,
  handler: IDebugger.IHandler | null,
  focus: INotebookFocus
): NotebookDebuggerSync {
  let chain: Promise<void> = Promise.resolve();
  /** Sources whose breakpoints this sync drew, so a source the session cleared is cleared too. */
  let drawn = new Set<string>();
  return (notebook, breakpoints) => {
    const panel = service && handler ? focus.find(notebook) : undefined;
    if (!service || !handler || !panel) {
      return;
    }
    // One update at a time, in order: each re-reads the kernel's state.
    chain = chain
      .then(async () => {
        const session = service.session;
        const ours = !!session && session.connection?.path === panel.sessionContext.session?.path;
        if (!(breakpoints && ours && service.isStarted)) {
          // JupyterLab's session caches "started". Re-read it from this kernel first: with a stale
          // "on" the handler would start JupyterLab's debugger again right after ours ended (and
          // its `stop` waits for a reply a kernel whose debugger is off never sends).
          if (ours) {
            await session!.restoreState();
          }
          await handler.updateContext(panel, panel.sessionContext);
        }
        if (
          !breakpoints ||
          !service.isStarted ||
          service.session?.connection?.path !== panel.sessionContext.session?.path
        ) {
          drawn = new Set();
          return;
        }
        const now = new Set(breakpoints.map((b) => b.source));
        for (const source of drawn) {
          if (!now.has(source)) {
            service.model.breakpoints.setBreakpoints(source, []);
          }
        }
        for (const { source, lines } of breakpoints) {
          service.model.breakpoints.setBreakpoints(
            source,
            lines.map((line) => ({ line, verified: true, source: { path: source } }))
          );
        }
        drawn = now;
      })
      .catch((error) => console.warn("Cellmate: could not update JupyterLab's debugger", error));
  };
}
