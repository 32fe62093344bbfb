import type { OrchestrationTask } from '@cellmate/protocol';
import type { ChatService } from '../chats/chat-service.js';
import type { StoredOrchestration } from '../modes/orchestrate/orchestration-port.js';
import { agentTurnStep, type StepContext, type StepOutcome } from './step-runner.js';

/**
 * Where an approved orchestration's steps run (SPEC MODE-5) — the seam where background
 * workers (`vibe_*`, VIBE-1…3) plug in: a worker executor would run each
 * task as a sub-agent with the role's brief and tier (`concurrency` up to the budget's
 * `max_workers`) and hand results on in `summary`. The flow schedules (dependency order, the
 * concurrency limit, the budget — through `runSteps`, as plans do) and records progress; the
 * executor only runs one step.
 */
export interface OrchestrationExecutor {
  /** How many tasks may run at once (the flow also caps it at the budget's `max_workers`). */
  concurrency(orchestration: StoredOrchestration): number;
  runTask(orchestration: StoredOrchestration, task: OrchestrationTask, context: StepContext): Promise<StepOutcome>;
  runSynthesis(orchestration: StoredOrchestration, context: StepContext): Promise<StepOutcome>;
}

/** The user message of one approved task, run as an Agent turn. */
export function taskMessage(o: StoredOrchestration, task: OrchestrationTask): string {
  const index = o.tasks.findIndex((t) => t.key === task.key);
  const role = o.roles.find((r) => r.name === task.role);
  const after = task.depends_on.length
    ? ` It comes after ${task.depends_on.map((k) => `[${k}]`).join(', ')} (done).`
    : '';
  return (
    `Orchestration task ${index + 1}/${o.tasks.length} [${task.key}]: ${task.title}\n` +
    `Role: ${task.role}${role ? ` (${role.tier}) — ${role.brief}` : ''}\n\n${task.description}\n\n` +
    `(Task of the approved orchestration ${o.id}.${after} Do this task only, as this role; the next one follows as its own turn.)`
  );
}

/** The user message of the synthesis step. */
export function synthesisMessage(o: StoredOrchestration): string {
  return (
    `Orchestration synthesis (${o.id}): ${o.synthesis}\n\n` +
    `(The ${o.tasks.length} task${o.tasks.length === 1 ? '' : 's'} of the approved orchestration are done: ${o.tasks.map((t) => `[${t.key}] ${t.title}`).join('; ')}. Combine their results as described; this is the last step.)`
  );
}

/**
 * The executor without workers: each task, then the synthesis, is an Agent turn in the
 * chat, one at a time (a chat runs one turn at a time), on the model the operator approved
 * with — a role's tier picks a model only where workers run the tasks. A step whose turn
 * does not end normally, or finds the chat no longer in Agent mode, stops the run. The
 * budget's abort ends the step's own turn — never a person's turn the step is waiting behind.
 */
export function agentTurnExecutor(chats: ChatService): OrchestrationExecutor {
  return {
    concurrency: () => 1,
    runTask: (o, task, context) => agentTurnStep(chats, o.chatId, taskMessage(o, task), context),
    runSynthesis: (o, context) => agentTurnStep(chats, o.chatId, synthesisMessage(o), context)
  };
}
