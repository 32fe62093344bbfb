/**
 * The open chat's cards that wait for the person (approval and `ask_user` questions): a
 * turn stands still until one is answered, so the plugin makes sure such a card is seen
 * (it reveals the pane, badges the sidebar tab and raises a notification with "Open").
 */
import type { QuestionItem, TranscriptItem } from '@cellmate/protocol';
import type { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';
import type { ChatChange, ChatsModel, ChatState } from './model';

/** Follows which questions of the open chat are pending. */
export class PendingQuestions implements IDisposable {
  constructor(store: ChatsModel) {
    this._unsubscribe = store.subscribe((state, change) => this._update(state, change));
    this._update(store.state, { updated: [], structure: true, running: true });
  }

  /** A question began waiting (also one already pending when a chat is opened or reloaded). */
  get added(): ISignal<this, QuestionItem> {
    return this._added;
  }

  /** The set of pending questions changed (one was answered, expired, or added). */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** How many questions wait for the person. */
  get count(): number {
    return this._pending.size;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._unsubscribe();
    Signal.clearData(this);
  }

  private _update(state: ChatState | null, change: ChatChange): void {
    // Most changes are text deltas of one item while nothing waits: only look when items were
    // added or removed, or one of those updated may be (or have been) a question.
    if (!change.structure && change.updated.length === 0) {
      return;
    }
    const items = state?.items ?? [];
    const candidates = change.structure
      ? items
      : change.updated.map((id) => findLast(items, id)).filter((i): i is TranscriptItem => !!i);
    const next = new Map(change.structure ? [] : this._pending);
    for (const item of candidates) {
      if (item.kind !== 'question') {
        continue;
      }
      if (item.state === 'pending') {
        next.set(item.id, item);
      } else {
        next.delete(item.id);
      }
    }
    const fresh = [...next.values()].filter((q) => !this._pending.has(q.id));
    const same = next.size === this._pending.size && fresh.length === 0;
    this._pending = next;
    for (const question of fresh) {
      this._added.emit(question);
    }
    if (!same) {
      this._changed.emit();
    }
  }

  private _pending = new Map<string, QuestionItem>();
  private _disposed = false;
  private readonly _unsubscribe: () => void;
  private readonly _added = new Signal<this, QuestionItem>(this);
  private readonly _changed = new Signal<this, void>(this);
}

/** The item with `id`, searched from the end (updates are almost always at the tail). */
function findLast(items: readonly TranscriptItem[], id: string): TranscriptItem | undefined {
  for (let i = items.length - 1; i >= 0; i--) {
    if (items[i].id === id) {
      return items[i];
    }
  }
  return undefined;
}
