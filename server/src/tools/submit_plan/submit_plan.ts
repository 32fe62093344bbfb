import type { PlanDisplay } from '@cellmate/protocol';
import { z } from 'zod';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool, type ToolDefinition } from '../../gate/define-tool.js';
import { ToolInputError } from '../../base/tool-errors.js';
import { orderPlan, PlanGraphError } from './plan-graph.js';
import type { PlanPort, StoredPlan } from '../../modes/plan/plan-port.js';

const text = (what: string, max: number) =>
  z
    .string({ error: `must be a string (${what})` })
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(max, { error: `must be at most ${max} characters` });

export const submitPlanParameters = z.strictObject({
  goal: text('what the plan achieves, one sentence', 1_000).describe('What the whole plan achieves, in one sentence.'),
  nodes: z
    .array(
      z.strictObject({
        key: z
          .string({ error: 'must be a string' })
          .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, {
            error: 'must be a short id: letters, digits, _ . - (at most 64), e.g. "load-data"'
          })
          .describe('Short unique id, e.g. "load-data".'),
        title: text('a short imperative title', 200).describe('Short imperative title.'),
        description: text('what to do and how to know it is done', 4_000).describe(
          'What to do, concretely, and how to tell it is done.'
        ),
        depends_on: z
          .array(z.string({ error: 'must be a list of node keys' }), {
            error: 'must be a list of node keys ([] when none)'
          })
          .max(50)
          .describe('Keys of the nodes that must be done first ([] when none).')
      }),
      { error: 'must be a list of {key, title, description, depends_on} objects' }
    )
    .min(1, { error: 'must have at least one node (if no plan is needed, say so instead of calling submit_plan)' })
    .max(50, { error: 'must have at most 50 nodes: group the work into larger steps' })
    .describe('The steps, as a dependency graph.')
});

/** The card of a plan: goal, ordered nodes, approval state. */
export function planDisplay(plan: StoredPlan): PlanDisplay {
  return {
    kind: 'plan',
    planId: plan.id,
    goal: plan.goal,
    nodes: plan.nodes,
    approval: plan.approval,
    ...(plan.reason ? { reason: plan.reason } : {})
  };
}

/** `submit_plan` (SPEC MODE-3, pinned MODE-6): Plan mode's artifact, a validated dependency graph. */
export function createSubmitPlanTool(plans: PlanPort): ToolDefinition<typeof submitPlanParameters> {
  return defineTool({
    name: 'submit_plan',
    tier: 'read',
    description: TOOL_DESCRIPTIONS.submit_plan,
    parameters: submitPlanParameters,
    examples: [
      {
        args: {
          goal: 'Report monthly revenue by region from sales.csv',
          nodes: [
            {
              key: 'load',
              title: 'Load and clean sales.csv',
              description: 'Read sales.csv with pandas, parse dates, drop rows without a region.',
              depends_on: []
            },
            {
              key: 'aggregate',
              title: 'Aggregate by month and region',
              description: 'Group by month and region, sum revenue; check the totals match the raw sum.',
              depends_on: ['load']
            },
            {
              key: 'chart',
              title: 'Plot the result',
              description: 'One line per region in report.ipynb.',
              depends_on: ['aggregate']
            }
          ]
        },
        comment: 'three steps, each after the one it needs'
      }
    ],
    actionClasses: ['read'],
    parallelSafe: false,
    async execute(args, ctx) {
      let ordered;
      try {
        ordered = orderPlan(
          args.nodes.map((n) => ({
            key: n.key,
            title: n.title,
            description: n.description,
            depends_on: [...new Set(n.depends_on)]
          }))
        );
      } catch (error) {
        if (error instanceof PlanGraphError) throw new ToolInputError(`submit_plan: ${error.message}`);
        throw error;
      }
      const plan = plans.submit(ctx.chatId, args.goal, ordered);
      const steps = plan.nodes
        .map(
          (n, i) => `${i + 1}. [${n.key}] ${n.title}${n.depends_on.length ? ` (after ${n.depends_on.join(', ')})` : ''}`
        )
        .join('\n');
      return {
        title: `plan: ${plan.nodes.length} step${plan.nodes.length === 1 ? '' : 's'}`,
        output: `Plan ${plan.id} recorded (${plan.nodes.length} steps, in the order they will run):\n${steps}\n\nNext: call exit_plan_mode to ask the user to approve it.`,
        metadata: { planId: plan.id },
        display: planDisplay(plan)
      };
    }
  });
}
