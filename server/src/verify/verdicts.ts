/** What `notebook_verify` finds, per notebook and per code cell (plain data, HARN-3). */

/** A code cell's verdict: `not-run` after an earlier error (unless asked to go on). */
export type CellVerdict = 'ok' | 'error' | 'changed' | 'not-run';

export interface VerifiedCell {
  /** 0-based index among all the notebook's cells. */
  index: number;
  /** The cell's id, or `#<n>` (its number from 1) in notebooks without ids. */
  id: string;
  status: CellVerdict;
  /** For `error`: the exception and the traceback's last frames. */
  error?: { ename: string; evalue: string; frames: string[] };
  /** For `changed`: the first difference after normalisation, in words. */
  difference?: string;
  seconds?: number;
}

export interface NotebookVerdict {
  /** Workspace-relative path. */
  path: string;
  /**
   * `error`: a cell raised (or the idle budget or a dead kernel stopped it); `changed`: all
   * ran, some outputs differ; `could-not-run`: no kernel for it, or it did not start;
   * `aborted`: the turn was stopped.
   */
  status: 'ok' | 'error' | 'changed' | 'could-not-run' | 'aborted';
  kernel?: string;
  seconds: number;
  cells: VerifiedCell[];
  /** Why it could not run or stopped early. */
  reason?: string;
  /** Workspace-relative copy of the notebook with the new outputs (never the notebook itself). */
  outputsPath?: string;
}
