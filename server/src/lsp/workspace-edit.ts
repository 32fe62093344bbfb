/**
 * A server's WorkspaceEdit (rename, a code action) as the shared all-or-nothing edit's
 * changes (`server/src/edits/`): text files carry the text the server saw (its open copy,
 * else the file as read when the answer came), notebook cells carry their source as
 * written — the server saw them with magics neutralised line for line, so an edit is
 * applied to the original source only where both read the same. Cells come from the open
 * notebook documents we served, from the concatenated fallback, or from notebooks the
 * server indexed from disk itself (`file:///x.ipynb#<n>`).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TextEdit, WorkspaceEdit } from 'vscode-languageserver-protocol';
import { applyLspEdits, offsetAt, type Change } from '../edits/index.js';
import { ToolInputError } from '../base/tool-errors.js';
import type { DocumentSync } from './documents.js';
import type { LspClient } from './lsp-client.js';
import { neutraliseMagics } from '../notebooks/magics.js';

/** Edits by server URI, from either form of WorkspaceEdit. */
export function editsByUri(edit: WorkspaceEdit): Map<string, TextEdit[]> {
  const out = new Map<string, TextEdit[]>();
  const add = (uri: string, edits: readonly TextEdit[]): void => void out.set(uri, [...(out.get(uri) ?? []), ...edits]);
  for (const [uri, edits] of Object.entries(edit.changes ?? {})) add(uri, edits);
  for (const dc of edit.documentChanges ?? []) {
    if ('kind' in dc)
      throw new ToolInputError(
        `The server wants to ${dc.kind} a file (${'uri' in dc ? dc.uri : dc.oldUri}); Cellmate applies text edits only. Nothing was changed.`
      );
    add(
      dc.textDocument.uri,
      dc.edits.filter((e): e is TextEdit => 'newText' in e)
    );
  }
  return out;
}

interface CellTarget {
  file: string;
  cell: string;
  index: number;
  /** The source as written (magics included). */
  source: string;
  /** The server's text of the cell region, line for line (neutralised). */
  served: string;
  /** Line offset of the cell in the server document (concatenated fallback), else 0. */
  lineOffset: number;
}

/** Turns a WorkspaceEdit into changes for `applyChanges`; also returns how many edits per file. */
export async function toChanges(
  edit: WorkspaceEdit,
  client: LspClient,
  docs: DocumentSync,
  workspace: string
): Promise<{ changes: Change[]; counts: Map<string, number> }> {
  const textChanges: Change[] = [];
  const cellEdits = new Map<string, Map<string, { target: CellTarget; edits: TextEdit[] }>>();
  const counts = new Map<string, number>();
  const count = (file: string, n: number): void => void counts.set(file, (counts.get(file) ?? 0) + n);
  for (const [uri, edits] of editsByUri(edit)) {
    const targets = await cellTargets(uri, edits, docs);
    if (targets) {
      for (const { target, edits: own } of targets) {
        const perFile = cellEdits.get(target.file) ?? new Map<string, { target: CellTarget; edits: TextEdit[] }>();
        cellEdits.set(target.file, perFile);
        const entry = perFile.get(target.cell) ?? { target, edits: [] };
        entry.edits.push(...own);
        perFile.set(target.cell, entry);
        count(rel(workspace, target.file), own.length);
      }
      continue;
    }
    const file = fileURLToPath(uri);
    const expected = client.openText(uri) ?? (await readFile(file, 'utf8'));
    textChanges.push({
      kind: 'text',
      path: rel(workspace, file),
      expected,
      next: applyLspEdits(expected, edits, rel(workspace, file))
    });
    count(rel(workspace, file), edits.length);
  }
  const notebookChanges: Change[] = [...cellEdits].map(([file, cells]) => ({
    kind: 'cells',
    path: rel(workspace, file),
    cells: [...cells.values()].map(({ target, edits }) => ({
      cell: target.cell,
      expected: target.source,
      next: applyToSource(target, edits, rel(workspace, file))
    }))
  }));
  return { changes: [...textChanges, ...notebookChanges], counts };
}

/** The cells a URI's edits land in, or undefined when the URI is a plain file. */
async function cellTargets(
  uri: string,
  edits: readonly TextEdit[],
  docs: DocumentSync
): Promise<Array<{ target: CellTarget; edits: TextEdit[] }> | undefined> {
  const view = docs.viewOf(uri);
  if (view) {
    const file = fileURLToPath(view.uri);
    const byCell = new Map<number, { target: CellTarget; edits: TextEdit[] }>();
    for (const e of edits) {
      const start = view.fromServer(uri, e.range.start.line, e.range.start.character);
      const end = view.fromServer(uri, e.range.end.line, e.range.end.character);
      if (!start || !end || start.index !== end.index)
        throw new ToolInputError(
          `The server's edit in ${path.basename(file)} spans more than one cell; nothing was changed.`
        );
      const cell = view.source[start.index]!;
      const lineOffset = e.range.start.line - (start.line - 1);
      const entry = byCell.get(start.index) ?? {
        target: {
          file,
          cell: cell.id,
          index: start.index,
          source: cell.source,
          served: neutraliseMagics(cell.source).code,
          lineOffset
        },
        edits: []
      };
      entry.edits.push(e);
      byCell.set(start.index, entry);
    }
    return [...byCell.values()];
  }
  const indexed = await docs.indexedCell(uri);
  if (indexed)
    return [
      {
        target: {
          file: indexed.file,
          cell: indexed.id,
          index: indexed.index,
          source: indexed.source,
          served: neutraliseMagics(indexed.source).code,
          lineOffset: 0
        },
        edits: [...edits]
      }
    ];
  if (/\.ipynb(#|$)/i.test(uri))
    throw new ToolInputError(
      `The server's edit names ${uri}, a notebook cell Cellmate cannot place; nothing was changed.`
    );
  return undefined;
}

/**
 * Applies edits (in server coordinates) to a cell's source as written. Each edited range must
 * read the same in the source and in what the server saw (a magic line differs): else the
 * edit would corrupt the line, and the call fails.
 */
function applyToSource(target: CellTarget, edits: readonly TextEdit[], file: string): string {
  const local = edits.map((e) => ({
    ...e,
    range: {
      start: { line: e.range.start.line - target.lineOffset, character: e.range.start.character },
      end: { line: e.range.end.line - target.lineOffset, character: e.range.end.character }
    }
  }));
  for (const e of local) {
    const a = target.source.slice(offsetAt(target.source, e.range.start), offsetAt(target.source, e.range.end));
    const b = target.served.slice(offsetAt(target.served, e.range.start), offsetAt(target.served, e.range.end));
    if (a !== b)
      throw new ToolInputError(
        `${file} cell ${target.index + 1} (id ${target.cell}) line ${e.range.start.line + 1}: the edit lands on IPython syntax (a magic); nothing was changed. Edit that line yourself.`
      );
  }
  return applyLspEdits(target.source, local, `${file} cell ${target.index + 1}`);
}

function rel(workspace: string, file: string): string {
  return path.relative(workspace, file);
}
