/**
 * What the servers see of the workspace's files: a file or notebook is synced into the
 * server of its nearest root (text documents: the file's text; notebooks: the open
 * document's live cells through the pane when one has it open, else the `.ipynb` on disk,
 * as an LSP 3.17 notebook document or a concatenated one), and server locations are turned
 * back into what the agent reads: `path:line` or `notebook.ipynb cell N (id) line M`, with
 * the source line.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseNotebook, sourceText, cellRef } from '../notebooks/ipynb.js';
import type { NotebookPort } from '../notebooks/pane-hub.js';
import { normalizeUri } from './lsp-client.js';
import type { LspService, Served } from './lsp-service.js';
import { buildNotebookView, type NotebookView, type ViewCell } from './notebook-view.js';
import { languageIdOf } from './server-table.js';

/** A file as synced into its server. */
export type SyncedDocument =
  ({ kind: 'text'; text: string } & SyncedCommon) | ({ kind: 'notebook'; view: NotebookView } & SyncedCommon);

interface SyncedCommon {
  served: Served;
  relative: string;
  absolute: string;
  uri: string;
  version: number;
  /** Whether this sync sent new text (else the server already had it). */
  changed: boolean;
  /** The client's publish sequence just before the sync: publishes after it answer it. */
  sequenceBefore: number;
  /** How long to wait for the server's diagnostics of this sync. */
  waitMs: number;
}

/** A server location as the agent reads it. */
export interface DescribedLocation {
  /** Workspace-relative path (or absolute, outside the workspace). */
  path: string;
  /** 1-based line (in the cell for notebooks). */
  line: number;
  /** 0-based character (tells two uses on one line apart; never shown). */
  character: number;
  cell?: { index: number; id: string };
  /** The source line, trimmed (magics as written). */
  text: string;
  /** `path:line` or `path cell N line M`. */
  label: string;
}

export class DocumentSync {
  /** The last view of each notebook synced (cell URIs → cells). */
  private readonly views = new Map<string, NotebookView>();
  /** Per notebook: how many different contents were synced (cell URIs carry it). */
  private readonly generations = new Map<string, number>();

  constructor(
    private readonly service: LspService,
    private readonly port?: NotebookPort
  ) {}

  /** Syncs a workspace file into its server (and saves it there); throws `LspUnavailableError`. */
  async sync(relative: string, absolute: string, signal?: AbortSignal): Promise<SyncedDocument> {
    const served = await this.service.serverFor(absolute);
    const sequenceBefore = served.client.lastSequence;
    const uri = pathToFileURL(absolute).href;
    if (absolute.endsWith('.ipynb')) {
      const cells = await this.notebookCells(relative, absolute, signal);
      const mode = served.entry.notebooks ?? 'concatenated';
      const key = normalizeUri(uri);
      const last = this.views.get(key);
      const same =
        last &&
        last.mode === mode &&
        last.source.length === cells.length &&
        last.source.every(
          (c, i) => c.id === cells[i]!.id && c.source === cells[i]!.source && c.cellType === cells[i]!.cellType
        );
      const generation = (this.generations.get(key) ?? 0) + (same ? 0 : 1);
      this.generations.set(key, generation);
      const view = same
        ? last
        : buildNotebookView(absolute, cells, mode, languageIdOf(served.entry, absolute), generation);
      this.views.set(key, view);
      const r =
        mode === 'native'
          ? await served.client.syncNotebook(uri, view.cells)
          : await served.client.sync(view.cells[0]!.uri, view.cells[0]!.languageId, view.cells[0]!.text, {
              save: true
            });
      return {
        kind: 'notebook',
        served,
        relative,
        absolute,
        uri,
        view,
        sequenceBefore,
        waitMs: this.service.diagnosticsWaitMs,
        ...r
      };
    }
    const text = await readFile(absolute, 'utf8');
    const r = await served.client.sync(uri, languageIdOf(served.entry, absolute), text, { save: true });
    return {
      kind: 'text',
      served,
      relative,
      absolute,
      uri,
      text,
      sequenceBefore,
      waitMs: this.service.diagnosticsWaitMs,
      ...r
    };
  }

  /** The cells of a notebook: the pane's open document when one has it, else the file. */
  async notebookCells(relative: string, absolute: string, signal?: AbortSignal): Promise<ViewCell[]> {
    const pane = this.port ? await this.port.find(relative, signal).catch(() => undefined) : undefined;
    if (pane) {
      const r = await pane.request('notebook/read', { path: relative }, signal);
      return r.cells.map((c) => ({ id: c.id, cellType: c.cell_type, source: c.source }));
    }
    const nb = parseNotebook(await readFile(absolute, 'utf8'));
    return nb.cells.map((c, i) => ({ id: cellRef(nb, i), cellType: c.cell_type, source: sourceText(c.source) }));
  }

  /** The notebook view that owns a server URI (a cell document or a concatenated one). */
  /**
   * The file on disk a server URI points into (the notebook for a cell's URI), or undefined
   * for a URI that names no file: what the location gate judges before anything is read.
   */
  fileOf(uri: string): string | undefined {
    const view = this.viewOf(uri);
    try {
      return fileURLToPath(view ? view.uri : uri);
    } catch {
      return undefined;
    }
  }

  viewOf(uri: string): NotebookView | undefined {
    for (const v of this.views.values()) if (v.owns(uri)) return v;
    return undefined;
  }

  /** A server location (URI + 0-based line/character) as the agent reads it. */
  async describe(uri: string, line: number, character: number): Promise<DescribedLocation> {
    const workspace = this.service.workspace;
    const view = this.viewOf(uri);
    if (view) {
      const at = view.fromServer(uri, line, character);
      const file = fileURLToPath(view.uri);
      const shown = relOrAbs(workspace, file);
      if (at) {
        const text = (view.source[at.index]?.source.split('\n')[at.line - 1] ?? '').trim();
        return {
          path: shown,
          line: at.line,
          character: at.character,
          cell: { index: at.index, id: at.id },
          text,
          label: `${shown} cell ${at.index + 1} (id ${at.id}) line ${at.line}`
        };
      }
      return { path: shown, line: line + 1, character, text: '', label: `${shown} (between cells)` };
    }
    const cell = await this.indexedCell(uri);
    if (cell) {
      const shown = relOrAbs(workspace, cell.file);
      const text = (cell.source.split('\n')[line] ?? '').trim();
      return {
        path: shown,
        line: line + 1,
        character,
        cell: { index: cell.index, id: cell.id },
        text,
        label: `${shown} cell ${cell.index + 1} (id ${cell.id}) line ${line + 1}`
      };
    }
    let file: string;
    try {
      file = fileURLToPath(uri);
    } catch {
      return { path: uri, line: line + 1, character, text: '', label: `${uri}:${line + 1}` };
    }
    const shown = relOrAbs(workspace, file);
    const text = (await this.lineOf(uri, file, line)) ?? '';
    return { path: shown, line: line + 1, character, text: text.trim(), label: `${shown}:${line + 1}` };
  }

  /**
   * A cell of a notebook the server read from disk itself (basedpyright indexes `.ipynb`
   * files of the root and names their cells `file:///x.ipynb#<n>`, n counting code cells
   * from 0): the cell's index among all cells, its id and source.
   */
  async indexedCell(uri: string): Promise<{ file: string; index: number; id: string; source: string } | undefined> {
    const m = /^(file:[^#]*\.ipynb)#(\d+)$/i.exec(uri);
    if (!m) return undefined;
    const file = fileURLToPath(m[1]!);
    const cells = await this.notebookCells(relOrAbs(this.service.workspace, file), file).catch(() => undefined);
    const code = (cells ?? []).map((c, index) => ({ ...c, index })).filter((c) => c.cellType === 'code');
    const hit = code[Number(m[2])];
    return hit ? { file, index: hit.index, id: hit.id, source: hit.source } : undefined;
  }

  private async lineOf(uri: string, file: string, line: number): Promise<string | undefined> {
    for (const client of await this.service.runningClients()) {
      const open = client.openText(uri);
      if (open !== undefined) return open.split('\n')[line];
    }
    return readFile(file, 'utf8').then(
      (t) => t.split('\n')[line],
      () => undefined
    );
  }
}

function relOrAbs(workspace: string, file: string): string {
  const r = path.relative(workspace, file);
  return r.startsWith('..') || path.isAbsolute(r) ? file : r;
}
