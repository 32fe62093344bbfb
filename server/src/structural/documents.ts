/**
 * What structural search parses: a source file is one document; a notebook is one
 * document per code cell, in the notebook's language, with IPython magics neutralised
 * (SPEC AST-6, `notebooks/magics.ts`). Pure apart from nothing: callers read the files.
 */
import { neutraliseMagics, type NeutralisedCell } from '../notebooks/magics.js';
import { languageOfPath, notebookLanguage, type StructuralLanguage } from './languages.js';

/** Where a notebook document sits: the cell's 0-based index and its nbformat id. */
export interface CellPlace {
  index: number;
  id?: string;
}

/** One parse unit. */
export interface SourceDocument {
  /** Workspace-relative path of the file (the notebook for a cell). */
  file: string;
  language: StructuralLanguage;
  /** The text as it is (a cell's joined source). */
  source: string;
  /** The text parsed: `source`, or the cell with magics neutralised (same length). */
  parsed: string;
  cell?: CellPlace;
  /** The neutralised ranges of a Python cell. */
  magic?: NeutralisedCell;
}

/** A notebook that could not be read as nbformat JSON. */
export interface NotebookProblem {
  file: string;
  reason: string;
}

/** The documents of one file's text; `undefined` for a file of no structural language. */
export function documentsOf(file: string, text: string): SourceDocument[] | NotebookProblem | undefined {
  if (file.toLowerCase().endsWith('.ipynb')) return notebookDocuments(file, text);
  const language = languageOfPath(file);
  if (!language) return undefined;
  return [{ file, language, source: text, parsed: text }];
}

function notebookDocuments(file: string, text: string): SourceDocument[] | NotebookProblem {
  let nb: { metadata?: unknown; cells?: unknown };
  try {
    nb = JSON.parse(text) as typeof nb;
  } catch (e) {
    return { file, reason: `not JSON (${(e as Error).message})` };
  }
  if (!nb || typeof nb !== 'object' || !Array.isArray(nb.cells)) return { file, reason: 'no cells list' };
  const language = notebookLanguage((nb.metadata ?? {}) as Record<string, unknown>);
  if (!language) return [];
  const docs: SourceDocument[] = [];
  nb.cells.forEach((c: unknown, index: number) => {
    const cell = c as { cell_type?: unknown; source?: unknown; id?: unknown };
    if (cell?.cell_type !== 'code') return;
    const source = Array.isArray(cell.source)
      ? cell.source.join('')
      : typeof cell.source === 'string'
        ? cell.source
        : undefined;
    if (source === undefined) return;
    const place: CellPlace = typeof cell.id === 'string' ? { index, id: cell.id } : { index };
    if (language === 'python') {
      const magic = neutraliseMagics(source);
      docs.push({ file, language, source, parsed: magic.code, cell: place, magic });
    } else docs.push({ file, language, source, parsed: source, cell: place });
  });
  return docs;
}

/** `path`, or `path` cell `#n (id …)`, 1-based like `notebook_read`. */
export function placeLabel(doc: Pick<SourceDocument, 'file' | 'cell'>): string {
  if (!doc.cell) return doc.file;
  return `${doc.file} cell #${doc.cell.index + 1}${doc.cell.id ? ` (id ${doc.cell.id})` : ''}`;
}
