/**
 * The AI SDK (`ai`), loaded on a turn's first model step rather than at startup.
 *
 * `ai` and its dependencies (gateway, OpenTelemetry, provider utilities) are the largest
 * part of the companion's module graph, and `cellmate/hello`, chat listing, `@` completion
 * and every other request before the first turn need none of it. Importing it here, once,
 * keeps the companion's cold start and idle memory down (`npm run bench --
 * startup`); the first turn pays the load once and `import()` caches it for the rest.
 */
type AiModule = typeof import('ai');

let loading: Promise<AiModule> | undefined;

/** The `ai` module, imported on first use. */
export function loadAiSdk(): Promise<AiModule> {
  loading ??= import('ai');
  return loading;
}
