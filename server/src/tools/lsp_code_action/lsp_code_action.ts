/**
 * `lsp_code_action` (SPEC LSP-4), `write` tier: applies one of the code actions
 * `lsp code_actions` lists — a quick fix such as a missing import — through the one
 * all-or-nothing edit (`server/src/edits/`), like `lsp_rename`: every file and cell the
 * action changes is checked against the text the server computed it from before anything
 * is written. The actions are asked for again at the same position, so the choice is the
 * server's current list; `title` guards against the list having changed since it was read.
 */
import type { CodeAction, Command, WorkspaceEdit } from 'vscode-languageserver-protocol';
import { z } from 'zod';
import { applyServerEdit, syncStartFile } from '../../lsp/apply-server-edit.js';
import type { DocumentSync } from '../../lsp/documents.js';
import { describeCodeAction, requestCodeActions } from '../../lsp/operations.js';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool } from '../../gate/define-tool.js';
import { ToolInputError } from '../../base/tool-errors.js';
import type { NotebookPort } from '../../notebooks/pane-hub.js';

export const lspCodeActionParameters = z.strictObject({
  file: z.string().min(1).describe('File the action is for, relative to the workspace (as given to lsp code_actions).'),
  line: z.number().int().min(1).describe('1-based line (in the cell, for notebooks), as given to lsp code_actions.'),
  symbol: z
    .string()
    .min(1)
    .optional()
    .describe('The symbol given to lsp code_actions, if any ("name#2" = 2nd occurrence).'),
  cell: z.string().min(1).optional().describe('Notebooks: the cell id or "#N", as given to lsp code_actions.'),
  choice: z.number().int().min(1).describe('The number of the action in the lsp code_actions list (1 = first).'),
  title: z
    .string()
    .min(1)
    .optional()
    .describe("The action's title as listed; when given, it must still match (nothing is applied otherwise).")
});

/** Options of {@link createLspCodeActionTool}. */
export interface LspCodeActionOptions {
  /** Open notebooks are changed through their pane (one undo step). */
  port?: NotebookPort;
}

/** Builds `lsp_code_action` around the document sync of the `lsp` tool. */
export function createLspCodeActionTool(docs: DocumentSync, options: LspCodeActionOptions = {}) {
  return defineTool({
    name: 'lsp_code_action',
    tier: 'write',
    relaysServerText: true,
    description: TOOL_DESCRIPTIONS.lsp_code_action,
    parameters: lspCodeActionParameters,
    examples: [
      {
        args: { file: 'src/report.py', line: 3, symbol: 'dedent', choice: 1, title: 'from textwrap import dedent' },
        comment: 'add the import lsp code_actions offered as action 1'
      }
    ],
    timeoutMs: 120_000,
    actionClasses: ['write-file'],
    paths: (a) => [a.file],
    async execute(args, ctx) {
      const { resolved, doc } = await syncStartFile(docs, args.file, ctx);
      const where = {
        line: args.line,
        ...(args.symbol ? { symbol: args.symbol } : {}),
        ...(args.cell ? { cell: args.cell } : {})
      };
      const { actions } = await requestCodeActions(doc, where, ctx.signal);
      const listing = (): string =>
        actions.length
          ? `The server offers now:\n${actions.map(describeCodeAction).join('\n')}`
          : 'The server offers no code actions there now.';
      const picked = actions[args.choice - 1];
      if (!picked)
        throw new ToolInputError(
          `There is no action ${args.choice} at ${resolved.relative} line ${args.line}. ${listing()}\nNothing was changed.`
        );
      if (args.title !== undefined && picked.title !== args.title) {
        throw new ToolInputError(
          `Action ${args.choice} is now "${picked.title}", not "${args.title}". ${listing()}\nNothing was changed.`
        );
      }
      const client = doc.served.client;
      const edit = await editOf(picked, (a) => client.request<CodeAction>('codeAction/resolve', a, ctx.signal));
      if (!edit) {
        const command =
          'command' in picked && picked.command
            ? typeof picked.command === 'string'
              ? picked.command
              : picked.command.command
            : undefined;
        throw new ToolInputError(
          `"${picked.title}" carries no edit${command ? ` (it runs the server command ${command})` : ''}; Cellmate applies only actions that change text. Nothing was changed.`
        );
      }
      const { applied, total, lines, display } = await applyServerEdit(edit, client, docs, ctx, {
        tool: 'lsp_code_action',
        action: 'code_action',
        subject: `"${picked.title}"`,
        nothingMessage: `"${picked.title}" changes nothing. Nothing was changed.`,
        ...(options.port ? { port: options.port } : {})
      });
      return {
        title: `lsp_code_action ${picked.title} (${applied.length} file${applied.length === 1 ? '' : 's'})`,
        output: [
          `Applied "${picked.title}": ${total} edit${total === 1 ? '' : 's'} in ${applied.length} file${applied.length === 1 ? '' : 's'}.`,
          ...lines
        ].join('\n'),
        metadata: { changedFiles: applied.map((f) => f.path) },
        display
      };
    }
  });
}

/** The action's edit, resolved by the server when it sent the action without one. */
async function editOf(
  action: CodeAction | Command,
  resolve: (a: CodeAction) => Promise<CodeAction>
): Promise<WorkspaceEdit | undefined> {
  if (!('title' in action) || typeof (action as Command).command === 'string') return undefined; // a bare Command
  const ca = action as CodeAction;
  if (ca.edit) return ca.edit;
  try {
    return (await resolve(ca)).edit ?? undefined;
  } catch {
    return undefined; // the server does not resolve actions
  }
}
