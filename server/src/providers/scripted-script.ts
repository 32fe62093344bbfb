import type { LanguageModelV3Prompt } from '@ai-sdk/provider';
import { z } from 'zod';

/** One scripted model response (one "step" of a turn). See `scripted.md`. */
export interface ScriptStep {
  text?: string;
  toolCalls?: Array<{ toolName: string; input: unknown }>;
  /** Delay before each streamed text chunk, in ms (default {@link DEFAULT_CHUNK_DELAY_MS}). */
  chunkDelayMs?: number;
  /** Fault injection: after `text` (if any), the stream emits an error with this message. */
  error?: string;
}

/** A parsed script: the steps of each turn. `every` replays the same steps for every turn. */
export type Script = ({ kind: 'turns'; turns: ScriptStep[][] } | { kind: 'every'; steps: ScriptStep[] }) & {
  /** Report usage for each request (input: the request's characters / 4), as a real provider does. Default: none reported. */
  reportUsage?: boolean;
  /** How the Auto reviewer's requests are answered (SIDE-1); the first matching rule answers. */
  sidecar?: SidecarRule[];
};

/**
 * One scripted answer of the Auto reviewer: for records whose `tool` (or `calledAs`) is
 * `tool` and one of whose subjects contains `subject` (either may be left out), answer
 * `{"verdict", "reason"}` — or the `raw` text instead (junk, for fail-closed tests) — after
 * `delayMs` (a delay past the gate's timeout is a reviewer that never answers).
 */
export interface SidecarRule {
  tool?: string;
  subject?: string;
  verdict?: 'allow' | 'ask';
  reason?: string;
  raw?: string;
  delayMs?: number;
}

/** Default delay between text chunks. */
export const DEFAULT_CHUNK_DELAY_MS = 15;

/** Text sent when the script has no step for the current position. */
export const EXHAUSTED_TEXT = '(scripted provider: script exhausted)';

const stepSchema = z.strictObject({
  text: z.string().optional(),
  toolCalls: z.array(z.strictObject({ toolName: z.string().min(1), input: z.unknown() })).optional(),
  chunkDelayMs: z.number().int().min(0).max(60_000).optional(),
  error: z.string().optional()
});

const sidecarSchema = z
  .array(
    z.strictObject({
      tool: z.string().optional(),
      subject: z.string().optional(),
      verdict: z.enum(['allow', 'ask']).optional(),
      reason: z.string().optional(),
      raw: z.string().optional(),
      delayMs: z.number().int().min(0).max(600_000).optional()
    })
  )
  .optional();
const turnsSchema = z.strictObject({
  turns: z.array(z.array(stepSchema)),
  reportUsage: z.boolean().optional(),
  sidecar: sidecarSchema
});
const stepsSchema = z.strictObject({
  steps: z.array(stepSchema),
  reportUsage: z.boolean().optional(),
  sidecar: sidecarSchema
});

/**
 * Validates a script's JSON. Pure.
 * @throws Error with a message that says what is wrong and what the format is
 */
export function parseScript(json: unknown, origin: string): Script {
  // Pick the variant by its key so errors point at the exact place (a union would not).
  const isTurns = typeof json === 'object' && json !== null && 'turns' in json;
  const parsed = (isTurns ? turnsSchema : stepsSchema).safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
    throw new Error(
      `${origin} is not a valid script${where}: ${issue?.message ?? 'unknown problem'}. ` +
        'Expected {"turns": [[Step, …], …]} or {"steps": [Step, …]} with Step = {text?, toolCalls?: [{toolName, input}], chunkDelayMs?, error?}.'
    );
  }
  const extras = {
    ...(parsed.data.reportUsage ? { reportUsage: true } : {}),
    ...(parsed.data.sidecar ? { sidecar: parsed.data.sidecar as SidecarRule[] } : {})
  };
  return 'turns' in parsed.data
    ? { kind: 'turns', turns: parsed.data.turns as ScriptStep[][], ...extras }
    : { kind: 'every', steps: parsed.data.steps as ScriptStep[], ...extras };
}

/** Where in the script a prompt is: derived from the prompt alone, so replay is stateless. */
export interface ScriptPosition {
  /** Number of user messages − 1. */
  turn: number;
  /** Number of assistant messages after the last user message. */
  step: number;
}

/** Computes the script position of a prompt. Pure. */
export function scriptPosition(prompt: LanguageModelV3Prompt): ScriptPosition {
  let users = 0;
  let assistantsSinceUser = 0;
  for (const message of prompt) {
    if (message.role === 'user') {
      // A compacted conversation's summary stands for the person's messages it replaced.
      const summarized = (message.providerOptions as { cellmate?: { summarizedUsers?: unknown } } | undefined)?.cellmate
        ?.summarizedUsers;
      users += typeof summarized === 'number' && summarized >= 1 ? summarized : 1;
      assistantsSinceUser = 0;
    } else if (message.role === 'assistant') {
      assistantsSinceUser += 1;
    }
  }
  return { turn: Math.max(0, users - 1), step: assistantsSinceUser };
}

/** The step for a position, or `undefined` past the end. Pure. */
export function selectStep(script: Script, position: ScriptPosition): ScriptStep | undefined {
  const steps = script.kind === 'every' ? script.steps : script.turns[position.turn];
  return steps?.[position.step];
}

/** The scripted reviewer's answer to a record (the first matching rule; none: ask). Pure. */
export function scriptedVerdict(script: Script, record: unknown): { text: string; delayMs: number } {
  const r = (typeof record === 'object' && record !== null ? record : {}) as {
    tool?: unknown;
    calledAs?: unknown;
    subjects?: Record<string, unknown>;
  };
  const subjects = Object.values(r.subjects ?? {}).flatMap((v) =>
    Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []
  );
  const rule = (script.sidecar ?? []).find(
    (s) =>
      (s.tool === undefined || s.tool === r.tool || s.tool === r.calledAs) &&
      (s.subject === undefined || subjects.some((x) => x.includes(s.subject!)))
  );
  if (!rule)
    return {
      text: JSON.stringify({ verdict: 'ask', reason: 'scripted provider: no sidecar rule matched' }),
      delayMs: 0
    };
  return {
    text: rule.raw ?? JSON.stringify({ verdict: rule.verdict ?? 'ask', reason: rule.reason ?? 'scripted verdict' }),
    delayMs: rule.delayMs ?? 0
  };
}

/** Splits text into word chunks (each word with its trailing whitespace). Pure. */
export function chunkText(text: string): string[] {
  return text.match(/\s*\S+\s*|\s+/g) ?? [];
}
