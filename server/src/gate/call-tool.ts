/**
 * `call_tool`, the stable dispatcher of the deferred catalog (HARN-11).
 *
 * OpenAI, Anthropic and OpenAI-compatible servers accept a call only to a tool the request
 * declares, and declaring each tool as it is loaded would change the request's tools —
 * the cached prefix — every time. So the declared set stays fixed: the model loads a
 * schema with `tool_search` (a tool result, at the end of the context) and calls that tool
 * as `call_tool {name, arguments}`. The agent loop unwraps the call here and sends it
 * through the registry under the real tool's name (validated against that tool's own
 * schema, then policy, approval, audit, shaping; the card shows the real tool). The
 * history keeps the `call_tool` call, so every request stays valid for the provider.
 *
 * Which tools are loaded is derived from the chat's history (the `tool_search` results
 * in it), so it lasts across turns and restarts, and a retried turn forgets its loads.
 * Not a registry tool: nothing runs "call_tool" itself.
 */
import type { ModelMessage } from 'ai';
import { TOOL_DESCRIPTIONS } from './descriptions.generated.js';
import type { ToolDeclaration } from './declaration.js';

/** The dispatcher's name as declared to the model. */
export const CALL_TOOL = 'call_tool';

/** The line of a `tool_search` result that names what it loaded (parsed back from history). */
export const LOADED_PREFIX = 'Loaded tools: ';

/** The dispatcher's declaration: the same object every step (a stable prefix). */
export const CALL_TOOL_DECLARATION: ToolDeclaration = Object.freeze({
  name: CALL_TOOL,
  description: `${TOOL_DESCRIPTIONS.call_tool.trim()}\n\nExample: call_tool({"name":"grep","arguments":{"pattern":"TODO"}})`,
  parameters: {
    type: 'object',
    properties: {
      name: { type: 'string', description: 'A loaded tool.' },
      arguments: { type: 'object', description: 'Its arguments, per its schema.', additionalProperties: true }
    },
    required: ['name', 'arguments'],
    additionalProperties: false
  }
});

/** What a model's tool call resolves to before it reaches the registry. */
export type DispatchTarget =
  { kind: 'tool'; name: string; args: unknown; via?: typeof CALL_TOOL } | { kind: 'invalid'; message: string };

/**
 * The real tool a model call stands for: itself, or for `call_tool` the tool it names
 * (which must be loaded: `isLoaded`). A malformed or premature `call_tool` gives a
 * message telling the model how to fix it.
 */
export function dispatchTarget(toolName: string, input: unknown, isLoaded: (name: string) => boolean): DispatchTarget {
  if (toolName !== CALL_TOOL) return { kind: 'tool', name: toolName, args: input };
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { kind: 'invalid', message: 'call_tool: the input must be an object {"name": "<tool>", "arguments": {…}}.' };
  }
  const { name, arguments: args, ...extra } = input as Record<string, unknown>;
  if (typeof name !== 'string' || name.trim() === '') {
    return {
      kind: 'invalid',
      message:
        'call_tool: `name` must be the name of a tool tool_search loaded, e.g. {"name": "grep", "arguments": {"pattern": "x"}}.'
    };
  }
  const extraKeys = Object.keys(extra);
  if (extraKeys.length > 0) {
    return {
      kind: 'invalid',
      message: `call_tool: unknown key ${extraKeys.map((k) => JSON.stringify(k)).join(', ')}; put the tool's arguments inside "arguments".`
    };
  }
  if (name === CALL_TOOL) return { kind: 'invalid', message: 'call_tool cannot call itself; name the tool to run.' };
  if (!isLoaded(name)) {
    return {
      kind: 'invalid',
      message: `call_tool: ${name} is not loaded in this chat. Call tool_search {"query": "${name}"} first, then call_tool with arguments matching the schema it returns.`
    };
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return {
      kind: 'invalid',
      message: `call_tool: \`arguments\` must be an object with ${name}'s arguments (as in the schema tool_search returned).`
    };
  }
  return { kind: 'tool', name, args, via: CALL_TOOL };
}

/** Tool names each `tool_search` result of the history loaded (in order, without repeats). */
export function loadedTools(messages: readonly ModelMessage[]): Set<string> {
  const loaded = new Set<string>();
  for (const message of messages) {
    if (message.role !== 'tool' || !Array.isArray(message.content)) continue;
    for (const part of message.content) {
      if (part.type !== 'tool-result' || part.toolName !== 'tool_search' || part.output.type !== 'text') continue;
      for (const name of parseLoaded(part.output.value)) loaded.add(name);
    }
  }
  return loaded;
}

/** The names on a `tool_search` result's {@link LOADED_PREFIX} line. */
export function parseLoaded(output: string): string[] {
  const line = output.split('\n').find((l) => l.startsWith(LOADED_PREFIX));
  if (!line) return [];
  return line
    .slice(LOADED_PREFIX.length)
    .replace(/\.$/, '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => /^[\w.-]+$/.test(n));
}
