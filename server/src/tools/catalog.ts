import type { ToolDefinition } from './define-tool.js';
import { ToolRegistry, type ToolSurface } from './registry.js';
import { createToolSearchTool, deferredIndex } from './tool_search/tool_search.js';

/** One tool as declared to a model: what the catalog token counts measure. */
export interface ToolDeclaration {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** The declarations a model receives for a surface (deferred tools excluded). */
export function declarations(registry: ToolRegistry, surface?: ToolSurface): ToolDeclaration[] {
  return registry.declared(surface).map((t) => ({ name: t.name, description: registry.modelDescription(t.name), parameters: registry.inputJsonSchema(t.name) }));
}

/**
 * What the model would see if every tool except the pinned ones were deferred (HARN-11):
 * the pinned declarations plus `tool_search`, whose description carries the one-line
 * index. Used for the catalog benchmark and its test.
 */
export function deferredDeclarations(registry: ToolRegistry, surface?: ToolSurface, pinned: readonly string[] = ['ask_user']): ToolDeclaration[] {
  const tools = registry.list(surface).filter((t) => t.name !== 'tool_search');
  const deferred: ToolDefinition[] = tools.filter((t) => !pinned.includes(t.name)).map((t) => ({ ...t, deferred: true }));
  const search = createToolSearchTool(registry, deferred);
  const kept = tools.filter((t) => pinned.includes(t.name)).map((t) => ({ name: t.name, description: registry.modelDescription(t.name), parameters: registry.inputJsonSchema(t.name) }));
  const alone = new ToolRegistry([search as unknown as ToolDefinition]);
  return [...kept, { name: search.name, description: alone.modelDescription(search.name), parameters: alone.inputJsonSchema(search.name) }];
}

export { deferredIndex };
