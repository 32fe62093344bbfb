import type { CheckpointPort } from '../workspace/write-capture.js';
import type { ChatEvent } from '@cellmate/protocol';
import { AuditLog, auditLimitsFromEnv } from '../audit/audit-log.js';
import { PolicyStore } from '../policy/policy-store.js';
import type { CapabilityProfile } from '../policy/profile.js';
import { Presence } from '../questions/presence.js';
import { QuestionBroker } from '../questions/question-broker.js';
import { Redactor } from '../security/redaction.js';
import type { ToolDefinition } from '../gate/define-tool.js';
import type { WriteHook } from '../ports/gate-ports.js';
import { ToolRegistry } from '../gate/registry.js';
import { createToolSearchTool } from './tool_search/tool_search.js';
import { isWorkspaceTrusted } from '../security/workspace-trust.js';

/** The live clients around the registry that the server wires and the transport reaches. */
export interface HarnessServices {
  presence: Presence;
  questions: QuestionBroker;
  audit: AuditLog;
  policy: PolicyStore;
  registry: ToolRegistry;
  /** Known secret values, hidden in every tool result and audit line. */
  redactor: Redactor;
  /** Where question cards are published; set once the chat service exists. */
  bindSink(publish: (chatId: string, event: ChatEvent) => void): void;
  dispose(): void;
}

export interface HarnessOptions {
  workspace: string;
  env?: NodeJS.ProcessEnv;
  /**
   * The tools (`builtinTools` for the caller's resources), given the question port and the
   * registry they go into (so `ask_user` registers only with one, ASK-3, and `tool_search`
   * indexes this registry, HARN-11).
   */
  tools: (ports: { questions: QuestionBroker; catalog: ToolRegistry }) => ToolDefinition[];
  profile?: CapabilityProfile;
  writeHook?: WriteHook;
  /** Keeps what each turn's writes replace (checkpoints and rewind). */
  checkpoints?: CheckpointPort;
  onProblem?: (message: string, error?: unknown) => void;
}

/** Builds presence, question broker, audit log, policy store and the registry wired to them. */
export function createHarness(options: HarnessOptions): HarnessServices {
  const env = options.env ?? process.env;
  let publish: ((chatId: string, event: ChatEvent) => void) | undefined;
  const presence = new Presence();
  const questions = new QuestionBroker({
    sink: { publish: (chatId, event) => publish?.(chatId, event) },
    presence,
    questionTimeoutMs: positive(env.CELLMATE_QUESTION_TIMEOUT_MS),
    approvalTimeoutMs: positive(env.CELLMATE_APPROVAL_TIMEOUT_MS)
  });
  // The companion's own environment and the one it was given (tests pass their own).
  const redactor = new Redactor(env, process.env);
  const audit = new AuditLog(
    options.workspace,
    (e) => options.onProblem?.('could not write the audit log', e),
    auditLimitsFromEnv(env),
    redactor
  );
  const policy = new PolicyStore({
    workspace: options.workspace,
    env,
    onProblem: (file, m) => options.onProblem?.(`ignoring the policy file ${file}: ${m}`)
  });
  const registry = new ToolRegistry([], {
    profile: options.profile,
    policy,
    approvals: questions,
    audit,
    writeHook: options.writeHook,
    redactor,
    toolSearch: createToolSearchTool,
    autoReview: {
      timeoutMs: positive(env.CELLMATE_SIDECAR_TIMEOUT_MS),
      isWorkspaceTrusted: (workspace) => isWorkspaceTrusted(workspace, env)
    },
    ...(options.checkpoints ? { checkpoints: options.checkpoints } : {})
  });
  for (const tool of options.tools({ questions, catalog: registry })) registry.register(tool);
  return {
    presence,
    questions,
    audit,
    policy,
    registry,
    redactor,
    bindSink(fn) {
      publish = fn;
    },
    dispose() {
      presence.dispose();
      registry.dispose();
    }
  };
}

function positive(raw: string | undefined): number | undefined {
  const n = Number(raw);
  return raw && Number.isInteger(n) && n > 0 ? n : undefined;
}
