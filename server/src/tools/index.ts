import { readTool } from './read/read.js';
import { ToolRegistry, type ToolRegistryOptions } from '../gate/registry.js';

export {
  defineTool,
  type ToolContext,
  type ToolDefinition,
  type ToolOutput,
  type ToolTier
} from '../gate/define-tool.js';
export { FatalToolError, PathRefusedError, ToolInputError } from '../base/tool-errors.js';
export {
  ToolRegistry,
  type ToolCallRecord,
  type ToolCallResult,
  type ToolRegistryOptions,
  type ToolSurface
} from '../gate/registry.js';
export { resolveWorkspacePath, type ResolvedWorkspacePath } from '../workspace/workspace-path.js';
export { shapeOutput, planShape, OUTPUT_LIMITS, OUTPUTS_DIR, type ShapedOutput } from '../workspace/output-shaping.js';
export { readTool } from './read/read.js';
export { writeTool } from './write/write.js';
export { editTool } from './edit/edit.js';
export { applyPatchTool } from './apply_patch/apply_patch.js';
export { grepTool } from './grep/grep.js';
export { astGrepTool } from './ast_grep/ast_grep.js';
export { globTool } from './glob/glob.js';
export { shellTool } from './shell/shell.js';
export { createAskUserTool } from './ask_user/ask_user.js';
export { createToolSearchTool } from './tool_search/tool_search.js';
export { createStructuralEditTools } from './ast_edit/ast_edit.js';
export { createCodeGraphTool } from './code_graph/code_graph.js';
export { builtinTools, GENERIC_TOOLS, workerTools, type ToolResources } from './builtin-tools.js';

/**
 * The walking skeleton's minimal registry (`read` only, no policy gate) — kept for tests
 * and embedding. The server uses {@link builtinTools} through `createHarness`.
 */
export function createDefaultRegistry(options: ToolRegistryOptions = {}): ToolRegistry {
  return new ToolRegistry([readTool], options);
}
