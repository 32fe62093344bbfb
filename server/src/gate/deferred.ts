/**
 * The deferred half of the catalog (HARN-11): which tools a surface loads through
 * `tool_search` instead of declaring, and the one-line index the model reads for them.
 */
import type { ToolSurface } from '../ports/vocabulary.js';
import type { ToolDefinition } from './define-tool.js';
import { CATALOG_TOOLS, fixedToolNames } from './fixed-set.js';

/** What `tool_search` needs from the registry (passed in, never global). */
export interface ToolCatalog {
  list(surface?: ToolSurface): ToolDefinition[];
  inputJsonSchema(name: string): Record<string, unknown>;
  modelDescription(name: string): string;
  /** Registers tools that appear only once started (MCP servers) before a search. */
  loadSources?(signal: AbortSignal): Promise<void>;
}

/**
 * The tools deferred on a surface (HARN-11): those on it that are not in its fixed row
 * ({@link fixedToolNames}) or that ask to be deferred themselves (`deferred: true`, e.g.
 * external tools). Empty when the registry has no `tool_search` to load them with: a bare
 * registry declares everything.
 */
export function deferredTools(catalog: Pick<ToolCatalog, 'list'>, surface?: ToolSurface): ToolDefinition[] {
  const tools = catalog.list(surface);
  if (!tools.some((t) => t.name === 'tool_search')) return [];
  const fixed = fixedToolNames(surface);
  return tools.filter((t) => !CATALOG_TOOLS.includes(t.name) && (t.deferred === true || !fixed.has(t.name)));
}

/** One line per tool: the compact index the model sees in place of the schemas. */
export function deferredIndex(tools: readonly ToolDefinition[]): string {
  return tools.map((t) => `- ${t.name}: ${summary(t.description)}`).join('\n');
}

/** The index line of a tool: its first sentence, at most 72 characters. */
export function summary(text: string): string {
  const flat = text.trim().split('\n\n', 1)[0]!.replace(/\s+/g, ' ');
  const end = flat.search(/(?<!\b(?:e\.g|i\.e|etc|vs))[.:;](\s|$)/);
  const sentence = end >= 0 ? flat.slice(0, end) : flat;
  return sentence.length > 72 ? `${sentence.slice(0, 71).trimEnd()}…` : sentence;
}
