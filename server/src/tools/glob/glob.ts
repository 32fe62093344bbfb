import { z } from 'zod';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool, pathAllowed } from '../../gate/define-tool.js';
import { ToolInputError } from '../../base/tool-errors.js';
import { emptyOutcome, withheldNote } from '../../gate/call-subjects.js';
import { page } from '../../workspace/output-shaping.js';
import { globToRegExp, walkFiles } from '../../workspace/walk.js';
import { resolveWorkspacePath } from '../../workspace/workspace-path.js';

/** Character budget of one page of paths. */
const MAX_GLOB_OUTPUT_CHARS = 50_000;

const positive = (what: string) =>
  z
    .number({ error: `must be ${what}` })
    .int({ error: `must be ${what}` })
    .min(1, { error: `must be ${what}` });

export const globParameters = z.strictObject({
  pattern: z
    .string({ error: 'must be a glob string such as "**/*.py"' })
    .min(1, { error: 'must not be empty' })
    .describe('Glob over file paths, e.g. "*.ipynb" (any folder) or "src/**/*.ts".'),
  path: z
    .string({ error: 'must be a folder path relative to the workspace' })
    .optional()
    .describe('Folder to search in, relative to the workspace. Default: the workspace root.'),
  offset: positive('a positive integer (1-based index of the first path)')
    .optional()
    .describe('1-based index of the first path to return. Default 1.'),
  limit: positive('a positive integer')
    .max(2000, { error: 'must be at most 2000' })
    .optional()
    .describe('Maximum paths to return. Default 200.')
});

/** `glob`: file names only (never contents). */
export const globTool = defineTool({
  name: 'glob',
  tier: 'read',
  description: TOOL_DESCRIPTIONS.glob,
  parameters: globParameters,
  examples: [
    { args: { pattern: '*.ipynb' }, comment: 'every notebook in the workspace' },
    { args: { pattern: 'src/**/test_*.py', path: '.' }, comment: 'test files under src/' }
  ],
  timeoutMs: 60_000,
  outputShaping: 'paged',
  paths: (args) => [args.path ?? '.'],
  async execute(args, ctx) {
    const root = await resolveWorkspacePath(ctx.workspace, args.path ?? '.');
    if (!root.exists)
      throw new ToolInputError(`Folder not found: "${args.path}". Paths are relative to the workspace root.`);
    const re = globToRegExp(args.pattern);
    const matches: string[] = [];
    const prefix = root.relative === '.' ? '' : `${root.relative}/`;
    let withheld = 0;
    for await (const rel of walkFiles(root.absolute, root.absolute, ctx.signal)) {
      if (!re.test(rel)) continue;
      // HARN-6: names of files the policy denies this tool are withheld (counted).
      if (pathAllowed(ctx, `${prefix}${rel}`)) matches.push(rel);
      else withheld++;
    }
    matches.sort();
    const held = withheldNote(withheld);
    const where = root.relative === '.' ? 'the workspace' : root.relative;
    if (matches.length === 0)
      return {
        title: `${args.pattern}: no files`,
        output: `No files match ${JSON.stringify(args.pattern)} in ${where}. (glob matches names only; use grep to search contents.)${
          held
            ? `
${held}`
            : ''
        }`,
        metadata: { total: 0, withheld },
        ...emptyOutcome(withheld)
      };
    const offset = args.offset ?? 1;
    const limit = args.limit ?? 200;
    const p = page({
      entries: matches.slice(offset - 1, offset - 1 + limit).map((m) => `${prefix}${m}`),
      offset,
      limit,
      total: matches.length,
      maxChars: MAX_GLOB_OUTPUT_CHARS,
      noun: { one: 'file', many: 'files' },
      tool: 'glob',
      countWhenWhole: true
    });
    return {
      title: `${args.pattern}: ${matches.length} files`,
      output: held
        ? `${p.text}
${held}`
        : p.text,
      metadata: { total: matches.length, withheld }
    };
  }
});
