import { open, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool, pathAllowed } from '../../gate/define-tool.js';
import { ToolInputError } from '../../base/tool-errors.js';
import { cut, page } from '../../workspace/output-shaping.js';
import { looksBinary } from '../../workspace/binary.js';
import { emptyOutcome, withheldNote } from '../../gate/call-subjects.js';
import { splitLines } from '../../base/lines.js';
import { LineMatcher } from '../regex/line-matcher.js';
import { globToRegExp, walkFiles } from '../../workspace/walk.js';
import { resolveWorkspacePath } from '../../workspace/workspace-path.js';

const MAX_FILE_BYTES = 5 * 1024 * 1024;
const SNIPPET_CHARS = 200;
/** Character budget of one page of matches (100 snippets of 200 characters fit). */
const MAX_GREP_OUTPUT_CHARS = 50_000;
/** Matches collected before counting only (keeps memory bounded on huge result sets). */
const KEEP_MATCHES = 20_000;

const positive = (what: string) =>
  z
    .number({ error: `must be ${what}` })
    .int({ error: `must be ${what}` })
    .min(1, { error: `must be ${what}` });

export const grepParameters = z.strictObject({
  pattern: z
    .string({ error: 'must be a regular expression string' })
    .min(1, { error: 'must not be empty' })
    .describe('JavaScript regular expression matched against each line, e.g. "def\\\\s+load".'),
  path: z
    .string({ error: 'must be a path relative to the workspace' })
    .optional()
    .describe('Folder or file to search, relative to the workspace. Default: the workspace root.'),
  glob: z
    .string({ error: 'must be a glob string such as "*.py"' })
    .optional()
    .describe('Only search files matching this glob, e.g. "*.py" or "src/**/*.ts".'),
  case_insensitive: z.boolean({ error: 'must be true or false' }).optional().describe('Ignore case. Default false.'),
  offset: positive('a positive integer (1-based index of the first match)')
    .optional()
    .describe('1-based index of the first match to return. Default 1.'),
  limit: positive('a positive integer')
    .max(1000, { error: 'must be at most 1000' })
    .optional()
    .describe('Maximum matches to return. Default 100.')
});

/** `grep`: regex over contents, structured candidates with total and paging (HARN-3). */
export const grepTool = defineTool({
  name: 'grep',
  tier: 'read',
  description: TOOL_DESCRIPTIONS.grep,
  parameters: grepParameters,
  examples: [
    { args: { pattern: 'def load_data', glob: '*.py' }, comment: 'find a Python definition' },
    { args: { pattern: 'TODO|FIXME', path: 'src', offset: 101 }, comment: 'second page of matches under src/' }
  ],
  timeoutMs: 60_000,
  outputShaping: 'paged',
  paths: (args) => [args.path ?? '.'],
  async execute(args, ctx) {
    // The pattern runs in a worker with a hard timeout: a catastrophic one cannot freeze the companion.
    let matcher: LineMatcher;
    try {
      matcher = new LineMatcher(args.pattern, args.case_insensitive ? 'iu' : 'u', { signal: ctx.signal });
    } catch (error) {
      throw new ToolInputError(
        `Invalid regular expression ${JSON.stringify(args.pattern)}: ${(error as Error).message}. Escape special characters (\\. \\( \\[) to match them literally.`
      );
    }
    const root = await resolveWorkspacePath(ctx.workspace, args.path ?? '.');
    if (!root.exists) throw new ToolInputError(`Not found: "${args.path}". Paths are relative to the workspace root.`);
    const filter = args.glob ? globToRegExp(args.glob) : undefined;
    const isFile = (await stat(root.absolute)).isFile();
    const base = isFile ? path.dirname(root.absolute) : root.absolute;
    const baseRel = isFile ? path.posix.dirname(root.relative) : root.relative;
    const prefix = baseRel === '.' ? '' : `${baseRel}/`;
    const kept: string[] = [];
    let total = 0;
    let withheld = 0;
    const files = new Set<string>();
    try {
      for await (const rel of walkFiles(root.absolute, base, ctx.signal)) {
        if (filter && !filter.test(rel)) continue;
        // HARN-6: files the policy denies this tool are never opened (counted, not named).
        if (!pathAllowed(ctx, `${prefix}${rel}`)) {
          withheld++;
          continue;
        }
        const full = path.join(base, rel);
        const info = await stat(full).catch(() => undefined);
        if (!info || info.size > MAX_FILE_BYTES || (await isBinary(full))) continue;
        const text = await readFile(full, 'utf8').catch(() => undefined);
        if (text === undefined) continue;
        const hits = await matcher.matchLines(text, `${prefix}${rel}`);
        if (hits.length === 0) continue;
        const lines = splitLines(text, { loneCR: 'ends-line' });
        for (const lineNo of hits) {
          total++;
          files.add(rel);
          if (kept.length < KEEP_MATCHES) {
            const snippet = cut(lines[lineNo - 1] ?? '', SNIPPET_CHARS, 'read at this line for the rest');
            kept.push(`${prefix}${rel}:${lineNo}: ${snippet}`);
          }
        }
      }
    } finally {
      matcher.dispose();
    }
    const held = withheldNote(withheld);
    if (total === 0) {
      return {
        title: `${args.pattern}: no matches`,
        output: `No matches for /${args.pattern}/${args.case_insensitive ? 'i' : ''}${args.glob ? ` in files matching ${args.glob}` : ''} under ${root.relative === '.' ? 'the workspace' : root.relative}.${held ? `\n${held}` : ''}`,
        metadata: { total: 0, withheld },
        ...emptyOutcome(withheld)
      };
    }
    const offset = args.offset ?? 1;
    const limit = args.limit ?? 100;
    const inFiles = `in ${files.size} file${files.size === 1 ? '' : 's'}`;
    const more =
      offset - 1 + limit > KEEP_MATCHES && total > KEEP_MATCHES
        ? ' — past 20,000 matches only the count is kept: narrow the pattern, path or glob'
        : '';
    if (offset > Math.min(total, KEEP_MATCHES) && offset <= total) {
      throw new ToolInputError(
        `offset ${offset} is past the first 20,000 matches (of ${total}), which is all grep keeps. Narrow the pattern, path or glob.`
      );
    }
    const p = page({
      entries: kept.slice(offset - 1, offset - 1 + limit),
      offset,
      limit,
      total,
      maxChars: MAX_GREP_OUTPUT_CHARS,
      noun: { one: 'match', many: 'matches' },
      tool: 'grep',
      scope: `${inFiles}${more}`,
      countWhenWhole: true
    });
    return {
      title: `${args.pattern}: ${total} matches`,
      output: held
        ? `${p.text}
${held}`
        : p.text,
      metadata: { total, files: files.size, withheld }
    };
  }
});

async function isBinary(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return looksBinary(buffer.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}
