import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool } from '../../gate/define-tool.js';
import { unifiedDiff } from '../../edits/unified-diff.js';
import { ToolInputError } from '../../base/tool-errors.js';
import { countLines, resolveForWrite, writeFileAtomic } from '../../workspace/file-io.js';

export const editParameters = z.strictObject({
  path: z
    .string({ error: 'must be a string path relative to the workspace' })
    .min(1, { error: 'must not be empty' })
    .describe('File path relative to the workspace root.'),
  old_string: z
    .string({ error: 'must be a string (the exact text to replace)' })
    .min(1, { error: 'must not be empty' })
    .describe('Exact text to replace, including whitespace and quote characters.'),
  new_string: z
    .string({ error: 'must be a string (the replacement text)' })
    .describe('Replacement text (empty deletes old_string).'),
  replace_all: z
    .boolean({ error: 'must be true or false' })
    .optional()
    .describe('Replace every occurrence instead of exactly one. Default false.')
});

/** 1-based line numbers where each occurrence of `needle` starts. */
export function occurrenceLines(text: string, needle: string): number[] {
  const lines: number[] = [];
  let from = 0;
  for (;;) {
    const at = text.indexOf(needle, from);
    if (at < 0) return lines;
    lines.push(text.slice(0, at).split('\n').length);
    from = at + needle.length;
  }
}

/** Loose form used only to explain a miss (never to apply an edit, HARN-2). */
function loosen(text: string): string {
  return text
    .replace(/[“”„‟″]/g, '"')
    .replace(/[‘’‚‛′]/g, "'")
    .replace(/\r\n/g, '\n')
    .replace(/[ \t]+/g, ' ');
}

function explainMiss(content: string, old: string, shown: string): string {
  const base = `old_string was not found in ${shown}.`;
  const looseOld = loosen(old);
  const looseContent = loosen(content);
  if (looseOld !== old || looseContent !== content) {
    const near = occurrenceLines(looseContent, looseOld);
    if (near.length > 0) {
      const quotes = /[“”‘’„‟″‚‛′]/.test(old) || /[“”‘’„‟″‚‛′]/.test(content);
      const what = quotes
        ? 'quote characters (curly vs straight) or whitespace'
        : 'whitespace (spaces, tabs or line endings)';
      return `${base} A near match differs only in ${what} near line ${near[0]}. edit does not normalise: read that line and copy old_string exactly as the file has it.`;
    }
  }
  return `${base} Read the file and copy old_string exactly (no line-number prefixes), including indentation.`;
}

/** `edit`: one exact string replacement (no normalisation). */
export const editTool = defineTool({
  name: 'edit',
  tier: 'write',
  description: TOOL_DESCRIPTIONS.edit,
  parameters: editParameters,
  examples: [
    {
      args: {
        path: 'src/app.py',
        old_string: 'def load(path):\n    return open(path).read()',
        new_string: 'def load(path):\n    with open(path) as f:\n        return f.read()'
      },
      comment: 'change one function body'
    },
    {
      args: { path: 'notes.md', old_string: 'TODO', new_string: 'DONE', replace_all: true },
      comment: 'replace every occurrence'
    }
  ],
  timeoutMs: 30_000,
  actionClasses: ['write-file'],
  paths: (args) => [args.path],
  async preview(args, ctx) {
    const resolved = await resolveForWrite(ctx.workspace, args.path);
    if (!resolved.exists) return undefined;
    const content = await readFile(resolved.absolute, 'utf8');
    if (!content.includes(args.old_string)) return undefined;
    return {
      summary: `edit · ${resolved.relative}`,
      files: [{ path: resolved.relative, diff: unifiedDiff(content, replaced(content, args)) }]
    };
  },
  async execute(args, ctx) {
    const resolved = await resolveForWrite(ctx.workspace, args.path);
    if (!resolved.exists)
      throw new ToolInputError(`File not found: "${args.path}". edit changes existing files; use write to create one.`);
    if (args.old_string === args.new_string)
      throw new ToolInputError('old_string and new_string are identical; there is nothing to change.');
    const content = await readFile(resolved.absolute, 'utf8');
    const lines = occurrenceLines(content, args.old_string);
    if (lines.length === 0) throw new ToolInputError(explainMiss(content, args.old_string, resolved.relative));
    if (lines.length > 1 && !args.replace_all) {
      throw new ToolInputError(
        `old_string occurs ${lines.length} times in ${resolved.relative} (lines ${lines.slice(0, 20).join(', ')}${lines.length > 20 ? ', …' : ''}). Include more surrounding text so it occurs exactly once, or set replace_all to true.`
      );
    }
    const updated = replaced(content, args);
    await writeFileAtomic(resolved.absolute, updated);
    const where =
      lines.length === 1
        ? `1 occurrence at line ${lines[0]}`
        : `${lines.length} occurrences (lines ${lines.slice(0, 10).join(', ')}${lines.length > 10 ? ', …' : ''})`;
    return {
      title: `${resolved.relative} (edited)`,
      output: `Edited ${resolved.relative}: replaced ${where} (${countLines(args.old_string)} lines → ${countLines(args.new_string)} lines).`,
      metadata: { changedFiles: [resolved.relative], occurrences: lines.length }
    };
  }
});

/** The file's text after the edit (every occurrence with `replace_all`, else the first). */
function replaced(content: string, args: { old_string: string; new_string: string; replace_all?: boolean }): string {
  return args.replace_all
    ? content.split(args.old_string).join(args.new_string)
    : content.replace(args.old_string, () => args.new_string);
}
