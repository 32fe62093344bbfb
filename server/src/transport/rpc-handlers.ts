import {
  DEFAULT_CHAT_PAGE,
  ErrorCodes,
  PROTOCOL_VERSION,
  type NotificationMethod,
  type Notifications,
  type RequestMethod
} from '@cellmate/protocol';
import {
  ResponseError,
  ErrorCodes as JsonRpcErrorCodes,
  type Disposable,
  type MessageConnection
} from 'vscode-jsonrpc/node.js';
import type { Logger } from '../config/logger.js';
import { CellmateError } from '../base/errors.js';
import { QuestionNotPendingError } from '../questions/question-broker.js';
import { PlanNotPendingError } from '../modes/plan/plan-store.js';
import { ToolInputError } from '../base/tool-errors.js';
import { ReviewScopeError } from '../modes/review/review-scope.js';
import { OrchestrationNotPendingError } from '../modes/orchestrate/orchestration-store.js';
import { SERVER_VERSION } from '../base/version.js';
import { checkParams } from './params.js';
import { paneSessionsOf } from './pane-sessions.js';
import type { CompanionServices } from './services.js';
import { onRequest, sendNotification, type RequestHandlers } from './typed-rpc.js';

/** Sends a notification to the connection the handlers serve (only that one). */
export type Notify = <K extends NotificationMethod>(method: K, params: Notifications[K]) => void;

/**
 * The request handlers for one connection, built on the companion's services. `origin`
 * names the connection (an opaque key): its `chat/context` focus is its own, and turns it
 * starts use it.
 */
export function createRequestHandlers(
  services: CompanionServices,
  onInteractive: () => void = () => {},
  origin = nextOrigin(),
  notify: Notify = () => {}
): RequestHandlers {
  const { chats: service, workspace, presence, questions, audit } = services;
  // Whether this connection is a person's pane (said `interactive: true` in hello), and which
  // pane the server named it (`pane-sessions.ts`): only the pane that owns a chat may answer
  // its cards — approvals, questions, plans, orchestrations, Review findings, diff cards.
  let interactive = false;
  let paneId: string | undefined;
  const panes = paneSessionsOf(services);
  const personOnly = (what: string, chatId: string): void => {
    if (!interactive)
      throw new ResponseError(
        JsonRpcErrorCodes.InvalidRequest,
        `Only a person's Cellmate pane can answer ${what}: this connection did not say \`interactive: true\` in cellmate/hello.`
      );
    if (!panes.mayAnswer(chatId, paneId)) {
      throw new ResponseError(
        JsonRpcErrorCodes.InvalidRequest,
        `Only the Cellmate pane that started this chat's work can answer ${what}: answer it in that window (or send a message from this one first).`
      );
    }
  };
  /** This connection's pane started work in `chatId` (its cards are this pane's to answer). */
  const claim = <T>(chatId: string, result: T): T => {
    panes.claim(chatId, paneId);
    return result;
  };
  return {
    'cellmate/hello': async (params) => {
      if (params.protocolVersion !== PROTOCOL_VERSION) {
        throw new CellmateError(
          ErrorCodes.ProtocolMismatch,
          `Protocol mismatch: the page speaks version ${params.protocolVersion}, the companion server ${PROTOCOL_VERSION}. Reload the page; if that does not help, restart JupyterLab after updating Cellmate.`
        );
      }
      let pane: { paneSecret: string } | Record<string, never> = {};
      if (params.interactive === true) {
        interactive = true;
        const opened = panes.open(params.paneSecret);
        paneId = opened.paneId;
        pane = { paneSecret: opened.secret };
        onInteractive();
      }
      const people = presence ? { interactiveConnections: presence.count } : {};
      return {
        protocolVersion: PROTOCOL_VERSION,
        serverVersion: SERVER_VERSION,
        workspace,
        providers: await service.providers(),
        ...people,
        ...pane
      };
    },
    'config/providers': () => service.providers(),
    'chat/list': () => service.list(),
    'chat/create': (params) => {
      const chat = service.create(params.title);
      return claim(chat.id, chat);
    },
    'chat/get': (params) => service.get(params.chatId, params.limit ?? DEFAULT_CHAT_PAGE),
    'chat/items': (params) => service.olderItems(params.chatId, params.before, params.limit ?? DEFAULT_CHAT_PAGE),
    'chat/rename': (params) => service.rename(params.chatId, params.title),
    'chat/set-mode': (params) => service.setMode(params.chatId, params.mode),
    'chat/set-auto': (params) => service.setAuto(params.chatId, params.auto),
    'chat/delete': async (params) => ({ deleted: await service.delete(params.chatId) }),
    'chat/set-model': (params) => service.setModel(params.chatId, params.model, params.settings),
    'models/list': async (params) => ({ models: await service.models(params.model) }),
    'inline/complete': async (params, token) => {
      if (!services.inline)
        throw new ResponseError(JsonRpcErrorCodes.InvalidRequest, 'This server has no inline completions.');
      // The pane cancels the request when the person types on: the abort reaches the model's HTTP request.
      const controller = new AbortController();
      const listener = token.onCancellationRequested(() => controller.abort());
      try {
        return await services.inline.complete(params, origin, controller.signal, (text) =>
          notify('inline/delta', { requestId: params.requestId, text })
        );
      } finally {
        listener.dispose();
      }
    },
    'chat/send': async (params) =>
      claim(
        params.chatId,
        await service.send({
          chatId: params.chatId,
          text: params.text,
          settings: params.model,
          context: params.context,
          origin
        })
      ),
    'context/complete': async (params) => ({
      items: await service.completeMention(params.chatId, params.prefix, origin)
    }),
    'chat/retry': async (params) =>
      claim(params.chatId, await service.retry({ chatId: params.chatId, settings: params.model, origin })),
    'chat/edit': async (params) =>
      claim(
        params.chatId,
        await service.retry({ chatId: params.chatId, settings: params.model, text: params.text, origin })
      ),
    'chat/abort': async (params) => ({ aborted: await service.abort(params.chatId) }),
    'chat/compact': (params) => service.compact(params.chatId, params.model),
    'chat/checkpoints': (params) => service.checkpoints(params.chatId),
    'chat/rewind-preview': (params) => service.rewindPreview(params),
    'chat/rewind': (params) => {
      personOnly('a rewind', params.chatId);
      return service.rewind(params);
    },
    'chat/export': (params) => service.exportChat(params.chatId),
    'instructions/list': (params) => ({ files: service.instructions(params.chatId, params.notebookPath).files }),
    'plan/resolve': (params) => {
      if (!services.plans)
        throw new ResponseError(JsonRpcErrorCodes.InvalidRequest, 'This server has no plan approvals.');
      personOnly('a plan', params.chatId);
      try {
        return claim(
          params.chatId,
          services.plans.answer(params.chatId, params.planId, params.decision, params.model, params.reason, origin)
        );
      } catch (error) {
        if (error instanceof PlanNotPendingError)
          throw new ResponseError(JsonRpcErrorCodes.InvalidRequest, error.message);
        throw error;
      }
    },
    'orchestration/resolve': (params) => {
      if (!services.orchestrations)
        throw new ResponseError(JsonRpcErrorCodes.InvalidRequest, 'This server has no orchestration approvals.');
      personOnly('an orchestration', params.chatId);
      try {
        return claim(
          params.chatId,
          services.orchestrations.answer(
            params.chatId,
            params.orchestrationId,
            params.decision,
            params.model,
            params.reason,
            origin
          )
        );
      } catch (error) {
        if (error instanceof OrchestrationNotPendingError)
          throw new ResponseError(JsonRpcErrorCodes.InvalidRequest, error.message);
        throw error;
      }
    },
    'mcp/servers': async () => (await services.mcp?.status()) ?? [],
    'mcp/config-problems': async () => (await services.mcp?.problems()) ?? [],
    'skills/list': () => services.skills?.list() ?? [],
    'commands/list': () =>
      (services.commands?.list() ?? []).map(({ name, description, source }) => ({ name, description, source })),
    'commands/expand': (params) => {
      try {
        return { text: services.commands?.expand(params.name, params.arguments) ?? '' };
      } catch (error) {
        if (error instanceof RangeError) throw new ResponseError(JsonRpcErrorCodes.InvalidParams, error.message);
        throw error;
      }
    },
    'skills/set-enabled': (params) => {
      if (!services.skills) throw new ResponseError(JsonRpcErrorCodes.InvalidRequest, 'This server has no skills.');
      // A skill the person turned off stays off until the person turns it on: no script, headless
      // client or cell of a running turn flips it (`pane-sessions.ts`).
      const may = panes.maySetForPerson(paneId, service.runningChats());
      if (may === 'no-pane')
        throw new ResponseError(
          JsonRpcErrorCodes.InvalidRequest,
          "Only a person's Cellmate pane can turn a skill on or off: this connection is not a pane the server named (cellmate/hello with `interactive: true`)."
        );
      if (may !== 'ok')
        throw new ResponseError(
          JsonRpcErrorCodes.InvalidRequest,
          `Skills cannot be turned on or off from this connection while a turn started from another Cellmate pane is running (chat ${may.runningIn}): use that pane, or wait until the turn ends.`
        );
      try {
        return services.skills.setEnabled(params.folder, params.enabled);
      } catch (error) {
        if (error instanceof RangeError) throw new ResponseError(JsonRpcErrorCodes.InvalidParams, error.message);
        throw error;
      }
    },
    'worker/list': (params) => {
      service.get(params.chatId, 1); // ChatNotFound first
      return services.workers?.list(params.chatId) ?? [];
    },
    'worker/get': (params) => {
      service.get(params.chatId, 1);
      if (!services.workers) throw new ResponseError(JsonRpcErrorCodes.InvalidRequest, 'This server runs no workers.');
      try {
        return services.workers.get(params.chatId, params.workerId);
      } catch (error) {
        if (error instanceof ToolInputError) throw new ResponseError(JsonRpcErrorCodes.InvalidParams, error.message);
        throw error;
      }
    },
    'worker/kill': async (params) => {
      service.get(params.chatId, 1);
      if (!services.workers) throw new ResponseError(JsonRpcErrorCodes.InvalidRequest, 'This server runs no workers.');
      const outcome = await services.workers.kill(params.chatId, params.workerId);
      if (!outcome.ok) throw new ResponseError(JsonRpcErrorCodes.InvalidParams, outcome.message);
      return { killed: outcome.killed, message: outcome.message };
    },
    'review/start': async (params) => {
      if (!services.reviews) throw new ResponseError(JsonRpcErrorCodes.InvalidRequest, 'This server runs no reviews.');
      try {
        const started = await services.reviews.start(params.scope, params.model, origin);
        return claim(started.chatId, started);
      } catch (error) {
        if (error instanceof ReviewScopeError) throw new ResponseError(JsonRpcErrorCodes.InvalidRequest, error.message);
        throw error;
      }
    },
    'review/approve': async (params) => {
      if (!services.reviews) throw new ResponseError(JsonRpcErrorCodes.InvalidRequest, 'This server runs no reviews.');
      personOnly('a Review finding', params.chatId);
      const outcome = await services.reviews.approve(params.chatId, params.nodeId);
      // A refusal (the person wrote it, an unknown finding) is the tool's own message, for the card to show.
      if (!outcome.ok) throw new ResponseError(JsonRpcErrorCodes.InvalidRequest, outcome.message);
      return { state: 'consensusReady', message: outcome.message };
    },
    'verify/accept': async (params) => {
      service.get(params.chatId); // ChatNotFound first
      if (!services.verifyCards)
        throw new ResponseError(JsonRpcErrorCodes.InvalidRequest, 'This server verifies no notebooks.');
      personOnly('a verify card', params.chatId);
      const outcome = await services.verifyCards.accept(params.chatId, params.runId, params.path);
      if (!outcome.ok) throw new ResponseError(JsonRpcErrorCodes.InvalidRequest, outcome.message);
      return { state: 'accepted' as const, message: outcome.message };
    },
    'debug/terminate': async (params) => ({
      terminated: (await services.debug?.terminate(params.chatId, params.sessionId)) !== undefined
    }),
    'chat/context': (params) => {
      services.focus?.setContext(origin, params.chatId, params.kernel);
      return { ok: true as const };
    },
    'chat/answer': (params) => {
      service.get(params.chatId); // ChatNotFound first
      if (!questions) throw new CellmateError(ErrorCodes.QuestionNotPending, 'This server asks no questions.');
      personOnly('a question or approval card', params.chatId);
      try {
        return { state: questions.answer(params.chatId, params.questionId, params.answer) };
      } catch (error) {
        if (error instanceof QuestionNotPendingError)
          throw new CellmateError(ErrorCodes.QuestionNotPending, error.message);
        if (error instanceof RangeError)
          throw new ResponseError(JsonRpcErrorCodes.InvalidParams, `Invalid answer: ${error.message}`);
        throw error;
      }
    },
    'edit/resolve': async (params) => {
      service.get(params.chatId); // ChatNotFound first
      if (!services.editCards)
        throw new ResponseError(JsonRpcErrorCodes.InvalidRequest, 'This server stages no edits.');
      personOnly('a diff card', params.chatId);
      const outcome = await services.editCards.resolve(params.chatId, params.editId, params.action);
      // A refusal (expired, stale file, denied path) is the tool's own message, for the card to show.
      if (!outcome.ok) throw new ResponseError(JsonRpcErrorCodes.InvalidRequest, outcome.message);
      return { state: outcome.state, message: outcome.message };
    },
    'audit/metrics': async (params) =>
      audit ? audit.metrics(params.chatId) : { chatId: params.chatId ?? null, rows: [] }
  };
}

/**
 * Serves one JSON-RPC connection: every protocol request, plus `chat/event` and
 * `chat/listChanged` notifications for all chats. Disposing detaches (turns keep running).
 */
export function attachConnection(
  connection: MessageConnection,
  services: CompanionServices,
  logger: Logger
): Disposable {
  const service = services.chats;
  // A connection that says `interactive: true` in hello is a person (questions may ask it).
  let presence: Disposable | undefined;
  let pane: Disposable | undefined;
  const origin = nextOrigin();
  const handlers = createRequestHandlers(
    services,
    () => {
      presence ??= services.presence?.attach();
      // A person's pane serves the notebook port (server → pane requests).
      pane ??= services.panes?.attach(connection);
    },
    origin,
    (method, params) => void sendNotification(connection, method, params).catch(() => undefined)
  );
  for (const method of Object.keys(handlers) as RequestMethod[]) {
    register(connection, method, handlers, logger);
  }
  const subscriptions = [
    service.onEvent((envelope) => void sendNotification(connection, 'chat/event', envelope).catch(() => undefined)),
    service.onListChanged(
      (chats) => void sendNotification(connection, 'chat/listChanged', { chats }).catch(() => undefined)
    )
  ];
  return {
    dispose: () => {
      subscriptions.forEach((s) => s.dispose());
      presence?.dispose();
      pane?.dispose();
      services.focus?.connectionClosed(origin);
    }
  };
}

let originCount = 0;
/** A key for one connection (kernel focus is per connection). */
function nextOrigin(): string {
  return `connection-${++originCount}`;
}

function register<K extends RequestMethod>(
  connection: MessageConnection,
  method: K,
  handlers: RequestHandlers,
  logger: Logger
): void {
  const handler = handlers[method];
  onRequest(connection, method, async (params, token) => {
    try {
      return await handler(checkParams(method, params), token);
    } catch (error) {
      throw toResponseError(method, error, logger);
    }
  });
}

/** Maps thrown errors onto JSON-RPC errors: protocol codes pass through, the rest is internal. */
export function toResponseError(method: string, error: unknown, logger: Logger): ResponseError<unknown> {
  if (error instanceof ResponseError) return error;
  if (error instanceof CellmateError) return new ResponseError(error.code, error.message);
  logger.error(`${method} failed`, error);
  const message = error instanceof Error ? error.message : String(error);
  return new ResponseError(
    JsonRpcErrorCodes.InternalError,
    `${method} failed inside the companion server: ${message}. See the server log.`
  );
}
