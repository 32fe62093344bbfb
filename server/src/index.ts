/**
 * @cellmate/server — the companion Node server: agent loop, model providers, tool
 * registry, chats; JSON-RPC over a user-only Unix socket. `main.ts` is a thin CLI over
 * {@link startServer}; tests, bench and e2e import from here.
 */
export { startServer, type ServerHandle, type StartServerOptions } from './server.js';
export { SERVER_VERSION } from './base/version.js';
export { CellmateError, type CellmateErrorCode } from './base/errors.js';
export { parseCli, USAGE, type CliOptions } from './config/cli.js';
export { createStderrLogger, silentLogger, type Logger } from './config/logger.js';
export { loadConfigFile, configFilePath, type ConfigFile, type LoadedConfig } from './config/config-file.js';
export { ChatService, type ChatEventEnvelope, type ChatServiceOptions } from './chats/chat-service.js';
export { ChatStore, type ChatStoreOptions } from './chats/chat-store.js';
export { applyChatEvent } from './chats/apply-event.js';
export { INTERRUPTED_NOTICE, type ChatRecord } from './chats/chat-file.js';
export {
  runTurn,
  DEFAULT_MAX_STEPS,
  DEFAULT_STREAM_IDLE_TIMEOUT_MS,
  type TurnInput,
  type TurnResult,
  type TurnSink
} from './agent/run-turn.js';
export { createLanguageModel, type ProviderEnv } from './providers/create-model.js';
export { providerStatuses, resolveApiKey, KEY_ENV_VARS } from './providers/credentials.js';
export { ScriptedLanguageModel, type ScriptedModelOptions } from './providers/scripted.js';
export { EXHAUSTED_TEXT, parseScript, type Script, type ScriptStep } from './providers/scripted-script.js';
export * from './tools/index.js';
export {
  sendRequest,
  sendNotification,
  onRequest,
  onNotification,
  type RequestHandler,
  type RequestHandlers
} from './transport/typed-rpc.js';
export { serveStream, listenOnSocket, type SocketServer } from './transport/socket-server.js';
