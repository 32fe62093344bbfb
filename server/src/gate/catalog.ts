/**
 * What the model is declared (HARN-11): per surface, the fixed tools in full
 * (`tool_search/fixed-set.ts`, a data table), and — when anything else is on the surface —
 * `tool_search`, whose description carries the one-line index of the deferred tools, and
 * the `call_tool` dispatcher that calls them once loaded (`call_tool/call_tool.ts` says
 * why a dispatcher: the declared prefix never changes). `runTurn` declares exactly this.
 */
import type { ToolDefinition } from './define-tool.js';
import type { ToolDeclaration } from './declaration.js';
import type { ToolRegistry, ToolSurface } from './registry.js';
import { CALL_TOOL_DECLARATION } from './call-tool.js';
import { deferredIndex, deferredTools } from './deferred.js';

export type { ToolDeclaration } from './declaration.js';
export { FIXED_TOOLS, fixedToolNames } from './fixed-set.js';
export { CALL_TOOL, dispatchTarget, loadedTools, type DispatchTarget } from './call-tool.js';
export { deferredIndex, deferredTools };

/** The heading of the index inside tool_search's declared description. */
export const INDEX_HEADING = 'Tools available by search (load with tool_search, call with call_tool):';

/** The index's last line when MCP servers are configured (their tools are not listed one by one). */
export const EXTERNAL_LINE =
  '- Tools of the configured MCP servers, named server__tool: search for what you need (e.g. tool_search "weather forecast").';

/** A surface's catalog: what is declared in full, and what is only indexed. */
export interface SurfaceCatalog {
  /** The fixed tools (sorted by name), then tool_search and call_tool when anything is deferred. */
  declared: ToolDeclaration[];
  /** The definitions behind `declared` that are registry tools (the system prompt lists them). */
  declaredTools: ToolDefinition[];
  /** On the surface, loaded on demand. */
  deferred: ToolDefinition[];
}

/**
 * The catalog a model receives for a surface. `hide` leaves tools out of this catalog
 * altogether, neither declared nor indexed: `skill` while no skill is offered, so an
 * installation without skills pays nothing for them.
 */
export function surfaceCatalog(
  registry: ToolRegistry,
  surface?: ToolSurface,
  hide?: ReadonlySet<string>
): SurfaceCatalog {
  const list = (s?: ToolSurface): ToolDefinition[] =>
    hide?.size ? registry.list(s).filter((t) => !hide.has(t.name)) : registry.list(s);
  const deferred = deferredTools({ list }, surface);
  const skipped = new Set(deferred.map((t) => t.name));
  const fixed = list(surface).filter((t) => !skipped.has(t.name) && t.name !== 'tool_search');
  const declared = fixed.map((t) => fullDeclaration(registry, t.name));
  const declaredTools = [...fixed];
  if (deferred.length > 0) {
    const search = registry.get('tool_search')!;
    // Tools that ask to be deferred (MCP servers' `server__tool`, registered when a server
    // first starts) are found by search only: listing them would change the declared prefix
    // whenever a server starts, and one server of 150 tools would swamp it.
    const indexed = deferred.filter((t) => t.deferred !== true);
    const external = registry.hasToolSources ? `\n${EXTERNAL_LINE}` : '';
    declared.push({
      ...fullDeclaration(registry, search.name),
      description: `${registry.modelDescription(search.name)}\n\n${INDEX_HEADING}\n${deferredIndex(indexed)}${external}`
    });
    declared.push(CALL_TOOL_DECLARATION);
    declaredTools.push(search);
  }
  return { declared, declaredTools, deferred };
}

/** The declarations a model receives for a surface ({@link surfaceCatalog}'s `declared`). */
export function declarations(registry: ToolRegistry, surface?: ToolSurface): ToolDeclaration[] {
  return surfaceCatalog(registry, surface).declared;
}

/** Every tool on the surface declared in full, as before the catalog (the bench's `full_tokens`). */
export function fullDeclarations(registry: ToolRegistry, surface?: ToolSurface): ToolDeclaration[] {
  return registry
    .list(surface)
    .filter((t) => t.name !== 'tool_search')
    .map((t) => fullDeclaration(registry, t.name));
}

function fullDeclaration(registry: ToolRegistry, name: string): ToolDeclaration {
  return { name, description: registry.modelDescription(name), parameters: registry.inputJsonSchema(name) };
}
