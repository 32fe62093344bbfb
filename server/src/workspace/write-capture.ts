/**
 * Where every agent write announces itself before it happens, so a turn's checkpoint can
 * keep what was there. The registry runs each call inside
 * {@link withWriteRecorder}; the few write paths every tool goes through — the atomic file
 * write and remove (`file-io.ts`, which `edits/` uses too) and the mutating requests of
 * the notebook port (`notebook/pane-hub.ts`) — call {@link currentWriteRecorder}. A write
 * outside any call (a rewind restoring a checkpoint, a test) has no recorder and is not
 * recorded. AsyncLocalStorage carries the recorder through every `await` of the call
 * without each tool passing it on.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { NotebookCellData } from '@cellmate/protocol';

/** What one call's writes are announced to. */
export interface WriteRecorder {
  /** Before the file at `absolute` is replaced, created or removed. */
  beforeFile(absolute: string): Promise<void>;
  /** Before an open notebook (`relative`) changes through a pane; `read` gives its cells now. */
  beforeNotebook(relative: string, read: () => Promise<NotebookCellData[]>): Promise<void>;
  /** After the call: records what the call left, so a later change by the person shows as a conflict. */
  settle(): Promise<void>;
}

/** Gives the registry a recorder for a call (none: the call is not recorded). */
export interface CheckpointPort {
  recorder(call: { chatId: string; turnId?: string; workspace: string }): WriteRecorder | undefined;
}

const storage = new AsyncLocalStorage<WriteRecorder>();

/** Runs `fn` with `recorder` as the current recorder of every write it makes. */
export function withWriteRecorder<T>(recorder: WriteRecorder | undefined, fn: () => Promise<T>): Promise<T> {
  return recorder ? storage.run(recorder, fn) : fn();
}

/** The recorder of the call this code runs in, if any. */
export function currentWriteRecorder(): WriteRecorder | undefined {
  return storage.getStore();
}
