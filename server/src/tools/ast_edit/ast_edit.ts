import { z } from 'zod';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool, pathAllowed, type ToolDefinition } from '../../gate/define-tool.js';
import { ToolInputError } from '../../base/tool-errors.js';
import { cut } from '../../workspace/output-shaping.js';
import { emptyOutcome, withheldNote } from '../../gate/call-subjects.js';
import { languageField, pathField, patternField, rungNote, structuralTarget } from '../ast_grep/ast_grep.js';
import { planStructuralEdit, type RewriteOp } from '../../structural/stage.js';
import type { StagedEdits } from '../../structural/staged-edits.js';

const MAX_SITES_SHOWN = 40;

const rewriteField = z
  .string({ error: 'must be the replacement code (a string; may be empty)' })
  .describe('Replacement code; $NAME / $$$NAME are replaced by what the pattern captured, e.g. "$X.close()".');

export const astEditParameters = z.strictObject({
  pattern: patternField.optional(),
  rewrite: rewriteField.optional(),
  ops: z
    .array(z.strictObject({ pattern: patternField, rewrite: rewriteField }), {
      error: 'must be a list of {pattern, rewrite}'
    })
    .min(1, { error: 'must not be empty' })
    .max(20, { error: 'at most 20 ops' })
    .optional()
    .describe('Several {pattern, rewrite} applied together, instead of pattern + rewrite.'),
  path: pathField,
  language: languageField
});

/** The ops of an `ast_edit` call: `ops`, or `pattern` + `rewrite`, never both. */
function opsOf(args: z.output<typeof astEditParameters>): RewriteOp[] {
  if (args.ops && (args.pattern !== undefined || args.rewrite !== undefined))
    throw new ToolInputError('Give either ops, or pattern and rewrite, not both.');
  if (args.ops) return args.ops;
  if (args.pattern === undefined || args.rewrite === undefined)
    throw new ToolInputError('Give pattern and rewrite (or ops: [{pattern, rewrite}, …]).');
  return [{ pattern: args.pattern, rewrite: args.rewrite }];
}

/** `ast_edit` (stages) and `resolve` (accepts or discards) over one store of staged edits (SPEC EDIT-1/2). */
export function createStructuralEditTools(edits: StagedEdits): ToolDefinition[] {
  const astEdit = defineTool({
    name: 'ast_edit',
    tier: 'write',
    description: TOOL_DESCRIPTIONS.ast_edit,
    parameters: astEditParameters,
    examples: [
      {
        args: { pattern: 'dispose($X)', rewrite: '$X.close()', path: 'src' },
        comment: 'replace a helper call by a method call everywhere under src/'
      },
      {
        args: {
          ops: [
            { pattern: 'load($P)', rewrite: 'load($P, cache=True)' },
            { pattern: 'save($P)', rewrite: 'save($P, cache=True)' }
          ],
          language: 'python'
        },
        comment: 'two rewrites staged as one edit'
      }
    ],
    timeoutMs: 120_000,
    paths: (args) => [args.path ?? '.'],
    async execute(args, ctx) {
      const ops = opsOf(args);
      const target = await structuralTarget(args, ctx);
      const plan = await planStructuralEdit(ops, {
        workspace: ctx.workspace,
        path: target.relative,
        signal: ctx.signal,
        allowed: (rel) => pathAllowed(ctx, rel),
        ...(target.language ? { language: target.language } : {})
      });
      const withheld = Math.max(...plan.searches.map((s) => s.withheld));
      const notes = [
        withheldNote(withheld),
        plan.skippedMagic
          ? `${plan.skippedMagic} match${plan.skippedMagic === 1 ? '' : 'es'} not rewritten: they touch IPython magics.`
          : '',
        ...plan.brokenAfter.map((b) => `warning: after the rewrite ${b}`)
      ].filter(Boolean);
      const readAs = plan.searches.map((s, i) => `op ${i + 1} ${rungNote(s)}`).join('; ');
      if (plan.replacements === 0) {
        return {
          title: 'ast_edit: nothing to change',
          output: [`No replacements: no match changes (${readAs}). Nothing was staged.`, ...notes].join('\n'),
          metadata: { replacements: 0, withheld },
          ...emptyOutcome(withheld)
        };
      }
      const notebooks = plan.files.filter((f) => f.cells).length;
      const fileCount = `${plan.files.length} file${plan.files.length === 1 ? '' : 's'}${notebooks ? ` (${notebooks} notebook${notebooks === 1 ? '' : 's'})` : ''}`;
      const summary = `(proposed) ${plan.replacements} replacement${plan.replacements === 1 ? '' : 's'} in ${fileCount}`;
      const staged = edits.add({
        chatId: ctx.chatId,
        workspace: ctx.workspace,
        replacements: plan.replacements,
        files: plan.files,
        display: { kind: 'diff', summary, files: plan.diff }
      });
      const one = (s: string): string => cut(s.replace(/\s*\n\s*/g, ' '), 120, 'see the diff');
      const lines = plan.sites
        .slice(0, MAX_SITES_SHOWN)
        .map((s) => `${s.place}:${s.line}: ${one(s.before)} → ${one(s.after)}`);
      if (plan.sites.length > MAX_SITES_SHOWN) lines.push(`… and ${plan.sites.length - MAX_SITES_SHOWN} more sites`);
      const head = `${summary} — nothing written yet: call resolve with edit_id "${staged.id}" and action "accept" to write them all, or "discard". It expires in 30 minutes. (${readAs})`;
      return {
        title: `${summary}: ${staged.id}`,
        output: [head, ...lines, ...notes].join('\n'),
        metadata: { editId: staged.id, replacements: plan.replacements, files: plan.files.map((f) => f.path) },
        display: staged.display
      };
    }
  });

  const resolve = defineTool({
    name: 'resolve',
    tier: 'write',
    description: TOOL_DESCRIPTIONS.resolve,
    parameters: z.strictObject({
      edit_id: z
        .string({ error: 'must be the edit_id ast_edit returned' })
        .trim()
        .min(1, { error: 'must not be empty' })
        .describe('The edit_id ast_edit returned.'),
      action: z
        .enum(['accept', 'discard'], { error: 'must be "accept" or "discard"' })
        .describe('accept writes the staged edit (all or nothing); discard drops it.')
    }),
    examples: [{ args: { edit_id: 'edit_3f9a1c_1', action: 'accept' }, comment: 'write a staged rewrite' }],
    // The files it writes are the staged edit's, checked against their staging snapshot.
    paths: (args) => {
      try {
        return edits.get(args.edit_id).files.map((f) => f.path);
      } catch {
        return [];
      }
    },
    async execute(args, ctx) {
      if (edits.get(args.edit_id).chatId !== ctx.chatId)
        throw new ToolInputError(
          `Staged edit ${args.edit_id} belongs to another chat; resolve only edits this chat's ast_edit staged.`
        );
      const outcome = await edits.resolve(args.edit_id, args.action);
      return {
        title: `${args.action === 'accept' ? 'Applied' : 'Discarded'} ${args.edit_id}`,
        output: outcome.message,
        metadata: {
          files: outcome.files,
          state: outcome.state,
          ...(outcome.state === 'accepted' ? { changedFiles: outcome.files } : {})
        }
      };
    }
  });
  return [astEdit, resolve];
}
