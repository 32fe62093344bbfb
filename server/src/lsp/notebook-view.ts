/**
 * A notebook as a language server sees it (LSP-6), pure: its code cells with IPython magics
 * neutralised by `notebooks/magics.ts` (the same view structural search parses: same lines
 * and columns, untouched lines byte-identical, so a position on a cell line is the same
 * position for the server), served either as an LSP 3.17 notebook document (one text
 * document per code cell) or, for a server without notebook support, as one concatenated
 * virtual document (cells joined with two blank lines, like jupyterlab-lsp). Every server
 * location maps back to (cell index, cell id, line).
 */
import { pathToFileURL } from 'node:url';
import { neutraliseMagics } from '../notebooks/magics.js';
import type { NotebookCellText } from './lsp-client.js';

/** One notebook cell as the view needs it. */
export interface ViewCell {
  /** The cell's id (nbformat ≥ 4.5) or `#<n>` (its number counting from 1). */
  id: string;
  cellType: 'code' | 'markdown' | 'raw';
  source: string;
}

/** Where a server position lands in the notebook. */
export interface CellLocation {
  /** 0-based index among all cells (the number shown is index + 1). */
  index: number;
  id: string;
  /** 1-based line within the cell. */
  line: number;
  /** 0-based character on that line. */
  character: number;
}

/** A notebook prepared for a server. */
export interface NotebookView {
  mode: 'native' | 'concatenated';
  /** The notebook's file URI (native: the notebook document's uri). */
  uri: string;
  /** native: the cell text documents; concatenated: one entry, the virtual document. */
  cells: NotebookCellText[];
  /** The original cells (source as written, magics included). */
  source: readonly ViewCell[];
  /** The server document + position of a cell line. */
  toServer(index: number, line: number, character: number): { uri: string; line: number; character: number };
  /** A server position back in the notebook, or undefined when it is not in a code cell. */
  fromServer(uri: string, line: number, character: number): CellLocation | undefined;
  /** Whether a URI is one of this view's documents. */
  owns(uri: string): boolean;
}

/**
 * The URI of one cell text document (the scheme servers know; the fragment is ours). The
 * generation changes with every new content of the notebook, so the empty publishes a
 * server sends for the closed cells of the previous generation never pass for the new ones.
 */
export function cellUri(notebookFile: string, id: string, index: number, generation = 0): string {
  return `${pathToFileURL(notebookFile).href.replace(/^file:/, 'vscode-notebook-cell:')}#g${generation}-c${index}-${encodeURIComponent(id)}`;
}

/** The virtual document of the concatenated fallback (never written to disk). */
export function concatenatedUri(notebookFile: string): string {
  return `${pathToFileURL(notebookFile).href}.cellmate-concat.py`;
}

/** Blank lines between two cells of the concatenated document. */
const SEPARATOR_LINES = 2;

/** Builds the view of a notebook for a server (see the module comment). */
export function buildNotebookView(
  notebookFile: string,
  cells: readonly ViewCell[],
  mode: 'native' | 'concatenated',
  languageId = 'python',
  generation = 0
): NotebookView {
  const uri = pathToFileURL(notebookFile).href;
  const code = cells.map((c, index) => ({ c, index })).filter(({ c }) => c.cellType === 'code');
  if (mode === 'native') {
    const docs = code.map(({ c, index }) => ({
      index,
      id: c.id,
      uri: cellUri(notebookFile, c.id, index, generation),
      text: neutraliseMagics(c.source).code
    }));
    const byUri = new Map(docs.map((d) => [decodeSafe(d.uri), d]));
    const byIndex = new Map(docs.map((d) => [d.index, d]));
    return {
      mode,
      uri,
      source: cells,
      cells: docs.map((d) => ({ uri: d.uri, kind: 'code', languageId, text: d.text })),
      toServer(index, line, character) {
        const d = byIndex.get(index);
        if (!d) throw new RangeError(`cell ${index + 1} is not a code cell`);
        return { uri: d.uri, line: line - 1, character };
      },
      fromServer(u, line, character) {
        const d = byUri.get(decodeSafe(u));
        return d ? { index: d.index, id: d.id, line: line + 1, character } : undefined;
      },
      owns: (u) => byUri.has(decodeSafe(u))
    };
  }
  // Concatenated: each code cell's first line and line count in the virtual document.
  const virtualUri = concatenatedUri(notebookFile);
  const spans: Array<{ index: number; id: string; start: number; lines: number }> = [];
  const parts: string[] = [];
  let at = 0;
  for (const { c, index } of code) {
    const text = neutraliseMagics(c.source).code;
    const lines = text.split('\n').length;
    spans.push({ index, id: c.id, start: at, lines });
    parts.push(text);
    at += lines + SEPARATOR_LINES;
  }
  return {
    mode,
    uri,
    source: cells,
    cells: [{ uri: virtualUri, kind: 'code', languageId, text: parts.join('\n'.repeat(SEPARATOR_LINES + 1)) }],
    toServer(index, line, character) {
      const s = spans.find((x) => x.index === index);
      if (!s) throw new RangeError(`cell ${index + 1} is not a code cell`);
      return { uri: virtualUri, line: s.start + line - 1, character };
    },
    fromServer(u, line, character) {
      if (decodeSafe(u) !== decodeSafe(virtualUri)) return undefined;
      const s = spans.find((x) => line >= x.start && line < x.start + x.lines);
      return s ? { index: s.index, id: s.id, line: line - s.start + 1, character } : undefined;
    },
    owns: (u) => decodeSafe(u) === decodeSafe(virtualUri)
  };
}

function decodeSafe(uri: string): string {
  try {
    return decodeURIComponent(uri);
  } catch {
    return uri;
  }
}
