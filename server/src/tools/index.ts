import { readTool } from './read/read.js';
import { ToolRegistry } from './registry.js';

export { defineTool, type ToolContext, type ToolDefinition, type ToolOutput, type ToolTier } from './define-tool.js';
export { FatalToolError, PathRefusedError, ToolInputError } from './errors.js';
export { ToolRegistry, type ToolCallRecord, type ToolCallResult, type ToolSurface } from './registry.js';
export { resolveWorkspacePath, type ResolvedWorkspacePath } from './workspace-path.js';
export { readTool } from './read/read.js';

/** A registry with the walking skeleton's tools (`read`). */
export function createDefaultRegistry(): ToolRegistry {
  return new ToolRegistry([readTool]);
}
