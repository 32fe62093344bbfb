import { z } from 'zod';
import type { ToolSurface } from '../../ports/vocabulary.js';
import { TOOL_DESCRIPTIONS } from '../descriptions.generated.js';
import { defineTool, type ToolContext, type ToolDefinition } from '../define-tool.js';

/** What `tool_search` needs from the registry (passed in, never global). */
export interface ToolCatalog {
  list(surface?: ToolSurface): ToolDefinition[];
  inputJsonSchema(name: string): Record<string, unknown>;
  modelDescription(name: string): string;
  /** Registers tools that appear only once started (MCP servers) before a search. */
  loadSources?(signal: AbortSignal): Promise<void>;
}

export const toolSearchParameters = z.strictObject({
  query: z.string({ error: 'must be a string (a tool name or what you need)' }).min(1, { error: 'must not be empty' })
    .describe('Tool name or words describing what you need.'),
  limit: z.number({ error: 'must be a number' }).int({ error: 'must be a whole number' }).min(1, { error: 'must be at least 1' }).max(10, { error: 'must be at most 10' }).optional()
    .describe('How many tools to return. Default 3.')
});

/** One line per deferred tool: the compact index the model sees (HARN-11). */
export function deferredIndex(tools: readonly ToolDefinition[]): string {
  return tools
    .filter((t) => t.deferred)
    .map((t) => `- ${t.name}: ${firstLine(t.description)}`)
    .join('\n');
}

/**
 * `tool_search` (HARN-11): the model sees deferred tools as a compact index (in this
 * tool's description) and loads full schemas on demand; they arrive as a tool result,
 * i.e. at the end of the context, so the declared tools — the cached prefix — never change.
 */
export function createToolSearchTool(catalog: ToolCatalog, deferred: readonly ToolDefinition[]): ToolDefinition<typeof toolSearchParameters> {
  return defineTool({
    name: 'tool_search',
    tier: 'read',
    description: `${TOOL_DESCRIPTIONS.tool_search.trim()}\n\nTools available by search:\n${deferredIndex(deferred)}\n`,
    parameters: toolSearchParameters,
    examples: [{ args: { query: deferred[0]?.name ?? 'rename' }, comment: 'load one tool by name' }],
    timeoutMs: 10_000,
    outputShaping: 'paged',
    async execute(args, ctx: ToolContext) {
      await catalog.loadSources?.(ctx.signal);
      const available = catalog.list(ctx.profile).filter((t) => t.deferred);
      const ranked = rank(available, args.query).slice(0, args.limit ?? 3);
      if (ranked.length === 0) {
        return { title: `no tool for "${args.query}"`, output: `No tool matches ${JSON.stringify(args.query)}. Tools available by search: ${available.map((t) => t.name).join(', ') || '(none)'}.` };
      }
      const blocks = ranked.map((t) =>
        JSON.stringify({ name: t.name, tier: t.tier, description: catalog.modelDescription(t.name), parameters: catalog.inputJsonSchema(t.name) }, null, 1)
      );
      return {
        title: `loaded ${ranked.map((t) => t.name).join(', ')}`,
        output: `${blocks.join('\n\n')}\n\nYou can now call ${ranked.map((t) => t.name).join(', ')} by name with arguments matching the schema.`,
        metadata: { loaded: ranked.map((t) => t.name) }
      };
    }
  });
}

function firstLine(text: string): string {
  const line = text.trim().split('\n', 1)[0] ?? '';
  return line.length > 120 ? `${line.slice(0, 117)}…` : line;
}

function rank(tools: readonly ToolDefinition[], query: string): ToolDefinition[] {
  const q = query.toLowerCase().trim();
  const words = q.split(/[\s_,]+/).filter(Boolean);
  const score = (t: ToolDefinition): number => {
    if (t.name === q) return 1000;
    let s = t.name.includes(q) ? 100 : 0;
    const hay = `${t.name} ${t.description}`.toLowerCase();
    for (const w of words) {
      if (t.name.includes(w)) s += 10;
      if (hay.includes(w)) s += 1;
    }
    return s;
  };
  return tools.map((t) => ({ t, s: score(t) })).filter((x) => x.s > 0).sort((a, b) => b.s - a.s || a.t.name.localeCompare(b.t.name)).map((x) => x.t);
}
