/**
 * Typed DAP request/response maps (from `@vscode/debugprotocol`) and the one channel
 * interface every adapter speaks through (DBG-3): a stdio/TCP adapter process
 * (`dap-client.ts`, on the shared framing) or the notebook kernel's own debugger
 * (`kernel-channel.ts`, `debug_request` on the control channel). The debug session above
 * (`debug-session.ts`) knows only {@link DapChannel}.
 */
import type { DebugProtocol as P } from '@vscode/debugprotocol';
import type { Event } from 'vscode-jsonrpc/node.js';

export type { DebugProtocol } from '@vscode/debugprotocol';

/** ipykernel's extra `debugInfo` reply body (jupyter_client messaging.rst, "Debug request"). */
export interface KernelDebugInfo {
  isStarted: boolean;
  hashMethod: string;
  hashSeed: number;
  tmpFilePrefix: string;
  tmpFileSuffix: string;
  breakpoints: Array<{ source: string; breakpoints: P.SourceBreakpoint[] }>;
  stoppedThreads: number[];
  richRendering?: boolean;
  exceptionPaths?: string[];
}

/** Arguments of each DAP request the session sends, keyed by command. */
export interface DapRequests {
  initialize: P.InitializeRequestArguments;
  launch: P.LaunchRequestArguments & Record<string, unknown>;
  attach: P.AttachRequestArguments & Record<string, unknown>;
  configurationDone: P.ConfigurationDoneArguments | undefined;
  setBreakpoints: P.SetBreakpointsArguments;
  setExceptionBreakpoints: P.SetExceptionBreakpointsArguments;
  continue: P.ContinueArguments;
  next: P.NextArguments;
  stepIn: P.StepInArguments;
  stepOut: P.StepOutArguments;
  pause: P.PauseArguments;
  threads: undefined;
  stackTrace: P.StackTraceArguments;
  scopes: P.ScopesArguments;
  variables: P.VariablesArguments;
  evaluate: P.EvaluateArguments;
  exceptionInfo: P.ExceptionInfoArguments;
  disconnect: P.DisconnectArguments;
  terminate: P.TerminateArguments;
  // ipykernel's own commands
  debugInfo: undefined;
  dumpCell: { code: string };
  richInspectVariables: { variableName: string; frameId?: number };
}

/** The response body of each request in {@link DapRequests}. */
export interface DapResponses {
  initialize: P.Capabilities | undefined;
  launch: undefined;
  attach: undefined;
  configurationDone: undefined;
  setBreakpoints: P.SetBreakpointsResponse['body'];
  setExceptionBreakpoints: P.SetExceptionBreakpointsResponse['body'] | undefined;
  continue: P.ContinueResponse['body'] | undefined;
  next: undefined;
  stepIn: undefined;
  stepOut: undefined;
  pause: undefined;
  threads: P.ThreadsResponse['body'];
  stackTrace: P.StackTraceResponse['body'];
  scopes: P.ScopesResponse['body'];
  variables: P.VariablesResponse['body'];
  evaluate: P.EvaluateResponse['body'];
  exceptionInfo: P.ExceptionInfoResponse['body'];
  disconnect: undefined;
  terminate: undefined;
  debugInfo: KernelDebugInfo;
  dumpCell: { sourcePath: string };
  richInspectVariables: { data: Record<string, unknown>; metadata: Record<string, unknown> };
}

export type DapCommand = keyof DapRequests;

/** The adapter answered `success: false`; `message` is the adapter's own text. */
export class DapRequestError extends Error {
  constructor(
    readonly command: string,
    message: string,
    readonly code: 'failed' | 'closed' | 'timeout' = 'failed',
    options?: { cause?: unknown }
  ) {
    super(message, options);
    this.name = 'DapRequestError';
  }
}

/** One DAP conversation with one adapter (process, socket or kernel). */
export interface DapChannel {
  /** Sends a request; resolves with the response body, rejects with {@link DapRequestError}. */
  request<K extends DapCommand>(
    command: K,
    args: DapRequests[K],
    opts?: { timeoutMs?: number }
  ): Promise<DapResponses[K]>;
  /** Every event the adapter sends (`stopped`, `output`, `terminated`, …). */
  readonly onEvent: Event<P.Event>;
  /** The adapter went away (process exit, kernel death); pending requests have rejected. */
  readonly onClose: Event<Error>;
  dispose(): void;
}
