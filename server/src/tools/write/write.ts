import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool } from '../../gate/define-tool.js';
import { countLines, resolveForWrite, writeFileAtomic } from '../../workspace/file-io.js';
import { unifiedDiff } from '../../edits/unified-diff.js';

export const writeParameters = z.strictObject({
  path: z
    .string({ error: 'must be a string path relative to the workspace' })
    .min(1, { error: 'must not be empty' })
    .describe('File path relative to the workspace root; parent folders are created.'),
  content: z
    .string({ error: 'must be a string (the complete file contents)' })
    .describe('The complete new contents, written exactly as given (UTF-8).')
});

/** `write`: create or replace a whole file (atomic). */
export const writeTool = defineTool({
  name: 'write',
  tier: 'write',
  description: TOOL_DESCRIPTIONS.write,
  parameters: writeParameters,
  examples: [
    { args: { path: 'analysis/summary.md', content: '# Summary\n\nRevenue grew 12%.\n' }, comment: 'create a new file' }
  ],
  timeoutMs: 30_000,
  actionClasses: ['write-file'],
  paths: (args) => [args.path],
  async preview(args, ctx) {
    const resolved = await resolveForWrite(ctx.workspace, args.path);
    const before = resolved.exists ? await readFile(resolved.absolute, 'utf8') : '';
    return {
      summary: `write · ${resolved.relative}${resolved.exists ? '' : ' (new file)'}`,
      files: [{ path: resolved.relative, diff: unifiedDiff(before, args.content) }]
    };
  },
  async execute(args, ctx) {
    const resolved = await resolveForWrite(ctx.workspace, args.path);
    const before = resolved.exists ? await readFile(resolved.absolute, 'utf8') : undefined;
    await writeFileAtomic(resolved.absolute, args.content);
    const lines = countLines(args.content);
    const bytes = Buffer.byteLength(args.content, 'utf8');
    const output =
      before === undefined
        ? `Created ${resolved.relative} (${lines} lines, ${bytes} bytes).`
        : `Replaced ${resolved.relative} (${lines} lines, ${bytes} bytes; was ${countLines(before)} lines).`;
    return {
      title: `${resolved.relative} (${before === undefined ? 'created' : 'replaced'})`,
      output,
      metadata: { changedFiles: [resolved.relative] }
    };
  }
});
