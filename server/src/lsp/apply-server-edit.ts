/**
 * What `lsp_rename` and `lsp_code_action` share: syncing the file they start from, and
 * applying a server's WorkspaceEdit through the one all-or-nothing edit
 * (`server/src/edits/`) after the policy has seen every file it would change.
 */
import path from 'node:path';
import type { LspDisplay } from '@cellmate/protocol';
import type { WorkspaceEdit } from 'vscode-languageserver-protocol';
import { applyChanges, type AppliedFile, type Change } from '../edits/index.js';
import { pathAllowed, type ToolContext } from '../gate/define-tool.js';
import { PathRefusedError, ToolInputError } from '../base/tool-errors.js';
import type { NotebookPort } from '../notebooks/pane-hub.js';
import { resolveWorkspacePath, type ResolvedWorkspacePath } from '../workspace/workspace-path.js';
import type { DocumentSync, SyncedDocument } from './documents.js';
import type { LspClient } from './lsp-client.js';
import { LspUnavailableError } from './lsp-service.js';
import { editsByUri, toChanges } from './workspace-edit.js';

/** The file a write-tier lsp tool starts from, synced into its server. */
export async function syncStartFile(
  docs: DocumentSync,
  file: string,
  ctx: Pick<ToolContext, 'workspace' | 'signal'>
): Promise<{ resolved: ResolvedWorkspacePath; doc: SyncedDocument }> {
  const resolved = await resolveWorkspacePath(ctx.workspace, file);
  if (!resolved.exists) throw new ToolInputError(`File not found: "${file}".`);
  try {
    return { resolved, doc: await docs.sync(resolved.relative, resolved.absolute, ctx.signal) };
  } catch (error) {
    if (error instanceof LspUnavailableError)
      throw new ToolInputError(`${error.message} (lsp status shows what each server needs)`);
    throw error;
  }
}

/** How {@link applyServerEdit} words its refusals and what it runs before writing. */
export interface ServerEditOptions {
  tool: string;
  /** The `lsp` card's action name. */
  action: string;
  /** Who would change the files, in the policy refusal: `The rename`, `"Add import"`. */
  subject: string;
  /** The error when the edit changes nothing. */
  nothingMessage: string;
  port?: NotebookPort;
  /** Fault injection for tests: runs between the server's answer and the edit. */
  beforeApply?(changes: readonly Change[]): Promise<void>;
}

/** The files written, per-file edit counts, the result's file lines and its card. */
export interface AppliedServerEdit {
  applied: AppliedFile[];
  total: number;
  lines: string[];
  display: LspDisplay;
}

/** Applies `edit` all or nothing; every file it touches must pass the policy first. */
export async function applyServerEdit(
  edit: WorkspaceEdit,
  client: LspClient,
  docs: DocumentSync,
  ctx: ToolContext,
  options: ServerEditOptions
): Promise<AppliedServerEdit> {
  await judgeEditTargets(edit, docs, ctx, options);
  await judgeEditText(edit, docs, ctx, options);
  const { changes, counts } = await toChanges(edit, client, docs, ctx.workspace);
  if (changes.length === 0) throw new ToolInputError(options.nothingMessage);
  await options.beforeApply?.(changes);
  const applied = await applyChanges(changes, {
    workspace: ctx.workspace,
    signal: ctx.signal,
    ...(options.port ? { port: options.port } : {})
  });
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const lines = applied.map(
    (f) =>
      `${f.how === 'open-notebook' ? 'M (open in JupyterLab)' : 'M'} ${f.path} (${counts.get(f.path) ?? 0} edit${counts.get(f.path) === 1 ? '' : 's'}${f.cells?.length ? `; cells ${f.cells.join(', ')}` : ''})`
  );
  const display: LspDisplay = {
    kind: 'lsp',
    action: options.action,
    locations: applied.map((f) => ({
      path: f.path,
      line: 1,
      text: `${counts.get(f.path) ?? 0} edits`,
      note: f.cells?.length ? `cells ${f.cells.join(', ')}` : 'file'
    }))
  };
  return { applied, total, lines, display };
}

/**
 * Every file a server's edit names is judged before anything is read or written, as a
 * tool's own path argument is: it must stay inside the workspace once symlinks are
 * resolved, and its canonical AND its lexical workspace-relative paths must be allowed —
 * a rename through `alias.py -> secrets.py` writes `secrets.py`, so a deny rule on
 * `secrets.py` refuses it.
 */
async function judgeEditTargets(
  edit: WorkspaceEdit,
  docs: DocumentSync,
  ctx: ToolContext,
  options: ServerEditOptions
): Promise<void> {
  const refused: string[] = [];
  for (const uri of editsByUri(edit).keys()) {
    const file = docs.fileOf(uri);
    if (file === undefined) {
      refused.push(uri);
      continue;
    }
    try {
      const r = await resolveWorkspacePath(ctx.workspace, file);
      const denied = [...new Set([r.lexicalRelative, r.relative])].filter((p) => !pathAllowed(ctx, p));
      if (denied.length) refused.push(denied.join(' → '));
    } catch (error) {
      if (!(error instanceof PathRefusedError)) throw error;
      refused.push(`${file} (outside the workspace)`);
    }
  }
  if (refused.length)
    throw new ToolInputError(
      `${options.subject} would change ${refused.join(', ')}, which the policy does not let ${options.tool} write. Nothing was changed.`
    );
}

/**
 * A server reads files the actor may not (a deny-ruled module, an `extraPaths` folder): text
 * it inserts that carries one of their values would put it in a file the actor can read.
 */
async function judgeEditText(
  edit: WorkspaceEdit,
  docs: DocumentSync,
  ctx: ToolContext,
  options: ServerEditOptions
): Promise<void> {
  const values = await ctx.withheldValues?.();
  if (!values) return;
  const carrying: string[] = [];
  for (const [uri, edits] of editsByUri(edit)) {
    if (edits.some((e) => values.hide(e.newText) !== e.newText))
      carrying.push(path.relative(ctx.workspace, docs.fileOf(uri) ?? uri));
  }
  if (carrying.length)
    throw new ToolInputError(
      `${options.subject} would write a value of a file withheld from ${options.tool} (by the policy, or outside the workspace) into ${carrying.join(', ')}. Nothing was changed.`
    );
}
