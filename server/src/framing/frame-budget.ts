/**
 * One memory budget for every framed stream of the companion: the bytes each reader holds
 * (a frame's body still arriving, plus the chunk being scanned) count against one total
 * shared by all language servers and debug adapters. A per-frame cap alone does not bound
 * the process: one 180 MB frame took the companion from 165 MB to about 1 GB (the body
 * copied, decoded, parsed), and several servers each under their cap add up.
 *
 * When the total passes the limit the stream holding the most is cut off — its reader
 * drops what it holds and reports `over-budget`, and its owner stops that server or
 * adapter — until the total fits; the others go on. The companion stays up.
 */

/** The default budget when `CELLMATE_FRAME_BUDGET_MB` does not set one: 64 MiB. */
export const DEFAULT_FRAME_BUDGET_BYTES = 64 * 1024 * 1024;

/** What a cut-off account is told. */
export interface Overrun {
  /** Bytes this stream held when it was cut. */
  heldBytes: number;
  /** The budget's limit. */
  limitBytes: number;
  /** Every stream's bytes together when the limit was passed. */
  totalBytes: number;
}

/** A budget of bytes shared by framed readers (see the module comment). */
export class FrameBudget {
  private readonly accounts = new Set<BudgetAccount>();
  private total = 0;

  constructor(readonly limitBytes: number) {}

  /**
   * The budget the companion's servers and adapters share: `CELLMATE_FRAME_BUDGET_MB` of `env`
   * (whole MiB), else {@link DEFAULT_FRAME_BUDGET_BYTES}.
   */
  static fromEnv(env: NodeJS.ProcessEnv): FrameBudget {
    const mb = Number(env.CELLMATE_FRAME_BUDGET_MB);
    return new FrameBudget(
      env.CELLMATE_FRAME_BUDGET_MB && Number.isInteger(mb) && mb > 0 ? mb * 1024 * 1024 : DEFAULT_FRAME_BUDGET_BYTES
    );
  }

  /** Bytes held by every open account now. */
  get usedBytes(): number {
    return this.total;
  }

  /** An account for one stream; `onOverrun` runs once, when the budget cuts it off. */
  open(name: string, onOverrun: (overrun: Overrun) => void): BudgetAccount {
    const account = new BudgetAccount(this, name, onOverrun);
    this.accounts.add(account);
    return account;
  }

  /** @internal An account's holding changed by `delta`; cuts the largest holders while over the limit. */
  change(delta: number): void {
    this.total += delta;
    while (this.total > this.limitBytes) {
      let largest: BudgetAccount | undefined;
      for (const a of this.accounts) if (!largest || a.heldBytes > largest.heldBytes) largest = a;
      if (!largest || largest.heldBytes === 0) return;
      const overrun = { heldBytes: largest.heldBytes, limitBytes: this.limitBytes, totalBytes: this.total };
      this.remove(largest);
      largest.cut(overrun);
    }
  }

  /** @internal */
  remove(account: BudgetAccount): void {
    if (!this.accounts.delete(account)) return;
    this.total -= account.heldBytes;
  }
}

/** One stream's share of a {@link FrameBudget}. */
export class BudgetAccount {
  private held = 0;
  private over = false;

  constructor(
    private readonly budget: FrameBudget,
    readonly name: string,
    private readonly onOverrun: (overrun: Overrun) => void
  ) {}

  /** Bytes this stream holds now. */
  get heldBytes(): number {
    return this.held;
  }

  /** Whether the budget cut this stream off (it must hold nothing more). */
  get cutOff(): boolean {
    return this.over;
  }

  /**
   * Records that the stream holds `bytes` now. Returns false when that cut this stream off
   * (or it was already): the caller drops what it holds.
   */
  hold(bytes: number): boolean {
    if (this.over) return false;
    const delta = bytes - this.held;
    this.held = bytes;
    this.budget.change(delta);
    return !this.over;
  }

  /** The stream ended: its bytes no longer count. */
  close(): void {
    this.budget.remove(this);
    this.held = 0;
  }

  /** @internal */
  cut(overrun: Overrun): void {
    this.over = true;
    this.held = 0;
    this.onOverrun(overrun);
  }
}

/** `12.5 MiB` for messages. */
export function mebibytes(bytes: number): string {
  const mb = bytes / (1024 * 1024);
  return `${mb >= 10 ? Math.round(mb) : mb.toFixed(1)} MiB`;
}

let processBudget: FrameBudget | undefined;

/**
 * The budget every language server and debug adapter of this process shares unless one is
 * passed in (a test's own): one per process, as the memory it bounds is.
 */
export function companionBudget(): FrameBudget {
  return (processBudget ??= FrameBudget.fromEnv(process.env));
}
