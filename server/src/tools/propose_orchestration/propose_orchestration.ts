import type { OrchestrationDisplay } from '@cellmate/protocol';
import { z } from 'zod';
import { TOOL_DESCRIPTIONS } from '../../gate/descriptions.generated.js';
import { defineTool, type ToolDefinition } from '../../gate/define-tool.js';
import { ToolInputError } from '../../base/tool-errors.js';
import { orderPlan, PlanGraphError } from '../submit_plan/plan-graph.js';
import type { OrchestrationPort, StoredOrchestration } from '../../modes/orchestrate/orchestration-port.js';

/** SPEC MODE-5: agent-initiated re-proposals wait this long after the last proposal. */
export const PROPOSAL_COOLDOWN_MS = 2 * 60_000;

const text = (what: string, max: number) =>
  z
    .string({ error: `must be a string (${what})` })
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(max, { error: `must be at most ${max} characters` });
const id = (example: string) =>
  z.string({ error: 'must be a string' }).regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, {
    error: `must be a short id: letters, digits, _ . - (at most 64), e.g. "${example}"`
  });
const whole = (what: string, min: number, max: number) =>
  z
    .number({ error: `must be a whole number (${what})` })
    .int({ error: 'must be a whole number' })
    .min(min, { error: `must be at least ${min}` })
    .max(max, { error: `must be at most ${max}` });

export const proposeOrchestrationParameters = z.strictObject({
  roles: z
    .array(
      z.strictObject({
        name: id('analyst').describe('Unique role id.'),
        tier: z
          .enum(['fast', 'good'], {
            error: 'must be "fast" (mechanical work with a clear spec) or "good" (design, judgement)'
          })
          .describe('fast or good.'),
        brief: text('what the role does and how it reports', 2_000).describe('What it does, how it reports.')
      }),
      { error: 'must be a list of {name, tier, brief} objects' }
    )
    .min(1, { error: 'must have at least one role' })
    .max(12, { error: 'must have at most 12 roles' }),
  tasks: z
    .array(
      z.strictObject({
        key: id('load-data').describe('Unique task id.'),
        title: text('a short imperative title', 200),
        description: text('what to do and how to know it is done', 4_000).describe(
          'What to do; how to tell it is done.'
        ),
        role: z.string({ error: 'must be the name of one of the roles' }).describe('A role name.'),
        depends_on: z
          .array(z.string({ error: 'must be a list of task keys' }), {
            error: 'must be a list of task keys ([] when none)'
          })
          .max(50)
          .describe('Task keys first.')
      }),
      { error: 'must be a list of {key, title, description, role, depends_on} objects' }
    )
    .min(1, { error: 'must have at least one task (if the work needs no orchestration, say so instead)' })
    .max(50, { error: 'must have at most 50 tasks: group the work into larger tasks' }),
  synthesis: text('how the results are combined', 4_000),
  budget: z.strictObject(
    {
      max_workers: whole('workers at once', 1, 8),
      max_minutes: whole('minutes for the whole run', 1, 240),
      max_tool_calls: whole('tool calls over all tasks', 1, 5_000).optional()
    },
    { error: 'must be {max_workers, max_minutes, max_tool_calls?}' }
  )
});
export type ProposeOrchestrationArgs = z.infer<typeof proposeOrchestrationParameters>;

/** The card of an orchestration: roles, ordered tasks, synthesis, budget, approval, run. */
export function orchestrationDisplay(o: StoredOrchestration): OrchestrationDisplay {
  return {
    kind: 'orchestration',
    orchestrationId: o.id,
    roles: o.roles,
    tasks: o.tasks,
    synthesis: o.synthesis,
    budget: o.budget,
    approval: o.approval,
    ...(o.reason ? { reason: o.reason } : {}),
    ...(o.run ? { run: o.run } : {})
  };
}

/** `1 min 5 s`, `40 s`. */
export function formatDuration(ms: number): string {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  const minutes = Math.floor(seconds / 60);
  return minutes ? `${minutes} min${seconds % 60 ? ` ${seconds % 60} s` : ''}` : `${seconds} s`;
}

/**
 * How long a new proposal must still wait (MODE-5), 0 when it may go ahead: the cooldown
 * runs from the chat's last proposal, except when the operator rejected it — a rejection
 * asks for the revision, so the agent may propose again at once. Pure.
 */
export function cooldownLeft(
  last: Pick<StoredOrchestration, 'proposedAt' | 'approval'> | undefined,
  now: number,
  cooldownMs = PROPOSAL_COOLDOWN_MS
): number {
  if (!last || last.approval === 'rejected') return 0;
  const since = now - Date.parse(last.proposedAt);
  return since >= 0 && since < cooldownMs ? cooldownMs - since : 0;
}

/**
 * Checks what the schema cannot: unique role names, every role used, every task's role
 * known, and the task graph (unique keys, known dependencies, no cycle). Returns the
 * proposal with its tasks in dependency order (the order approved work runs in).
 * @throws ToolInputError naming the first problem and how to fix it
 */
export function checkProposal(
  args: ProposeOrchestrationArgs
): Pick<StoredOrchestration, 'roles' | 'tasks' | 'synthesis' | 'budget'> {
  const roles = new Set<string>();
  for (const r of args.roles) {
    if (roles.has(r.name))
      throw new ToolInputError(
        `propose_orchestration: two roles are named "${r.name}". Role names must be unique: rename one.`
      );
    roles.add(r.name);
  }
  for (const t of args.tasks) {
    if (!roles.has(t.role)) {
      throw new ToolInputError(
        `propose_orchestration: task "${t.key}" has the role "${t.role}", which is not one of the roles (${[...roles].join(', ')}). Use one of those or add the role.`
      );
    }
  }
  const used = new Set(args.tasks.map((t) => t.role));
  const idle = args.roles.find((r) => !used.has(r.name));
  if (idle)
    throw new ToolInputError(`propose_orchestration: role "${idle.name}" has no task. Give it a task or remove it.`);
  let tasks;
  try {
    tasks = orderPlan(
      args.tasks.map((t) => ({
        key: t.key,
        title: t.title,
        description: t.description,
        role: t.role,
        depends_on: [...new Set(t.depends_on)]
      })),
      { item: 'task', graph: 'orchestration' }
    );
  } catch (error) {
    if (error instanceof PlanGraphError) throw new ToolInputError(`propose_orchestration: ${error.message}`);
    throw error;
  }
  const budget = {
    max_workers: args.budget.max_workers,
    max_minutes: args.budget.max_minutes,
    ...(args.budget.max_tool_calls !== undefined ? { max_tool_calls: args.budget.max_tool_calls } : {})
  };
  return {
    roles: args.roles.map((r) => ({ name: r.name, tier: r.tier, brief: r.brief })),
    tasks,
    synthesis: args.synthesis,
    budget
  };
}

/** Options of {@link createProposeOrchestrationTool}. */
export interface ProposeOrchestrationOptions {
  /** The clock of the cooldown (ms since the epoch); default `Date.now`. Tests pass a fake one. */
  now?: () => number;
  cooldownMs?: number;
}

/**
 * `propose_orchestration` (SPEC MODE-5, pinned MODE-6): Orchestrate mode's artifact, a
 * validated proposal put to the operator at once (`pending`, durable). It never approves:
 * only the operator's pane action does (`orchestration/resolve`). Re-proposals within the
 * cooldown are refused with the time left.
 */
export function createProposeOrchestrationTool(
  port: OrchestrationPort,
  options: ProposeOrchestrationOptions = {}
): ToolDefinition<typeof proposeOrchestrationParameters> {
  const now = options.now ?? Date.now;
  const cooldownMs = options.cooldownMs ?? PROPOSAL_COOLDOWN_MS;
  return defineTool({
    name: 'propose_orchestration',
    tier: 'read',
    description: TOOL_DESCRIPTIONS.propose_orchestration,
    parameters: proposeOrchestrationParameters,
    examples: [
      {
        args: {
          roles: [
            { name: 'analyst', tier: 'good', brief: 'Explores the data; reports findings as bullets.' },
            { name: 'plotter', tier: 'fast', brief: 'Draws the charts asked for.' }
          ],
          tasks: [
            {
              key: 'load',
              title: 'Load sales.csv',
              description: 'Parse dates, drop rows without a region.',
              role: 'analyst',
              depends_on: []
            },
            {
              key: 'chart',
              title: 'Chart it',
              description: 'One line per region in report.ipynb.',
              role: 'plotter',
              depends_on: ['load']
            }
          ],
          synthesis: 'Summarise the trends in three sentences.',
          budget: { max_workers: 2, max_minutes: 20 }
        },
        comment: 'two roles, two tasks in a chain'
      }
    ],
    actionClasses: ['ask-user'],
    parallelSafe: false,
    async execute(args, ctx) {
      const proposal = checkProposal(args);
      const last = port.latest(ctx.chatId);
      const left = cooldownLeft(last, now(), cooldownMs);
      if (last && left > 0) {
        throw new ToolInputError(
          `Refused: orchestration ${last.id} was proposed in this chat ${formatDuration(now() - Date.parse(last.proposedAt))} ago and re-proposals have a ${formatDuration(cooldownMs)} cooldown: ${formatDuration(left)} left. ` +
            `It is ${last.approval}; ${last.approval === 'pending' ? "wait for the operator's answer instead of proposing again (end your turn)." : 'do not propose again yet.'}`
        );
      }
      const stored = port.propose(ctx.chatId, proposal);
      const roleOf = new Map(stored.roles.map((r) => [r.name, r]));
      const steps = stored.tasks
        .map(
          (t, i) =>
            `${i + 1}. [${t.key}] ${t.title} — ${t.role} (${roleOf.get(t.role)!.tier})${t.depends_on.length ? ` (after ${t.depends_on.join(', ')})` : ''}`
        )
        .join('\n');
      const b = stored.budget;
      return {
        title: `orchestration: ${stored.tasks.length} task${stored.tasks.length === 1 ? '' : 's'}, pending`,
        output:
          `Orchestration ${stored.id} proposed; the operator is asked to approve it in the Cellmate pane. ${stored.roles.length} role${stored.roles.length === 1 ? '' : 's'}, ${stored.tasks.length} task${stored.tasks.length === 1 ? '' : 's'} in the order they will run:\n${steps}\n` +
          `Then the synthesis: ${stored.synthesis}\nBudget: ${b.max_workers} worker${b.max_workers === 1 ? '' : 's'} at once, ${b.max_minutes} min${b.max_tool_calls !== undefined ? `, ${b.max_tool_calls} tool calls` : ''}.\n\n` +
          'Nothing runs until the operator approves. End your turn now with a one-line summary; do not propose again while it is pending. On approval the chat switches to Agent and the tasks run in order; a rejection comes back as a message asking you to revise.',
        metadata: { orchestrationId: stored.id, approval: stored.approval },
        display: orchestrationDisplay(stored)
      };
    }
  });
}
