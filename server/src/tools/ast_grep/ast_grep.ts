import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool, pathAllowed, type ToolContext } from '../../gate/define-tool.js';
import { ToolInputError } from '../../base/tool-errors.js';
import { cut, page } from '../../workspace/output-shaping.js';
import { emptyOutcome, withheldNote } from '../../gate/call-subjects.js';
import { resolveWorkspacePath } from '../../workspace/workspace-path.js';
import { placeLabel } from '../../structural/documents.js';
import {
  LANGUAGE_NAMES,
  languageOfPath,
  parseLanguageName,
  type StructuralLanguage
} from '../../structural/languages.js';
import { structuralSearch, type SearchResult, type StructuralMatch } from '../../structural/search.js';

const MAX_OUTPUT_CHARS = 50_000;
const SNIPPET_CHARS = 200;
/** Matches one search keeps: beyond it the count is "more than" (memory and time stay bounded). */
export const MAX_SEARCH_MATCHES = 100_000;

const positive = (what: string) =>
  z
    .number({ error: `must be ${what}` })
    .int({ error: `must be ${what}` })
    .min(1, { error: `must be ${what}` });

/** Pattern, path and language: shared by `ast_grep` and `ast_edit`. */
export const patternField = z
  .string({ error: 'must be a code pattern string' })
  .trim()
  .min(1, { error: 'must not be empty' })
  .describe(
    'Code with metavariables: $NAME (one node), $$$NAME (several), $_ (one, not captured), e.g. "dispose($X)".'
  );
export const pathField = z
  .string({ error: 'must be a path relative to the workspace' })
  .optional()
  .describe('File or folder to search, relative to the workspace. Default: the workspace root.');
export const languageField = z
  .string({ error: `must be one of ${LANGUAGE_NAMES}` })
  .optional()
  .describe('python, typescript, tsx or javascript. Default: from the file extension; in a folder, every language.');

export const astGrepParameters = z.strictObject({
  pattern: patternField,
  path: pathField,
  language: languageField,
  max_results: positive('a positive integer')
    .max(500, { error: 'must be at most 500' })
    .optional()
    .describe('Matches per page. Default 50.'),
  offset: positive('a positive integer (1-based index of the first match)')
    .optional()
    .describe('1-based index of the first match to return. Default 1.')
});

/** Where a structural search runs: the resolved path and the language it is limited to. */
export interface StructuralTarget {
  relative: string;
  language?: StructuralLanguage;
}

/** Resolves `path` and `language` the way `ast_grep` and `ast_edit` both read them. */
export async function structuralTarget(
  args: { path?: string | undefined; language?: string | undefined },
  ctx: ToolContext
): Promise<StructuralTarget> {
  const root = await resolveWorkspacePath(ctx.workspace, args.path ?? '.');
  if (!root.exists) throw new ToolInputError(`Not found: "${args.path}". Paths are relative to the workspace root.`);
  let language: StructuralLanguage | undefined;
  if (args.language !== undefined) {
    language = parseLanguageName(args.language);
    if (!language)
      throw new ToolInputError(`Unknown language ${JSON.stringify(args.language)}: use one of ${LANGUAGE_NAMES}.`);
  } else if ((await stat(root.absolute)).isFile() && !root.relative.toLowerCase().endsWith('.ipynb')) {
    language = languageOfPath(root.relative);
    if (!language)
      throw new ToolInputError(
        `${root.relative} is not a file structural search understands (${LANGUAGE_NAMES}, or .ipynb). Pass language to parse it as one of them.`
      );
  }
  return language ? { relative: root.relative, language } : { relative: root.relative };
}

/** `(pattern read as expression in python)` and the like. */
export function rungNote(result: SearchResult): string {
  const parts = Object.entries(result.rungs).map(([lang, r]) => `as ${r.used} in ${lang}`);
  const bad = result.unparseable.map((e) => `${e.language}: ${e.complaint}`);
  return [
    parts.length ? `pattern read ${parts.join(', ')}` : '',
    bad.length ? `not parseable in ${bad.join('; ')}` : ''
  ]
    .filter(Boolean)
    .join('; ');
}

/** One match as a line: place, line, column, first line of code, captures. */
export function matchLine(m: StructuralMatch): string {
  const where = m.doc.cell ? `${placeLabel(m.doc)} line ${m.line}:${m.column}` : `${m.doc.file}:${m.line}:${m.column}`;
  const first = m.text.split('\n')[0]!;
  const code = cut(first + (m.text.includes('\n') ? ' …' : ''), SNIPPET_CHARS, 'read at this line for the rest');
  const caps = Object.entries(m.captures).map(([k, v]) => `${k}=${Array.isArray(v) ? `[${v.join(', ')}]` : v}`);
  return `${where}: ${code}${caps.length ? `  {${cut(caps.join(', '), SNIPPET_CHARS, 'narrow the pattern')}}` : ''}`;
}

/** `ast_grep`: structural search over files and notebook cells (SPEC AST-1…6). */
export const astGrepTool = defineTool({
  name: 'ast_grep',
  tier: 'read',
  description: TOOL_DESCRIPTIONS.ast_grep,
  parameters: astGrepParameters,
  examples: [
    { args: { pattern: 'if $X is not None: $X.close()', path: 'src' }, comment: 'guards that close what they checked' },
    { args: { pattern: 'timeout=$T', language: 'python' }, comment: 'every timeout keyword argument' }
  ],
  timeoutMs: 120_000,
  outputShaping: 'paged',
  paths: (args) => [args.path ?? '.'],
  async execute(args, ctx) {
    const target = await structuralTarget(args, ctx);
    const result = await structuralSearch(args.pattern, {
      workspace: ctx.workspace,
      path: target.relative,
      signal: ctx.signal,
      ...(target.language ? { language: target.language } : {}),
      allowed: (rel) => pathAllowed(ctx, rel),
      maxMatches: MAX_SEARCH_MATCHES
    });
    const held = withheldNote(result.withheld);
    const total = result.matches.length;
    const note = rungNote(result);
    const where = target.relative === '.' ? 'the workspace' : target.relative;
    const stopped = result.truncated
      ? `The search stopped at ${MAX_SEARCH_MATCHES.toLocaleString('en-US')} matches: there are more (the count and pages cover those found). Narrow \`path\` or the pattern to see them all.`
      : '';
    const tail = [stopped, held, ...result.badNotebooks.map((b) => `skipped ${b.file}: ${b.reason}`)]
      .filter(Boolean)
      .join('\n');
    if (total === 0) {
      const searched = `${result.filesSearched} file${result.filesSearched === 1 ? '' : 's'} searched`;
      return {
        title: `${args.pattern}: no matches`,
        output: `No matches for ${JSON.stringify(args.pattern)} under ${where} (${searched}${note ? `; ${note}` : ''}).${tail ? `\n${tail}` : ''}`,
        metadata: { total: 0, withheld: result.withheld },
        ...emptyOutcome(result.withheld)
      };
    }
    const offset = args.offset ?? 1;
    const limit = args.max_results ?? 50;
    const files = new Set(result.matches.map((m) => m.doc.file)).size;
    const p = page({
      entries: result.matches.slice(offset - 1, offset - 1 + limit).map(matchLine),
      offset,
      limit,
      total,
      maxChars: MAX_OUTPUT_CHARS,
      noun: { one: 'match', many: 'matches' },
      tool: 'ast_grep',
      scope: `in ${files} file${files === 1 ? '' : 's'}; ${note}`,
      countWhenWhole: true
    });
    return {
      title: `${args.pattern}: ${total}${result.truncated ? '+' : ''} matches`,
      output: tail ? `${p.text}\n${tail}` : p.text,
      metadata: {
        total,
        files,
        withheld: result.withheld,
        ...(result.truncated ? { stoppedAt: MAX_SEARCH_MATCHES } : {})
      }
    };
  }
});
