/**
 * The one table of Cellmate's built-in tools (TIER-3: a tool is registered only when the
 * live resource behind it is attached). The companion (`server.ts`) and `cellmate mcp`
 * (`mcp/serve.ts`) both register exactly what {@link builtinTools} returns for the
 * resources they hold; nothing else decides which built-in tool exists.
 */
import type { CodeGraphs } from '../structural/graph/code-graph.js';
import { StagedEdits } from '../structural/staged-edits.js';
import type { QuestionBroker } from '../questions/question-broker.js';
import type { SkillLibrary } from '../skills/skill-library.js';
import type { DebugSessionManager, ProcessLauncher } from '../dap/session-manager.js';
import type { KernelManager } from '../kernels/kernel-manager.js';
import type { DocumentSync } from '../lsp/documents.js';
import type { LspService } from '../lsp/lsp-service.js';
import type { ToolDefinition } from '../gate/define-tool.js';
import type { NotebookPort } from '../notebooks/pane-hub.js';
import type { ToolRegistry } from '../gate/registry.js';
import { createAddReviewNodeTool } from './add_review_node/add_review_node.js';
import type { ReviewPort } from '../modes/review/review-port.js';
import { applyPatchTool } from './apply_patch/apply_patch.js';
import { createApproveReviewNodeTool } from './approve_review_node/approve_review_node.js';
import { createAskUserTool } from './ask_user/ask_user.js';
import { createStructuralEditTools } from './ast_edit/ast_edit.js';
import { astGrepTool } from './ast_grep/ast_grep.js';
import { createCodeGraphTool } from './code_graph/code_graph.js';
import { createDebugTool } from './debug/debug.js';
import { editTool } from './edit/edit.js';
import { createEvalTool } from './eval/eval.js';
import { createKernelRunner } from './eval/kernel-runner.js';
import { createExitPlanModeTool } from './exit_plan_mode/exit_plan_mode.js';
import { createFinalizeReviewTool, type ReviewAxesPort } from './finalize_review/finalize_review.js';
import { globTool } from './glob/glob.js';
import { grepTool } from './grep/grep.js';
import { createKernelStateTool, focusedKernels } from './kernel_state/kernel_state.js';
import { createLspTool } from './lsp/lsp.js';
import { createLspCodeActionTool } from './lsp_code_action/lsp_code_action.js';
import { createLspRenameTool } from './lsp_rename/lsp_rename.js';
import { createNotebookTools } from './notebook/notebook.js';
import { createNotebookAcceptOutputsTool } from './notebook_accept_outputs/notebook_accept_outputs.js';
import { createNotebookVerifyTool } from './notebook_verify/notebook_verify.js';
import { createProposeOrchestrationTool } from './propose_orchestration/propose_orchestration.js';
import type { OrchestrationPort } from '../modes/orchestrate/orchestration-port.js';
import { readTool } from './read/read.js';
import { shellTool } from './shell/shell.js';
import { createSkillTool } from './skill/skill.js';
import { createSubmitPlanTool } from './submit_plan/submit_plan.js';
import type { PlanPort } from '../modes/plan/plan-port.js';
import { createToolSearchTool, type ToolCatalog } from './tool_search/tool_search.js';
import { createVibeKillTool } from './vibe_kill/vibe_kill.js';
import { createVibeListTool } from './vibe_list/vibe_list.js';
import { createVibeSendTool } from './vibe_send/vibe_send.js';
import { createVibeSpawnTool } from './vibe_spawn/vibe_spawn.js';
import { createVibeWaitTool } from './vibe_wait/vibe_wait.js';
import type { WorkerPort } from './vibe_spawn/worker-port.js';
import { writeTool } from './write/write.js';

/** The live resources a companion (or `cellmate mcp`) holds; each one brings its tools. */
export interface ToolResources {
  /** The registry the tools go into: `tool_search` indexes and loads from it (HARN-11). */
  catalog?: ToolCatalog;
  /** The question port: `ask_user` (ASK-3). */
  questions?: QuestionBroker;
  /** Staged structural edits shared by `ast_edit` and `resolve` (one store per companion; a fresh one when absent). */
  edits?: StagedEdits;
  /** The workspace's code graph, shared with the write hook; a fresh one when absent. */
  graphs?: CodeGraphs;
  /** The open notebooks in the panes: `notebook_read`/`notebook_edit`/`notebook_run`. */
  panes?: NotebookPort;
  /** Kernels: `eval`, `notebook_verify`, `notebook_accept_outputs`, `kernel_state`, and `notebook_run` on closed notebooks. */
  kernels?: { kernels: KernelManager; registry: () => ToolRegistry; idleTimeoutMs?: number };
  /** Language servers: `lsp`, `lsp_rename`, `lsp_code_action`. */
  lsp?: { service: LspService; docs: DocumentSync };
  /** Debug sessions: `debug` (DBG-1). */
  debug?: { sessions: DebugSessionManager; env?: NodeJS.ProcessEnv; launchProcess?: ProcessLauncher };
  /** Background workers: the five `vibe_*` tools (VIBE-1). */
  workers?: WorkerPort;
  /** Plan mode's store: `submit_plan`, `exit_plan_mode` (MODE-3). */
  plans?: PlanPort;
  /** Review mode's store and its axes: `add_review_node`, `approve_review_node`, `finalize_review` (MODE-4). */
  reviews?: { store: ReviewPort; axes: ReviewAxesPort };
  /** Orchestrate mode's store: `propose_orchestration` (MODE-5). */
  orchestrations?: OrchestrationPort;
  /** Agent Skills: `skill` (SKILL-3). */
  skills?: SkillLibrary;
}

/** The tools that need no live resource: files, search, shell. */
export const GENERIC_TOOLS: readonly ToolDefinition[] = [
  readTool,
  writeTool,
  editTool,
  applyPatchTool,
  grepTool,
  astGrepTool,
  globTool,
  shellTool
];

/** The built-in tools for the resources attached (TIER-3), in registration order. */
export function builtinTools(r: ToolResources = {}): ToolDefinition[] {
  const kernels = r.kernels;
  return [
    ...GENERIC_TOOLS,
    ...createStructuralEditTools(r.edits ?? new StagedEdits()),
    createCodeGraphTool(r.graphs),
    ...(r.questions ? [createAskUserTool(r.questions)] : []),
    ...(r.catalog ? [createToolSearchTool(r.catalog)] : []),
    ...(kernels ? [createEvalTool(kernels)] : []),
    ...(r.panes
      ? createNotebookTools({ port: r.panes, ...(kernels ? { runner: createKernelRunner(kernels) } : {}) })
      : []),
    ...(kernels
      ? [
          createNotebookAcceptOutputsTool(r.panes ? { port: r.panes } : {}),
          createNotebookVerifyTool({
            kernels: kernels.kernels,
            ...(kernels.idleTimeoutMs ? { idleTimeoutMs: kernels.idleTimeoutMs } : {})
          }),
          createKernelStateTool({ kernels: focusedKernels(kernels.kernels), ...(r.panes ? { port: r.panes } : {}) })
        ]
      : []),
    ...(r.lsp
      ? [
          createLspTool(r.lsp.service, r.lsp.docs),
          createLspRenameTool(r.lsp.docs, r.panes ? { port: r.panes } : {}),
          createLspCodeActionTool(r.lsp.docs, r.panes ? { port: r.panes } : {})
        ]
      : []),
    ...(r.debug
      ? [
          createDebugTool({
            sessions: r.debug.sessions,
            ...(r.panes ? { port: r.panes } : {}),
            ...(r.debug.env ? { env: r.debug.env } : {}),
            ...(kernels ? { kernels: kernels.kernels } : {}),
            ...(r.debug.launchProcess ? { launchProcess: r.debug.launchProcess } : {})
          })
        ]
      : []),
    ...(r.plans ? [createSubmitPlanTool(r.plans), createExitPlanModeTool(r.plans)] : []),
    ...(r.workers ? workerTools(r.workers) : []),
    ...(r.reviews
      ? [
          createAddReviewNodeTool(r.reviews.store),
          createApproveReviewNodeTool(r.reviews.store),
          createFinalizeReviewTool(r.reviews.store, r.reviews.axes)
        ]
      : []),
    ...(r.orchestrations ? [createProposeOrchestrationTool(r.orchestrations)] : []),
    ...(r.skills ? [createSkillTool(r.skills)] : [])
  ];
}

/** The five `vibe_*` tools around a worker port (VIBE-1). */
export function workerTools(workers: WorkerPort): ToolDefinition[] {
  return [
    createVibeSpawnTool(workers),
    createVibeSendTool(workers),
    createVibeWaitTool(workers),
    createVibeKillTool(workers),
    createVibeListTool(workers)
  ];
}
