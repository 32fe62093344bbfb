/** Which kernel ran an eval (a leaf module: `index.ts` and `tool-display.ts` both use it). */

/** A kernel an eval ran in; the transcript always says which (SPEC EVAL-2). */
export interface EvalKernelInfo {
  /** Jupyter Server kernel id, or `private-<pid>` for a chat's own kernel. */
  id: string;
  /** Kernelspec name, e.g. `python3`, `cellmate-js`. */
  name: string;
  language: string;
  /** `notebook`: the focused notebook's kernel (shared); `private`: the chat's own. */
  origin: 'notebook' | 'private';
  notebookPath?: string;
}
