import type { QuestionBroker } from '../questions/question-broker.js';
import { StagedEdits } from '../structural/staged-edits.js';
import { createStructuralEditTools } from './ast_edit/ast_edit.js';
import { createCodeGraphTool } from './code_graph/code_graph.js';
import type { CodeGraphs } from '../structural/graph/code-graph.js';
import { applyPatchTool } from './apply_patch/apply_patch.js';
import { astGrepTool } from './ast_grep/ast_grep.js';
import { createAskUserTool } from './ask_user/ask_user.js';
import type { ToolDefinition } from '../gate/define-tool.js';
import { editTool } from './edit/edit.js';
import { globTool } from './glob/glob.js';
import { grepTool } from './grep/grep.js';
import { readTool } from './read/read.js';
import { ToolRegistry, type ToolRegistryOptions } from '../gate/registry.js';
import { shellTool } from './shell/shell.js';
import { writeTool } from './write/write.js';
import { createVibeSpawnTool } from './vibe_spawn/vibe_spawn.js';
import { createVibeSendTool } from './vibe_send/vibe_send.js';
import { createVibeWaitTool } from './vibe_wait/vibe_wait.js';
import { createVibeKillTool } from './vibe_kill/vibe_kill.js';
import { createVibeListTool } from './vibe_list/vibe_list.js';
import type { WorkerPort } from './vibe_spawn/worker-port.js';

export { defineTool, type ToolContext, type ToolDefinition, type ToolOutput, type ToolTier } from '../gate/define-tool.js';
export { FatalToolError, PathRefusedError, ToolInputError } from '../base/tool-errors.js';
export { ToolRegistry, type ToolCallRecord, type ToolCallResult, type ToolRegistryOptions, type ToolSurface } from '../gate/registry.js';
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

/** The generic tools that need no live resource (TIER-3): files, search, shell. */
export const GENERIC_TOOLS: readonly ToolDefinition[] = [readTool, writeTool, editTool, applyPatchTool, grepTool, astGrepTool, globTool, shellTool];

/**
 * The built-in tools for the resources attached: `ask_user` only with a question port
 * (ASK-3); `ast_edit` and `resolve` share `edits` (one store per companion; a fresh one
 * when none is given). Later issues add theirs (eval with a kernel factory, lsp with a supervisor…).
 */
export function builtinTools(resources: { questions?: QuestionBroker; edits?: StagedEdits; graphs?: CodeGraphs } = {}): ToolDefinition[] {
  const tools: ToolDefinition[] = [...GENERIC_TOOLS, ...createStructuralEditTools(resources.edits ?? new StagedEdits()), createCodeGraphTool(resources.graphs)];
  if (resources.questions) tools.push(createAskUserTool(resources.questions) as unknown as ToolDefinition);
  return tools;
}

/**
 * The walking skeleton's minimal registry (`read` only, no policy gate) — kept for tests
 * and embedding. The server uses {@link builtinTools} through `createHarness`.
 */
export function createDefaultRegistry(options: ToolRegistryOptions = {}): ToolRegistry {
  return new ToolRegistry([readTool], options);
}

/** The five `vibe_*` tools around a worker port (VIBE-1: registered only when workers are on, TIER-3). */
export function workerTools(workers: WorkerPort): ToolDefinition[] {
  return [createVibeSpawnTool(workers), createVibeSendTool(workers), createVibeWaitTool(workers), createVibeKillTool(workers), createVibeListTool(workers)] as unknown as ToolDefinition[];
}
