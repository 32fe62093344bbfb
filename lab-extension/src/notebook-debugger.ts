/**
 * JupyterLab's own debugger kept in step with the kernel debugger Cellmate drives (issue
 * #12). While the agent debugs an open notebook's own kernel, JupyterLab's debugger handler
 * is asked to update that notebook: it reads the kernel's `debugInfo` (started, breakpoints,
 * stopped threads), so its bug button turns on, the agent's breakpoints are drawn in the
 * cells' gutters and the sidebar shows the stopped frame. After the session ended the same
 * update turns them off — unless the user's own JupyterLab debugger is on (the kernel
 * adapter joined it and leaves it running). Without JupyterLab's debugger this does nothing.
 */
import type { IDebugger } from '@jupyterlab/debugger';
import type { INotebookFocus } from './notebook-focus';

/** The pane's `syncNotebookDebugger` action (see `widgets/debug-card.ts`). */
export type NotebookDebuggerSync = (notebook: string) => void;

/** Builds {@link NotebookDebuggerSync} over JupyterLab's debugger service and handler. */
export function notebookDebuggerSync(service: IDebugger | null, handler: IDebugger.IHandler | null, focus: INotebookFocus): NotebookDebuggerSync {
  let chain: Promise<void> = Promise.resolve();
  return notebook => {
    const panel = service && handler ? focus.find(notebook) : undefined;
    if (!service || !handler || !panel) {
      return;
    }
    // One update at a time, in order: each re-reads the kernel's state.
    chain = chain
      .then(async () => {
        // JupyterLab's session caches "started". Re-read it from this kernel first: with a stale
        // "on" the handler would start JupyterLab's debugger again right after ours ended (and
        // its `stop` waits for a reply a kernel whose debugger is off never sends).
        const session = service.session;
        if (session && session.connection?.path === panel.sessionContext.session?.path) {
          await session.restoreState();
        }
        await handler.updateContext(panel, panel.sessionContext);
      })
      .catch(error => console.warn("Cellmate: could not update JupyterLab's debugger", error));
  };
}
