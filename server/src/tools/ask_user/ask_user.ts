import { z } from 'zod';
import type { QuestionBroker } from '../../questions/question-broker.js';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool, type ToolDefinition } from '../../gate/define-tool.js';
import { ToolInputError } from '../../base/tool-errors.js';

/** Guidance given on skip (success) and on expiry (error), ASK-2. */
export const ASSUMPTION_GUIDANCE =
  'Proceed on a stated assumption: choose the most reasonable option, say in your reply what you assumed, and do not ask this question again.';

export const askUserParameters = z.strictObject({
  question: z
    .string({ error: 'must be a string (one clear question)' })
    .min(1, { error: 'must not be empty' })
    .max(2_000, { error: 'must be at most 2000 characters' })
    .describe('One clear question for the user.'),
  context: z
    .string({ error: 'must be a string' })
    .max(4_000, { error: 'must be at most 4000 characters' })
    .optional()
    .describe('What the user needs to know to answer (one or two sentences).'),
  options: z
    .array(
      z.strictObject({
        label: z
          .string({ error: 'must be a string' })
          .min(1, { error: 'must not be empty' })
          .max(200, { error: 'must be at most 200 characters' }),
        description: z
          .string({ error: 'must be a string' })
          .max(500, { error: 'must be at most 500 characters' })
          .optional()
      }),
      { error: 'must be a list of {label, description?} objects' }
    )
    .max(9, { error: 'must have at most 9 options (keys 1–9)' })
    .optional()
    .describe('Numbered choices (at most 9); the user picks with keys 1–9.'),
  allow_free_text: z
    .boolean({ error: 'must be true or false' })
    .optional()
    .describe('The user may type their own answer. Default true.'),
  multi_select: z
    .boolean({ error: 'must be true or false' })
    .optional()
    .describe('The user may pick several options. Default false.')
});

/** `ask_user` (ASK-1…3): registered only with a question port (TIER-3). */
export function createAskUserTool(questions: QuestionBroker): ToolDefinition<typeof askUserParameters> {
  return defineTool({
    name: 'ask_user',
    tier: 'read',
    description: TOOL_DESCRIPTIONS.ask_user,
    parameters: askUserParameters,
    examples: [
      {
        args: {
          question: 'Which dataset should the report use?',
          options: [
            { label: 'raw.csv', description: 'all rows' },
            { label: 'clean.csv', description: 'outliers removed' }
          ],
          allow_free_text: false
        },
        comment: 'a choice between known options'
      }
    ],
    // The question's own wait (10 min by default) ends it; this only guards a stuck port.
    timeoutMs: 24 * 60 * 60_000,
    actionClasses: ['ask-user'],
    parallelSafe: false,
    async execute(args, ctx) {
      const options = args.options ?? [];
      const allowFreeText = args.allow_free_text ?? true;
      if (options.length === 0 && !allowFreeText) {
        throw new ToolInputError('Give at least one option, or allow free text: otherwise the user cannot answer.');
      }
      // A background worker's question lands in its parent chat: the card says who asks.
      const context = [
        ctx.worker ? `Asked by worker "${ctx.worker.label}" (${ctx.worker.id}).` : undefined,
        args.context
      ]
        .filter(Boolean)
        .join('\n');
      const outcome = await questions.ask(
        {
          chatId: ctx.chatId,
          turnId: ctx.turnId,
          type: 'ask',
          question: args.question,
          ...(context ? { context } : {}),
          options,
          allowFreeText,
          multiSelect: args.multi_select ?? false
        },
        ctx.signal
      );
      switch (outcome.state) {
        case 'unavailable':
          throw new ToolInputError(
            `Nobody is connected to answer (the Cellmate pane is closed), so the question was not asked. ${ASSUMPTION_GUIDANCE}`
          );
        case 'expired':
          throw new ToolInputError(`The question expired without an answer. ${ASSUMPTION_GUIDANCE}`);
        case 'cancelled':
          throw new ToolInputError('The question was cancelled because the turn was stopped.');
        case 'skipped':
          return {
            title: 'skipped',
            output: `The user skipped this question. ${ASSUMPTION_GUIDANCE}`,
            metadata: { state: 'skipped' }
          };
        case 'answered': {
          const parts: string[] = [];
          const chosen = outcome.answer.selected.map((i) => `${i + 1}. ${options[i]?.label ?? '?'}`);
          if (chosen.length > 0) parts.push(`The user chose: ${chosen.join('; ')}`);
          if (outcome.answer.text) parts.push(`The user wrote: ${JSON.stringify(outcome.answer.text)}`);
          return {
            title: 'answered',
            output: parts.join('\n'),
            metadata: { state: 'answered', selected: outcome.answer.selected }
          };
        }
      }
    }
  });
}
