import { Emitter, type Disposable, type Event } from 'vscode-jsonrpc/node.js';

/**
 * Whether a person is connected right now: at least one pane connection (one that said
 * `interactive: true` in `cellmate/hello`) is attached. Questions and approvals fail at
 * once without one (ASK-3, fail-closed).
 */
export class Presence {
  private attached = 0;
  private readonly changed = new Emitter<boolean>();
  readonly onDidChange: Event<boolean> = this.changed.event;

  get connected(): boolean {
    return this.attached > 0;
  }

  /** Interactive connections attached now. */
  get count(): number {
    return this.attached;
  }

  /** Marks one interactive connection attached until the returned handle is disposed. */
  attach(): Disposable {
    this.attached += 1;
    if (this.attached === 1) this.changed.fire(true);
    let done = false;
    return {
      dispose: () => {
        if (done) return;
        done = true;
        this.attached -= 1;
        if (this.attached === 0) this.changed.fire(false);
      }
    };
  }

  dispose(): void {
    this.changed.dispose();
  }
}
