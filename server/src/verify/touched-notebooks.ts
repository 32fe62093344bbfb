/**
 * What a change touched, for `notebook_verify`: after a tool changed files, the notebooks
 * to run again — the notebooks it changed, and those that import a changed module
 * (the code graph's import edges, through other modules too). A write hook: its line goes
 * under the tool's result with the call to make.
 */
import type { WriteChange, WriteHook, WriteHookResult } from '../ports/gate-ports.js';
import type { CodeGraph, CodeGraphs } from '../structural/graph/code-graph.js';
import { languageOfPath } from '../structural/languages.js';

/** A notebook a change touched, and why. */
export interface TouchedNotebook {
  path: string;
  /** `changed`, or the module it imports on the way to a changed file. */
  why: string;
}

/**
 * The tools whose results name touched notebooks: those that change code as text. A
 * notebook tool's own edit or run is the person's notebook work, not a change of code it uses.
 */
const CODE_CHANGING_TOOLS: ReadonlySet<string> = new Set([
  'resolve',
  'lsp_rename',
  'lsp_code_action',
  'edit',
  'write',
  'apply_patch'
]);

/** Notebooks at most named in one result (the rest are counted). */
const MAX_NAMED = 20;

/** The notebooks `files` (workspace-relative) touch: changed ones first, then importers. */
export async function touchedNotebooks(
  graph: CodeGraph,
  files: readonly string[],
  signal: AbortSignal
): Promise<TouchedNotebook[]> {
  const isNotebook = (f: string): boolean => f.toLowerCase().endsWith('.ipynb');
  const out: TouchedNotebook[] = files.filter(isNotebook).map((path) => ({ path, why: 'changed' }));
  const modules = files.filter((f) => !isNotebook(f) && languageOfPath(f) !== undefined);
  if (modules.length === 0) return out;
  await graph.refresh(signal);
  const seen = new Set(out.map((n) => n.path));
  for (const imp of graph.importers(modules)) {
    if (!isNotebook(imp.file) || seen.has(imp.file)) continue;
    seen.add(imp.file);
    const cell = imp.cell ? ` in cell ${imp.cell.index + 1}` : '';
    out.push({
      path: imp.file,
      why:
        imp.depth === 1 ? `imports ${imp.imports}${cell}` : `imports ${imp.imports}${cell}, which leads to the change`
    });
  }
  return out;
}

/** The result's lines for touched notebooks, with the call that verifies them. */
export function touchedText(notebooks: readonly TouchedNotebook[]): string {
  const named = notebooks.slice(0, MAX_NAMED);
  const more = notebooks.length - named.length;
  return [
    `Notebooks this change touched (${notebooks.length}): ${named.map((n) => `${n.path} (${n.why})`).join('; ')}${more ? `; and ${more} more` : ''}.`,
    `Check they still run: notebook_verify ${JSON.stringify({ notebooks: notebooks.slice(0, 200).map((n) => n.path) })}`
  ].join('\n');
}

/** The write hook (see the module comment). */
export class TouchedNotebooksHook implements WriteHook {
  constructor(private readonly graphs: CodeGraphs) {}

  async afterWrite(change: WriteChange, signal: AbortSignal): Promise<WriteHookResult | undefined> {
    if (!CODE_CHANGING_TOOLS.has(change.tool)) return undefined;
    const notebooks = await touchedNotebooks(this.graphs.of(change.workspace), change.files, signal);
    return notebooks.length ? { text: touchedText(notebooks) } : undefined;
  }
}
