import { open, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { TOOL_DESCRIPTIONS } from '../descriptions.generated.js';
import { defineTool } from '../define-tool.js';
import { ToolInputError } from '../errors.js';
import { looksBinary } from '../read/read-format.js';
import { LineMatcher, splitLines } from '../regex/line-matcher.js';
import { globToRegExp, walkFiles } from '../walk.js';
import { resolveWorkspacePath } from '../workspace-path.js';

const MAX_FILE_BYTES = 5 * 1024 * 1024;
const SNIPPET_CHARS = 200;
/** Matches collected before counting only (keeps memory bounded on huge result sets). */
const KEEP_MATCHES = 20_000;

const page = (what: string) => z.number({ error: `must be ${what}` }).int({ error: `must be ${what}` }).min(1, { error: `must be ${what}` });

export const grepParameters = z.strictObject({
  pattern: z.string({ error: 'must be a regular expression string' }).min(1, { error: 'must not be empty' })
    .describe('JavaScript regular expression matched against each line, e.g. "def\\\\s+load".'),
  path: z.string({ error: 'must be a path relative to the workspace' }).optional()
    .describe('Folder or file to search, relative to the workspace. Default: the workspace root.'),
  glob: z.string({ error: 'must be a glob string such as "*.py"' }).optional()
    .describe('Only search files matching this glob, e.g. "*.py" or "src/**/*.ts".'),
  case_insensitive: z.boolean({ error: 'must be true or false' }).optional().describe('Ignore case. Default false.'),
  offset: page('a positive integer (1-based index of the first match)').optional().describe('1-based index of the first match to return. Default 1.'),
  limit: page('a positive integer').max(1000, { error: 'must be at most 1000' }).optional().describe('Maximum matches to return. Default 100.')
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
  async execute(args, ctx) {
    // The pattern runs in a worker with a hard timeout: a catastrophic one cannot freeze the companion.
    let matcher: LineMatcher;
    try {
      matcher = new LineMatcher(args.pattern, args.case_insensitive ? 'iu' : 'u', { signal: ctx.signal });
    } catch (error) {
      throw new ToolInputError(`Invalid regular expression ${JSON.stringify(args.pattern)}: ${(error as Error).message}. Escape special characters (\\. \\( \\[) to match them literally.`);
    }
    const root = await resolveWorkspacePath(ctx.workspace, args.path ?? '.');
    if (!root.exists) throw new ToolInputError(`Not found: "${args.path}". Paths are relative to the workspace root.`);
    const filter = args.glob ? globToRegExp(args.glob) : undefined;
    const isFile = (await stat(root.absolute)).isFile();
    const base = isFile ? path.dirname(root.absolute) : root.absolute;
    const prefix = (() => {
      const rel = path.relative(ctx.workspace, base).split(path.sep).join('/');
      return rel === '' ? '' : `${rel}/`;
    })();
    const kept: string[] = [];
    let total = 0;
    const files = new Set<string>();
    try {
      for await (const rel of walkFiles(root.absolute, base, ctx.signal)) {
        if (filter && !filter.test(rel)) continue;
        const full = path.join(base, rel);
        const info = await stat(full).catch(() => undefined);
        if (!info || info.size > MAX_FILE_BYTES || (await isBinary(full))) continue;
        const text = await readFile(full, 'utf8').catch(() => undefined);
        if (text === undefined) continue;
        const hits = await matcher.matchLines(text, `${prefix}${rel}`);
        if (hits.length === 0) continue;
        const lines = splitLines(text);
        for (const lineNo of hits) {
          total++;
          files.add(rel);
          if (kept.length < KEEP_MATCHES) {
            const line = lines[lineNo - 1] ?? '';
            const snippet = line.length > SNIPPET_CHARS ? `${line.slice(0, SNIPPET_CHARS)}…` : line;
            kept.push(`${prefix}${rel}:${lineNo}: ${snippet}`);
          }
        }
      }
    } finally {
      matcher.dispose();
    }
    if (total === 0) {
      return { title: `${args.pattern}: no matches`, output: `No matches for /${args.pattern}/${args.case_insensitive ? 'i' : ''}${args.glob ? ` in files matching ${args.glob}` : ''} under ${root.relative === '.' ? 'the workspace' : root.relative}.`, metadata: { total: 0 } };
    }
    const offset = args.offset ?? 1;
    const limit = args.limit ?? 100;
    if (offset > total) throw new ToolInputError(`offset ${offset} is past the last match (${total} matches). Use an offset between 1 and ${total}.`);
    const shown = kept.slice(offset - 1, offset - 1 + limit);
    const last = offset - 1 + shown.length;
    const inFiles = `in ${files.size} file${files.size === 1 ? '' : 's'}`;
    const note = last < total
      ? `(matches ${offset}–${last} of ${total} ${inFiles}; call grep with offset=${last + 1} for more${last >= KEEP_MATCHES ? ' — past 20,000 matches, narrow the pattern, path or glob' : ''})`
      : offset === 1 ? `(${total} match${total === 1 ? '' : 'es'} ${inFiles})` : `(matches ${offset}–${last} of ${total} ${inFiles})`;
    return { title: `${args.pattern}: ${total} matches`, output: [...shown, note].join('\n'), metadata: { total, files: files.size } };
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
