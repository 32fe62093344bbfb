import { z } from 'zod';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool, type ToolContext, type ToolDefinition } from '../../gate/define-tool.js';
import { CALL_TOOL, LOADED_PREFIX } from '../../gate/call-tool.js';
import { deferredTools, summary, type ToolCatalog } from '../../gate/deferred.js';

export type { ToolCatalog };

export const toolSearchParameters = z.strictObject({
  query: z
    .string({ error: 'must be a string (tool names, or words for what you need)' })
    .trim()
    .min(1, { error: 'must not be empty' })
    .describe('Tool names, or words describing what you need.'),
  limit: z
    .number({ error: 'must be a number' })
    .int({ error: 'must be a whole number' })
    .min(1, { error: 'must be at least 1' })
    .max(10, { error: 'must be at most 10' })
    .optional()
    .describe('How many tools a word search returns. Default 3.')
});

/**
 * `tool_search` (HARN-11): the model sees deferred tools as a compact index (appended to
 * this tool's declared description by `catalog.ts`, per surface) and loads their schemas
 * on demand; they arrive as a tool result, at the end of the context, so the declared tools
 * — the cached prefix — never change. The result's first line names what it loaded
 * ({@link LOADED_PREFIX}): `call_tool` accepts exactly those from then on.
 */
export function createToolSearchTool(catalog: ToolCatalog): ToolDefinition<typeof toolSearchParameters> {
  return defineTool({
    name: 'tool_search',
    tier: 'read',
    description: TOOL_DESCRIPTIONS.tool_search,
    parameters: toolSearchParameters,
    examples: [{ args: { query: 'grep, eval' }, comment: 'load two tools by name' }],
    timeoutMs: 10_000,
    outputShaping: 'paged',
    async execute(args, ctx: ToolContext) {
      // External tools (MCP servers) are registered when first searched for (started lazily).
      await catalog.loadSources?.(ctx.signal);
      const available = deferredTools(catalog, ctx.profile);
      const found = byNames(available, args.query) ?? rank(available, args.query).slice(0, args.limit ?? 3);
      if (found.length === 0) {
        return {
          title: `no tool for "${args.query}"`,
          output: `No tool matches ${JSON.stringify(args.query)}. Tools available by search: ${available.map((t) => t.name).join(', ') || '(none)'}.`
        };
      }
      const names = found.map((t) => t.name);
      const blocks = found.map((t) =>
        JSON.stringify(
          {
            name: t.name,
            tier: t.tier,
            description: catalog.modelDescription(t.name),
            parameters: catalog.inputJsonSchema(t.name)
          },
          null,
          1
        )
      );
      return {
        title: `loaded ${names.join(', ')}`,
        output: `${LOADED_PREFIX}${names.join(', ')}.\n\n${blocks.join('\n\n')}\n\nCall ${names.length === 1 ? 'it' : 'them'} with ${CALL_TOOL} {"name": "${names[0]}", "arguments": {…}}, the arguments matching the schema.`,
        metadata: { loaded: names }
      };
    }
  });
}

/** Exact names (`lsp`, `lsp, debug`): exactly those tools, or undefined when a word is no tool name. */
function byNames(tools: readonly ToolDefinition[], query: string): ToolDefinition[] | undefined {
  const words = query.split(/[\s,]+/).filter(Boolean);
  const picked = words.map((w) => tools.find((t) => t.name === w));
  if (words.length === 0 || words.length > 10 || picked.some((t) => t === undefined)) return undefined;
  return [...new Set(picked as ToolDefinition[])];
}

/** Words too common to tell tools apart. */
const STOP_WORDS = new Set([
  'the',
  'and',
  'for',
  'with',
  'from',
  'into',
  'that',
  'this',
  'what',
  'tool',
  'use',
  'can',
  'how'
]);

/**
 * Word search: a word in the name counts most, in the index line (what the tool is for)
 * next, anywhere in the description least; the whole query as a name wins outright.
 */
function rank(tools: readonly ToolDefinition[], query: string): ToolDefinition[] {
  const q = query.toLowerCase().trim();
  const words = q.split(/[\s_,]+/).filter((w) => w.length >= 3 && !STOP_WORDS.has(w));
  const score = (t: ToolDefinition): number => {
    if (t.name === q) return 1000;
    let s = t.name.includes(q) ? 100 : 0;
    const line = summary(t.description).toLowerCase();
    const body = t.description.toLowerCase();
    for (const w of words) {
      if (t.name.includes(w)) s += 10;
      if (line.includes(w)) s += 4;
      else if (body.includes(w)) s += 1;
    }
    return s;
  };
  const scored = tools
    .map((t) => ({ t, s: score(t) }))
    .filter((x) => x.s > 0)
    .sort((a, b) => b.s - a.s || a.t.name.localeCompare(b.t.name));
  // Weak matches (under half the best score) would only cost context.
  const best = scored[0]?.s ?? 0;
  return scored.filter((x) => x.s * 2 >= best).map((x) => x.t);
}
