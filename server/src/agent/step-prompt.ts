/**
 * A step's prompt without re-validating the whole chat history on every step.
 *
 * The AI SDK's `streamText` checks its `messages` against the `ModelMessage[]` zod schema on
 * every call. The agent called it once per step with the whole history, so each step paid for every
 * message of the chat again — O(history) per step, 10–40 ms at 50 eval turns (a union
 * schema tried branch by branch, building error objects for each wrong branch). Here each
 * message is validated once, when the agent first sees that object (the history's messages
 * are the same objects from step to step and turn to turn; a chat re-read from its journal
 * is checked once again), and the step's prompt is converted by the AI SDK's own converter
 * (`convertToLanguageModelPrompt`, its `ai/internal` export) and handed to the provider's
 * `doStream` by `stream-step.ts`.
 */
import type { LanguageModelV3, LanguageModelV3Prompt } from '@ai-sdk/provider';
import type { LanguageModel, ModelMessage } from 'ai';
import { loadAiSdk } from './ai-sdk.js';

/** Messages already checked against the schema (by identity; never mutated afterwards). */
const checked = new WeakSet<object>();

/** The history does not match the AI SDK's `ModelMessage` schema. */
export class InvalidHistoryError extends Error {
  constructor(
    readonly index: number,
    detail: string
  ) {
    super(
      `The chat history is malformed at message ${index + 1}: ${detail}. Start a new chat, or retry the last turn.`
    );
    this.name = 'InvalidHistoryError';
  }
}

/**
 * Checks each message not checked before (O(new messages) per step).
 * @throws InvalidHistoryError naming the first bad message
 */
type MessageSchema = {
  safeParse(m: unknown): { success: true } | { success: false; error: { issues: Array<{ message: string }> } };
};

/** Each role's own schema, from the AI SDK (looked up once). */
let schemasByRole: Promise<Record<string, MessageSchema>> | undefined;

export async function checkHistory(messages: readonly ModelMessage[]): Promise<void> {
  // The role's own schema, not the ModelMessage union: the union tries each role's branch in
  // turn and builds issue objects for every branch that fails, about five times the cost
  // (~140 µs against ~27 µs per message, measured; an eval turn adds three messages).
  schemasByRole ??= loadAiSdk().then((ai) => ({
    system: ai.systemModelMessageSchema,
    user: ai.userModelMessageSchema,
    assistant: ai.assistantModelMessageSchema,
    tool: ai.toolModelMessageSchema
  }));
  const byRole = await schemasByRole;
  messages.forEach((message, index) => {
    if (typeof message !== 'object' || message === null) throw new InvalidHistoryError(index, 'not a model message');
    if (checked.has(message)) return;
    const role = (message as { role?: unknown }).role;
    const schema = typeof role === 'string' && Object.hasOwn(byRole, role) ? byRole[role]! : undefined;
    if (!schema)
      throw new InvalidHistoryError(
        index,
        `unknown role ${JSON.stringify(role)} (expected system, user, assistant or tool)`
      );
    const result = schema.safeParse(message);
    if (!result.success) throw new InvalidHistoryError(index, result.error.issues[0]?.message ?? 'not a model message');
    checked.add(message);
  });
}

/** A model's last converted prompt (one model object serves one turn): its source messages and their conversion, without the system message. */
const lastConversion = new WeakMap<object, { messages: readonly ModelMessage[]; converted: LanguageModelV3Prompt }>();

/**
 * A step's model and prompt: `system` + `messages` (each message checked once, see
 * {@link checkHistory}) converted by the AI SDK's own converter for this provider.
 *
 * Within a turn only the messages added since the model's previous step are converted: the
 * converter maps each message on its own (it only merges a tool message into a tool message
 * right before it, and checks that every tool call has a result), so when the history still
 * starts with exactly the messages of the previous step, whose conversion succeeded whole,
 * that conversion is reused and the new tail converted after it — unless the tail starts with
 * a tool message, which the converter would have merged: then all of it again. A step of a
 * long chat no longer converts the whole chat (O(history) per step).
 * @throws InvalidHistoryError, or the converter's MissingToolResultsError
 */
export async function stepPrompt(
  model: LanguageModel,
  system: string,
  messages: readonly ModelMessage[],
  signal: AbortSignal
): Promise<{ model: LanguageModelV3; prompt: LanguageModelV3Prompt }> {
  if (typeof model === 'string' || model.specificationVersion !== 'v3') {
    throw new Error('Cellmate needs an AI SDK v3 language model object (a provider instance), not a model id string.');
  }
  await checkHistory(messages);
  const { convertToLanguageModelPrompt } = await import('ai/internal');
  const v3 = model as LanguageModelV3;
  const supportedUrls = await v3.supportedUrls;
  const previous = lastConversion.get(v3);
  let reuse = 0;
  if (previous && previous.messages.length <= messages.length && previous.messages.every((m, i) => m === messages[i]))
    reuse = previous.messages.length;
  if (reuse > 0 && messages[reuse]?.role === 'tool') reuse = 0;
  const tail =
    reuse < messages.length
      ? await convertToLanguageModelPrompt({
          prompt: { messages: messages.slice(reuse) },
          supportedUrls,
          download: undefined,
          abortSignal: signal
        })
      : [];
  const converted = [...(reuse > 0 ? previous!.converted : []), ...tail];
  lastConversion.set(v3, { messages: [...messages], converted });
  return { model: v3, prompt: [{ role: 'system', content: system }, ...converted] };
}
