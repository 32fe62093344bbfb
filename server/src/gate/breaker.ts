/**
 * A per-turn breaker (HARN-6, SIDE-3): counts refusals in a turn — in a row and in all —
 * and says when a limit is reached, so the caller hands the decision back to the person.
 * The registry keeps one for refusals and denials (the turn pauses to ask whether to go
 * on); the Auto reviewer keeps one for its own refusals (Auto pauses for the turn). State
 * only: what a tripped breaker does is the owner's business.
 */
import type { ToolActor } from '@cellmate/protocol';

/** Which turn a count belongs to: a new turn starts from zero. */
export interface TurnRef {
  chatId: string;
  turnId?: string;
}

/** When the breaker trips: `streak` refusals in a row, or `total` in the turn. */
export interface BreakerLimits {
  streak: number;
  total?: number;
}

/** A turn's count. */
export interface Tally {
  /** Refusals since the last call that went through. */
  streak: number;
  /** Refusals in the turn. */
  total: number;
  /** Whether a limit is reached. */
  tripped: boolean;
}

/** Turns are counted in a bounded map: a turn that ended with a refusal is never reset. */
const MAX_TURNS = 256;

/** Counts refusals per turn against fixed limits. */
export class Breaker {
  private readonly turns = new Map<string, { streak: number; total: number }>();

  constructor(private readonly limits: BreakerLimits) {}

  /** Counts one refusal; returns the turn's tally with it. */
  refuse(turn: TurnRef): Tally {
    const key = turnKey(turn);
    const count = this.turns.get(key) ?? { streak: 0, total: 0 };
    count.streak += 1;
    count.total += 1;
    this.turns.set(key, count);
    if (this.turns.size > MAX_TURNS) this.turns.delete(this.turns.keys().next().value!);
    return this.judge(count);
  }

  /** A call went through: the streak starts again (the turn's total stays). */
  pass(turn: TurnRef): void {
    const count = this.turns.get(turnKey(turn));
    if (count) count.streak = 0;
  }

  /** The turn's tally (zero when nothing was refused). */
  tally(turn: TurnRef): Tally {
    return this.judge(this.turns.get(turnKey(turn)) ?? { streak: 0, total: 0 });
  }

  /** Forgets the turn (the person chose to go on: counting starts again). */
  reset(turn: TurnRef): void {
    this.turns.delete(turnKey(turn));
  }

  private judge(count: { streak: number; total: number }): Tally {
    const tripped =
      count.streak >= this.limits.streak || (this.limits.total !== undefined && count.total >= this.limits.total);
    return { ...count, tripped };
  }
}

/**
 * Whether a tripped breaker stops the caller's turn: the model's (and its kernel's) turn
 * does; a person's own clicks and an MCP client, which runs its own loop and has no turn
 * here, just get each refusal.
 */
export function breakerStopsTurn(actor: ToolActor): boolean {
  return actor !== 'user' && actor !== 'mcp';
}

function turnKey(turn: TurnRef): string {
  return `${turn.chatId}\u0000${turn.turnId ?? ''}`;
}
