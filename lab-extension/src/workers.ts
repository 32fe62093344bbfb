/**
 * The open chat's background workers as the pane knows them (VIBE-2):
 * loaded with `worker/list` when a chat opens, kept current by `worker-updated` events on
 * `chat/event`. Pure state plus a signal; `widgets/workers-list.ts` renders it.
 */
import type { WorkerSummary } from '@cellmate/protocol';
import { ISignal, Signal } from '@lumino/signaling';

export class WorkersModel {
  /** The chat the list belongs to (null: none open). */
  get chatId(): string | null {
    return this._chatId;
  }

  /** Oldest first. */
  get workers(): readonly WorkerSummary[] {
    return this._workers;
  }

  /** When each summary arrived (elapsed time of running workers goes on from there). */
  receivedAt(workerId: string): number {
    return this._received.get(workerId) ?? Date.now();
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Replaces the list (a chat opened, or the pane reconnected). */
  reset(chatId: string | null, workers: readonly WorkerSummary[] = []): void {
    this._chatId = chatId;
    this._workers = [...workers];
    const now = Date.now();
    this._received = new Map(workers.map((w) => [w.id, now]));
    this._changed.emit();
  }

  /** One worker changed; ignored unless it belongs to the open chat. */
  update(chatId: string, worker: WorkerSummary): void {
    if (chatId !== this._chatId || worker.chatId !== chatId) {
      return;
    }
    const at = this._workers.findIndex((w) => w.id === worker.id);
    this._workers = at < 0 ? [...this._workers, worker] : this._workers.map((w, i) => (i === at ? worker : w));
    this._received.set(worker.id, Date.now());
    this._changed.emit();
  }

  private _chatId: string | null = null;
  private _workers: WorkerSummary[] = [];
  private _received = new Map<string, number>();
  private readonly _changed = new Signal<this, void>(this);
}
