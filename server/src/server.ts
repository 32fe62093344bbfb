import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { AuditLog } from './audit/audit-log.js';
import { ChatService } from './chats/chat-service.js';
import { ChatStore } from './chats/chat-store.js';
import { loadConfigFile } from './config/config-file.js';
import { createStderrLogger, type Logger } from './config/logger.js';
import { createHarness } from './tools/harness.js';
import { combineWriteHooks } from './ports/gate-ports.js';
import { CodeGraphs } from './structural/graph/code-graph.js';
import { TouchedNotebooksHook } from './verify/touched-notebooks.js';
import { removeChatOutputs } from './housekeeping/saved-outputs.js';
import { OUTPUTS_DIR } from './workspace/output-shaping.js';
import { SkillLibrary } from './skills/skill-library.js';
import { CustomCommands } from './commands/custom-commands.js';
import { builtinTools } from './tools/builtin-tools.js';
import { WorkerService } from './workers/worker-service.js';
import { WorkerStore } from './workers/worker-store.js';
import { StagedEdits } from './structural/staged-edits.js';
import { DebugSessionManager, describeSession } from './dap/session-manager.js';
import { CheckpointStore } from './checkpoints/checkpoint-store.js';
import { followEndedDebugCards } from './tools/debug/ended-cards.js';
import { PlanFlow } from './flows/plan-flow.js';
import { PlanStore } from './modes/plan/plan-store.js';
import { ReviewFlow } from './flows/review-flow.js';
import { ReviewStore } from './modes/review/review-store.js';
import { createReviewAxes } from './flows/review-axes.js';
import { OrchestrationFlow } from './flows/orchestration-flow.js';
import { OrchestrationStore } from './modes/orchestrate/orchestration-store.js';
import { processLauncher } from './dap/process-adapter.js';
import { PaneHub } from './notebooks/pane-hub.js';
import { ContextService } from './context/context-service.js';
import { InlineCompletionService } from './inline/inline-service.js';
import { bundledServerBins } from './workspace/tool-bins.js';
import { DocumentSync } from './lsp/documents.js';
import { LspService } from './lsp/lsp-service.js';
import { WriteDiagnostics } from './lsp/write-diagnostics.js';
import { createKernelManager } from './kernels/create-kernel-manager.js';
import { McpService } from './mcp/mcp-service.js';
import { listenMcpSocket, type McpSocketEndpoint } from './mcp/serve.js';
import { exposedRegistry } from './mcp/expose.js';
import type { KernelManager } from './kernels/kernel-manager.js';
import type { ToolRegistry } from './gate/registry.js';
import { listenOnSocket, serveStream, type SocketServer } from './transport/socket-server.js';
import type { CompanionServices } from './transport/services.js';

/** Options of {@link startServer}. */
export interface StartServerOptions {
  /** The workspace (Jupyter's root dir); chats live in `<workspace>/.cellmate/chats`. */
  workspace: string;
  /** Listen on this Unix socket. Exactly one of `socketPath` and `stdio` is used. */
  socketPath?: string;
  /** Serve one connection over these streams instead (`--stdio`). */
  stdio?: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream };
  /** Environment for API keys and `CELLMATE_*` settings; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  /** Stream inactivity timeout (default 120 s, or `CELLMATE_STREAM_IDLE_TIMEOUT_MS`). */
  streamIdleTimeoutMs?: number;
  /** Max model steps per turn (default 25, or `CELLMATE_MAX_STEPS`). */
  maxSteps?: number;
  /** Provider retries on transient HTTP errors (default 2). */
  maxRetries?: number;
  /** Custom fetch for providers (tests). */
  fetch?: typeof globalThis.fetch;
  /**
   * Kernels for the `eval` tool; default: private kernels per chat, plus the focused
   * notebook's kernel when `CELLMATE_JUPYTER_URL` is set. `false`: no eval tool (TIER-3).
   */
  kernels?: KernelManager | false;
  /** Eval idle budget (default 5 min, or `CELLMATE_EVAL_IDLE_TIMEOUT_MS`). */
  evalIdleTimeoutMs?: number;
  /** `false`: no background workers and no `vibe_*` tools (also `CELLMATE_WORKERS=off`; VIBE-1). */
  workers?: false;
}

/** A running server. */
export interface ServerHandle {
  /** Real path of the workspace. */
  workspace: string;
  /** The socket path when listening on a socket. */
  socketPath?: string;
  /** Cellmate's MCP server over HTTP (`mcp.sock` beside `socketPath`), when listening on a socket. */
  mcpSocketPath?: string;
  service: ChatService;
  /** The audit log (tests flush it before reading the files). */
  audit: AuditLog;
  /** The tool registry as composed (the catalog bench counts what it declares). */
  registry: ToolRegistry;
  /** The background workers (`vibe_*`), when on. */
  workers?: WorkerService;
  /** The kernels evals use, when any (tests look up a worker's private kernel by its id). */
  kernels?: KernelManager;
  /** Closes the socket/connection, then flushes chat files. Idempotent. */
  dispose(): Promise<void>;
}

/** Starts the companion server: loads chats, then listens (socket) or serves stdio. */
export async function startServer(options: StartServerOptions): Promise<ServerHandle> {
  const logger = options.logger ?? createStderrLogger('cellmate-server');
  const env = options.env ?? process.env;
  const workspace = await realpath(path.resolve(options.workspace));
  if (!(await stat(workspace)).isDirectory()) throw new Error(`The workspace ${workspace} is not a directory.`);
  const store = await ChatStore.open({ directory: path.join(workspace, '.cellmate', 'chats'), logger });
  // The panes serve the notebook port (notebook tools, `@` context, open notebooks an edit changes).
  const panes = new PaneHub();
  // Language servers: started lazily per root, stopped with the companion; the
  // write hook folds the diagnostics a write just introduced into its result (WDIAG-1/2).
  const lsp = new LspService({
    workspace,
    env,
    logger,
    bundledBins: bundledServerBins(env),
    idleMs: positiveIntFromEnv(env, 'CELLMATE_LSP_IDLE_MS', logger),
    diagnosticsWaitMs: positiveIntFromEnv(env, 'CELLMATE_LSP_DIAGNOSTICS_WAIT_MS', logger)
  });
  const lspDocs = new DocumentSync(lsp, panes);
  const writeDiagnostics = new WriteDiagnostics(lspDocs);
  // Staged structural edits: ast_edit stages, resolve and the diff card's buttons resolve (EDIT-1…3).
  const edits = new StagedEdits({ port: panes });
  // What each turn's writes replace, beside the chat journal (undo a turn, rewind to a message).
  const checkpoints = new CheckpointStore({ directory: path.join(workspace, '.cellmate', 'chats', 'checkpoints') });
  // One code graph per workspace, shared by code_graph and the notebooks-a-change-touched line under every write.
  const graphs = new CodeGraphs();
  const kernels =
    options.kernels === false
      ? undefined
      : (options.kernels ??
        createKernelManager({ workspace, env, logger, chatTitle: (id) => store.get(id)?.chat.title }));
  // However the companion ends (a crash included), its private kernels end with it.
  const killKernels = (): void => kernels?.killAllNow();
  process.on('exit', killKernels);
  // eval and notebook_run (closed notebooks) share one kernel path: kernel choice, idle budget, tool() bridge.
  const kernelRun = kernels
    ? {
        kernels,
        registry: () => registry,
        idleTimeoutMs: options.evalIdleTimeoutMs ?? positiveIntFromEnv(env, 'CELLMATE_EVAL_IDLE_TIMEOUT_MS', logger)
      }
    : undefined;
  // The debugger (DBG-1): one session per chat, TTL from CELLMATE_DEBUG_TTL_MS.
  const debugSessions = new DebugSessionManager({
    ttlMs: positiveIntFromEnv(env, 'CELLMATE_DEBUG_TTL_MS', logger),
    stopWaitMs: positiveIntFromEnv(env, 'CELLMATE_DEBUG_STOP_WAIT_MS', logger)
  });
  // Plan mode's artifact and approval gate (MODE-3): plans are durable under .cellmate/plans/.
  const plans = new PlanStore(path.join(workspace, '.cellmate', 'plans'), (m) => logger.warn(m));
  // Agent Skills (SKILL-2/3): the catalog enters each turn's prompt, `skill` reads one on demand.
  const skills = new SkillLibrary({ workspace, env });
  // Background workers (VIBE-1…3): sub-agent runs beside a chat's turn, journaled
  // under .cellmate/workers/, each in a private kernel of its own (keyed by its id) unless it shares.
  const workersOn = options.workers !== false && env.CELLMATE_WORKERS?.trim().toLowerCase() !== 'off';
  const workers = workersOn
    ? new WorkerService({
        workspace,
        env,
        logger,
        store: await WorkerStore.open(path.join(workspace, '.cellmate', 'workers'), logger),
        registry: () => registry,
        ...(kernels ? { kernels } : {}),
        chatMode: (id) => store.get(id)?.chat.mode,
        chatAuto: (id) => store.get(id)?.chat.auto === true,
        publish: (id, event) => service.publish(id, event),
        ...(options.fetch ? { fetch: options.fetch } : {}),
        redact: (t) => harness.redactor.redact(t),
        // What the chat's own turns get: its focus's instructions, the skills, the live state for a summary.
        instructions: (id) => service.instructions(id).block,
        skills,
        kernelState: (chatId, owner, signal) => liveState(chatId, owner, signal)
      })
    : undefined;
  // Review mode (MODE-4): findings durable under .cellmate/reviews/; finalize_review's axes run here, not through a shell.
  const reviews = new ReviewStore(path.join(workspace, '.cellmate', 'reviews'), (m) => logger.warn(m));
  // Orchestrate mode's artifact (MODE-5): proposals are durable under .cellmate/orchestrations/; only the operator approves.
  const orchestrations = new OrchestrationStore(path.join(workspace, '.cellmate', 'orchestrations'), {
    onProblem: (m) => logger.warn(m)
  });
  // Policy, approvals, questions and audit around the registry (HARN-6/7, ASK-3); the
  // registry holds the one tool table's tools for the resources above (TIER-3).
  const harness = createHarness({
    workspace,
    env,
    writeHook: combineWriteHooks(writeDiagnostics, new TouchedNotebooksHook(graphs)),
    checkpoints,
    tools: (ports) =>
      builtinTools({
        ...ports,
        edits,
        graphs,
        panes,
        skills,
        plans,
        orchestrations,
        ...(kernelRun ? { kernels: kernelRun } : {}),
        lsp: { service: lsp, docs: lspDocs },
        debug: { sessions: debugSessions, env, launchProcess: processLauncher({ env }) },
        ...(workers ? { workers } : {}),
        reviews: { store: reviews, axes: createReviewAxes({ registry: () => registry, env, graphs }) }
      }),
    onProblem: (message, error) =>
      logger.warn(
        error === undefined ? message : `${message}: ${error instanceof Error ? error.message : String(error)}`
      )
  });
  harness.redactor.addConfig(await loadConfigFile(env));
  const registry = harness.registry;
  // MCP servers: their tools are deferred, registered when a search or a call first needs them.
  const mcp = new McpService({ workspace, env, logger });
  await mcp.configure();
  if (mcp.hasServers) registry.addToolSource(mcp);
  // `@` mentions and the focused notebook pass the same path gate as `read` (HARN-5/6).
  const context = new ContextService({
    workspace,
    kernels: kernels || undefined,
    port: panes,
    isPathAllowed: (tool, p) => registry.isPathAllowed(tool, p, workspace)
  });
  const callLog = registry.onDidCall((c) =>
    logger.info(`tool ${c.name} by ${c.actor} in chat ${c.chatId}: ${c.status} in ${c.durationMs} ms`)
  );
  /**
   * What the agent must still know after a compaction (CTX-3): the names in the kernel
   * `kernelOwner` uses (a chat's, or a worker's own), the chat's staged edits, its debug session.
   */
  const liveState = async (chatId: string, kernelOwner: string, signal: AbortSignal): Promise<string | undefined> => {
    const staged = edits
      .pending(chatId)
      .map(
        (e) =>
          `- staged edit ${e.id}: ${e.replacements} replacement(s) in ${e.files.map((f) => f.path).join(', ')} (waiting for resolve)`
      );
    const debug = debugSessions.chat(chatId).active;
    const lines = [
      await context.kernelState(kernelOwner, signal),
      staged.length ? `Staged edits:\n${staged.join('\n')}` : undefined,
      debug ? `Open debug ${describeSession(debug.session)}` : undefined
    ].filter((l): l is string => typeof l === 'string');
    return lines.length ? lines.join('\n') : undefined;
  };
  const service = new ChatService({
    workspace,
    store,
    registry,
    logger,
    env,
    maxSteps: options.maxSteps ?? positiveIntFromEnv(env, 'CELLMATE_MAX_STEPS', logger),
    streamIdleTimeoutMs:
      options.streamIdleTimeoutMs ?? positiveIntFromEnv(env, 'CELLMATE_STREAM_IDLE_TIMEOUT_MS', logger),
    maxRetries: options.maxRetries,
    fetch: options.fetch,
    redactor: harness.redactor,
    skills,
    checkpoints,
    notebookPort: panes,
    setupProblems: async () => [...(await harness.policy.problems()), ...(await mcp.problems())],
    ...(kernels ? { turnFocus: kernels } : {}),
    expandContext: (chatId, text, ctx, origin) => context.expand(chatId, text, ctx, origin),
    completeMention: (chatId, prefix, origin) => context.complete(chatId, prefix, origin),
    kernelState: (chatId, signal) => liveState(chatId, chatId, signal),
    // A deleted chat's audit log and saved outputs go with it (its kernels: kernelRetention below).
    onDeleted: async (chatId) => {
      await harness.audit.removeChat(chatId);
      await removeChatOutputs(path.join(workspace, OUTPUTS_DIR), chatId);
      plans.removeChat(chatId);
      // Its workers are killed, their kernels shut down, and the outputs their compactions saved go too.
      for (const id of (await workers?.removeChat(chatId)) ?? [])
        await removeChatOutputs(path.join(workspace, OUTPUTS_DIR), id);
      reviews.removeChat(chatId);
      orchestrations.removeChat(chatId);
      checkpoints.deleteChat(chatId);
    }
  });
  const planFlow = new PlanFlow({ plans, chats: service, logger });
  // A session ending between tool calls (TTL, adapter death, Terminate) marks its latest card ended.
  const debugCards = followEndedDebugCards(debugSessions, service);
  const reviewFlow = new ReviewFlow({ reviews, chats: service, registry: () => registry, workspace, env, logger });
  // Approved orchestrations run as Agent turns; the workers service would pass its `executor` here.
  const orchestrationFlow = new OrchestrationFlow({
    store: orchestrations,
    chats: service,
    logger,
    calls: registry.onDidCall
  });

  harness.bindSink((chatId, event) => service.publish(chatId, event)); // question cards
  // What the transport serves: composed here, once (the chats layer knows no transport).
  // Inline completions (the fast tier) see the names of the asking window's focused notebook kernel.
  const inline = new InlineCompletionService({
    workspace,
    env,
    logger,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    redact: (text) => harness.redactor.redact(text),
    kernelNames: (origin, notebookPath, signal) => context.focusedKernelNames(origin, notebookPath, signal)
  });
  const services: CompanionServices = {
    workspace,
    chats: service,
    inline,
    presence: harness.presence,
    questions: harness.questions,
    audit: harness.audit,
    panes,
    debug: debugSessions,
    plans: planFlow,
    mcp,
    skills,
    commands: new CustomCommands({ workspace, env }),
    reviews: reviewFlow,
    orchestrations: orchestrationFlow,
    // The diff card's Accept / Discard: the model's own `resolve` call, made by the person.
    editCards: {
      resolve: async (chatId, editId, action) => {
        const r = await registry.call(
          'resolve',
          { edit_id: editId, action },
          { workspace, signal: new AbortController().signal, actor: 'user', chatId }
        );
        if (!r.ok) return { ok: false, message: r.output };
        return { ok: true, state: r.metadata?.state === 'discarded' ? 'discarded' : 'accepted', message: r.output };
      }
    },
    // The verify card's "Accept new outputs": the write tool, called by the person.
    verifyCards: {
      accept: async (chatId, runId, notebook) => {
        const r = await registry.call(
          'notebook_accept_outputs',
          { run_id: runId, path: notebook },
          { workspace, signal: new AbortController().signal, actor: 'user', chatId }
        );
        return r.ok ? { ok: true, message: r.output } : { ok: false, message: r.output };
      }
    },
    ...(kernels ? { focus: kernels } : {}),
    // The workers list: read, and Kill as the same vibe_kill the agent calls, made by the person.
    ...(workers
      ? {
          workers: {
            list: (chatId: string) => workers.list(chatId),
            get: (chatId: string, workerId: string) => workers.transcript(chatId, workerId),
            kill: async (chatId: string, workerId: string) => {
              const r = await registry.call(
                'vibe_kill',
                { worker_id: workerId },
                { workspace, signal: new AbortController().signal, actor: 'user', chatId }
              );
              return { ok: r.ok, killed: r.ok && r.metadata?.killed === true, message: r.output };
            }
          }
        }
      : {})
  };
  // A deleted chat's private kernels are stopped.
  const kernelRetention =
    kernels &&
    service.onListChanged(
      (chats) => void kernels.retainChats(new Set([...chats.map((c) => c.id), ...(workers?.kernelOwners() ?? [])]))
    );
  const debugRetention = service.onListChanged(
    (chats) => void debugSessions.retainChats(new Set(chats.map((c) => c.id)))
  );
  let socket: SocketServer | undefined;
  let mcpSocket: McpSocketEndpoint | undefined;
  let closeStdio: (() => void) | undefined;
  // Everything started above, ended in this order whichever way the companion stops (a start
  // that fails, or dispose): listeners first so nothing new arrives, debug sessions before
  // the kernels they debug, workers before the chats and kernels they use, files flushed last.
  const teardown: ReadonlyArray<readonly [what: string, end: () => unknown]> = [
    ['socket', () => socket?.dispose()],
    ['MCP socket', () => mcpSocket?.dispose()],
    ['stdio connection', () => closeStdio?.()],
    ['kernel retention', () => kernelRetention?.dispose()],
    ['debug retention', () => debugRetention.dispose()],
    ['debug sessions', () => debugSessions.dispose()],
    ['debug cards', () => debugCards.dispose()],
    ['plan flow', () => planFlow.dispose()],
    ['workers', () => workers?.dispose()], // running workers end as interrupted
    ['review flow', () => reviewFlow.dispose()],
    ['orchestration flow', () => orchestrationFlow.dispose()],
    ['chats', () => service.dispose()],
    ['plans', () => plans.dispose()],
    ['reviews', () => reviews.dispose()],
    ['orchestrations', () => orchestrations.dispose()],
    [
      'chat file stats',
      () => {
        const { bytesWritten, records, compactions } = store.stats;
        logger.info(`chat files: written_bytes=${bytesWritten} records=${records} compactions=${compactions}`);
      }
    ],
    ['kernels', () => kernels?.dispose()],
    ['write diagnostics', () => writeDiagnostics.dispose()],
    ['language servers', () => lsp.dispose()],
    ['MCP servers', () => mcp.dispose()],
    ['exit hook', () => process.off('exit', killKernels)],
    ['audit log', () => harness.audit.flush()],
    ['call log', () => callLog.dispose()],
    ['staged edits', () => edits.dispose()],
    ['harness', () => harness.dispose()]
  ];
  let disposing: Promise<void> | undefined;
  const dispose = (): Promise<void> => (disposing ??= runTeardown(teardown, logger));
  try {
    if (options.socketPath) {
      socket = await listenOnSocket(options.socketPath, services, logger);
      // The stateless tools over MCP, for the Jupyter route /cellmate/mcp to relay to (no TCP port).
      mcpSocket = await listenMcpSocket(
        path.join(path.dirname(socket.socketPath), 'mcp.sock'),
        exposedRegistry(registry, harness),
        workspace,
        logger
      );
    } else if (options.stdio) {
      const connection = serveStream(options.stdio.input, options.stdio.output, services, logger);
      closeStdio = () => connection.dispose();
    } else {
      throw new Error('startServer needs socketPath or stdio.');
    }
  } catch (error) {
    await dispose().catch(() => undefined); // the start's own error is the one to report
    throw error;
  }

  return {
    workspace,
    socketPath: socket?.socketPath,
    ...(mcpSocket ? { mcpSocketPath: mcpSocket.socketPath } : {}),
    service,
    audit: harness.audit,
    registry,
    ...(workers ? { workers } : {}),
    ...(kernels ? { kernels } : {}),
    dispose
  };
}

/** Runs each step once, in order; a step that fails is logged and the rest still run. Rejects with the first failure. */
async function runTeardown(
  steps: ReadonlyArray<readonly [what: string, end: () => unknown]>,
  logger: Logger
): Promise<void> {
  let failure: { error: unknown } | undefined;
  for (const [what, end] of steps) {
    try {
      await end();
    } catch (error) {
      logger.warn(`shutdown: ${what} failed: ${error instanceof Error ? error.message : String(error)}`);
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
}

function positiveIntFromEnv(env: NodeJS.ProcessEnv, name: string, logger: Logger): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (Number.isInteger(value) && value > 0) return value;
  logger.warn(`ignoring ${name}=${JSON.stringify(raw)}: not a positive integer`);
  return undefined;
}
