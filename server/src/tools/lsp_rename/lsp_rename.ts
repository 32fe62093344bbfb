/**
 * `lsp_rename` (SPEC RENAME-1), `write` tier: renames a symbol everywhere the language server
 * knows it — `.py`/`.ts` files and notebook cells — through the one all-or-nothing edit
 * (`server/src/edits/`): every file and cell is checked against the text the server computed
 * its edit from before anything is written; one mismatch changes nothing and names the file.
 */
import type { WorkspaceEdit } from 'vscode-languageserver-protocol';
import { z } from 'zod';
import { applyServerEdit, syncStartFile } from '../../lsp/apply-server-edit.js';
import { waitForDocument } from '../../lsp/diagnostics.js';
import type { DocumentSync } from '../../lsp/documents.js';
import { serverPosition } from '../../lsp/operations.js';
import type { Change } from '../../edits/index.js';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool } from '../../gate/define-tool.js';
import { ToolInputError } from '../../base/tool-errors.js';
import type { NotebookPort } from '../../notebooks/pane-hub.js';

export const lspRenameParameters = z.strictObject({
  file: z.string().min(1).describe('File the symbol is on, relative to the workspace (.py, .ts, .ipynb…).'),
  line: z.number().int().min(1).describe('1-based line the symbol is on (in the cell, for notebooks).'),
  symbol: z
    .string()
    .min(1)
    .describe('The name on that line, e.g. "load_data"; "load_data#2" = its 2nd occurrence on the line.'),
  cell: z.string().min(1).optional().describe('Notebooks: the cell id (from notebook_read) or "#N".'),
  new_name: z.string().min(1).regex(/^\S+$/, { error: 'must be one identifier (no spaces)' }).describe('The new name.')
});

/** Options of {@link createLspRenameTool}. */
export interface LspRenameOptions {
  /** Open notebooks are changed through their pane (one undo step). */
  port?: NotebookPort;
  /** Fault injection for tests: runs between the server's answer and the edit. */
  beforeApply?(changes: readonly Change[]): Promise<void>;
}

/** Builds `lsp_rename` around the document sync of the `lsp` tool. */
export function createLspRenameTool(docs: DocumentSync, options: LspRenameOptions = {}) {
  return defineTool({
    name: 'lsp_rename',
    tier: 'write',
    relaysServerText: true,
    description: TOOL_DESCRIPTIONS.lsp_rename,
    parameters: lspRenameParameters,
    examples: [
      {
        args: { file: 'src/util.py', line: 4, symbol: 'load_data', new_name: 'read_rows' },
        comment: 'rename a function in every file and notebook that uses it'
      }
    ],
    timeoutMs: 120_000,
    actionClasses: ['write-file'],
    paths: (a) => [a.file],
    async execute(args, ctx) {
      const { resolved, doc } = await syncStartFile(docs, args.file, ctx);
      if (doc.changed) await waitForDocument(doc, ctx.signal, undefined, 0);
      const at = serverPosition(doc, {
        line: args.line,
        symbol: args.symbol,
        ...(args.cell ? { cell: args.cell } : {})
      });
      const client = doc.served.client;
      const edit = await client.request<WorkspaceEdit | null>(
        'textDocument/rename',
        { textDocument: { uri: at.uri }, position: at.position, newName: args.new_name },
        ctx.signal
      );
      if (!edit)
        throw new ToolInputError(
          `${doc.served.entry.name} cannot rename "${args.symbol}" at ${resolved.relative} line ${args.line} (not a renameable symbol there).`
        );
      const { applied, total, lines, display } = await applyServerEdit(edit, client, docs, ctx, {
        tool: 'lsp_rename',
        action: 'rename',
        subject: 'The rename',
        nothingMessage: `${doc.served.entry.name} found nothing to rename for "${args.symbol}".`,
        ...(options.port ? { port: options.port } : {}),
        ...(options.beforeApply ? { beforeApply: options.beforeApply } : {})
      });
      const old = args.symbol.replace(/#\d+$/, '');
      return {
        title: `lsp_rename ${old} → ${args.new_name} (${applied.length} files)`,
        output: [
          `Renamed ${old} → ${args.new_name}: ${total} edit${total === 1 ? '' : 's'} in ${applied.length} file${applied.length === 1 ? '' : 's'}.`,
          ...lines
        ].join('\n'),
        metadata: { changedFiles: applied.map((f) => f.path) },
        display
      };
    }
  });
}
