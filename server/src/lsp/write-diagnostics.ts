/**
 * Write-time diagnostics (WDIAG-1/2), the registry's write hook: before a write the file is
 * synced into its server (its diagnostics are the baseline, muted); after it, the new text
 * (the file, or the open notebook's live cells through the pane) is synced and saved, and
 * only diagnostics that *just appeared* are appended to the tool's result — for a notebook,
 * addressed by cell. A per-chat journal keyed by (file, severity, code, message) — never the
 * position — mutes everything already seen, so an error that merely moved down four lines,
 * or into another cell, is not reported again. The wait for the server is brief; what it
 * publishes later is delivered with the chat's next tool result. A file no usable server
 * claims adds nothing (no noise).
 */
import type { LspDisplay } from '@cellmate/protocol';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import type { WriteChange, WriteHook, WriteHookResult } from '../ports/gate-ports.js';
import { resolveWorkspacePath } from '../workspace/workspace-path.js';
import {
  describeDiagnostics,
  formatDiagnostic,
  serverUris,
  waitForDocument,
  type ShownDiagnostic
} from './diagnostics.js';
import type { DocumentSync, SyncedDocument } from './documents.js';

/** Late publishes are watched this long after a write. */
export const LATE_WATCH_MS = 2 * 60_000;
/** Default of {@link WriteDiagnosticsOptions.baselineWaitMs}. */
export const BASELINE_WAIT_MS = 10_000;
/** At most this many new diagnostics are listed per result (the rest are counted). */
export const MAX_NEW_DIAGNOSTICS = 20;

interface Watch {
  dispose(): void;
}

/** Options of {@link WriteDiagnostics}. */
export interface WriteDiagnosticsOptions {
  /** How long to wait for the server's publish after a write (default: the service's, 3 s). */
  waitMs?: number;
  /**
   * How long to wait for the diagnostics before the first write of a file (default 10 s: a
   * server that just started analyses the root first; a baseline cut short would report the
   * file's old errors as new).
   */
  baselineWaitMs?: number;
}

export class WriteDiagnostics implements WriteHook {
  /** chat → keys already reported or present before the chat's writes. */
  private readonly journals = new Map<string, Set<string>>();
  /** chat → diagnostics that arrived after their write's result was returned. */
  private readonly late = new Map<string, ShownDiagnostic[]>();
  /** chat + file → the watch for late publishes. */
  private readonly watches = new Map<string, Watch>();

  constructor(
    private readonly docs: DocumentSync,
    private readonly options: WriteDiagnosticsOptions = {}
  ) {}

  async beforeWrite(change: WriteChange, signal: AbortSignal): Promise<void> {
    for (const input of change.files) {
      const doc = await this.trySync(change.workspace, input, signal);
      if (!doc) continue;
      if (doc.changed || !this.hasPublish(doc))
        await waitForDocument(doc, signal, this.options.baselineWaitMs ?? Math.max(BASELINE_WAIT_MS, doc.waitMs));
      this.mute(change.chatId, await this.current(doc));
    }
  }

  async afterWrite(change: WriteChange, signal: AbortSignal): Promise<WriteHookResult | undefined> {
    const fresh: ShownDiagnostic[] = [];
    let pendingNote = false;
    for (const input of change.files) {
      const doc = await this.trySync(change.workspace, input, signal);
      if (!doc) continue;
      // A server that has not published anything yet is still analysing its root: the longer wait.
      const waitMs =
        doc.sequenceBefore === 0
          ? (this.options.baselineWaitMs ?? Math.max(BASELINE_WAIT_MS, doc.waitMs))
          : (this.options.waitMs ?? doc.waitMs);
      const wait = doc.changed ? await waitForDocument(doc, signal, waitMs) : { complete: true };
      fresh.push(...this.take(change.chatId, await this.current(doc)));
      if (!wait.complete) pendingNote = true;
      this.watch(change.chatId, doc);
    }
    fresh.unshift(...this.drainLate(change.chatId));
    return render(
      fresh,
      pendingNote
        ? 'The server had not finished checking; diagnostics it reports later come with the next result.'
        : undefined
    );
  }

  async pending(chatId: string): Promise<WriteHookResult | undefined> {
    const late = this.drainLate(chatId);
    return late.length ? render(late, undefined, 'New diagnostics reported after the last change') : undefined;
  }

  /** Stops watching for late publishes. */
  dispose(): void {
    for (const w of this.watches.values()) w.dispose();
    this.watches.clear();
  }

  private async trySync(workspace: string, input: string, signal: AbortSignal): Promise<SyncedDocument | undefined> {
    try {
      const r = await resolveWorkspacePath(workspace, input);
      if (!r.exists) return undefined;
      return await this.docs.sync(r.relative, r.absolute, signal);
    } catch {
      // No usable server (LspUnavailableError): nothing to say. A server that fails must not
      // fail the write it follows either; `lsp status` shows its state.
      return undefined;
    }
  }

  private hasPublish(doc: SyncedDocument): boolean {
    return serverUris(doc).some((u) => doc.served.client.diagnosticsOf(u));
  }

  private async current(doc: SyncedDocument): Promise<ShownDiagnostic[]> {
    const items: Array<{ uri: string; diagnostic: Diagnostic }> = [];
    // Only documents still open: a late publish for cells of an earlier version is stale.
    for (const uri of serverUris(doc).filter((u) => doc.served.client.isOpen(u)))
      for (const diagnostic of doc.served.client.diagnosticsOf(uri)?.diagnostics ?? []) items.push({ uri, diagnostic });
    // Hints ("not accessed", unreachable code) are editor shading, not problems: never folded in.
    return (await describeDiagnostics(this.docs, items))
      .filter((d) => d.severity !== 'hint')
      .map((d) => ({ ...d, key: `${d.at.path}\u0000${d.key}` }));
  }

  private journal(chatId: string): Set<string> {
    let j = this.journals.get(chatId);
    if (!j) this.journals.set(chatId, (j = new Set()));
    return j;
  }

  private mute(chatId: string, list: readonly ShownDiagnostic[]): void {
    const j = this.journal(chatId);
    for (const d of list) j.add(d.key);
  }

  /** The diagnostics of `list` not in the journal (then recorded there). */
  private take(chatId: string, list: readonly ShownDiagnostic[]): ShownDiagnostic[] {
    const j = this.journal(chatId);
    const out: ShownDiagnostic[] = [];
    for (const d of list) {
      if (j.has(d.key)) continue;
      j.add(d.key);
      out.push(d);
    }
    return out;
  }

  /** Watches the file's documents for publishes after this result (one watch per chat and file). */
  private watch(chatId: string, doc: SyncedDocument): void {
    const id = `${chatId}\u0000${doc.absolute}`;
    this.watches.get(id)?.dispose();
    const uris = new Set(serverUris(doc));
    const sub = doc.served.client.onDiagnostics((p) => {
      if (!uris.has(p.uri) && ![...uris].some((u) => decodeURIComponent(u) === decodeURIComponent(p.uri))) return;
      void this.current(doc).then((list) => {
        const fresh = this.take(chatId, list);
        if (fresh.length) this.late.set(chatId, [...(this.late.get(chatId) ?? []), ...fresh]);
      });
    });
    const timer = setTimeout(() => w.dispose(), LATE_WATCH_MS);
    timer.unref();
    const w: Watch = {
      dispose: () => {
        clearTimeout(timer);
        sub.dispose();
        if (this.watches.get(id) === w) this.watches.delete(id);
      }
    };
    this.watches.set(id, w);
  }

  private drainLate(chatId: string): ShownDiagnostic[] {
    const late = this.late.get(chatId) ?? [];
    this.late.delete(chatId);
    return late;
  }
}

function render(
  list: readonly ShownDiagnostic[],
  note?: string,
  heading = 'New diagnostics'
): WriteHookResult | undefined {
  if (list.length === 0) return note ? { text: `(${note})` } : undefined;
  const shown = list.slice(0, MAX_NEW_DIAGNOSTICS);
  const lines = [`${heading} (${list.length}):`, ...shown.map(formatDiagnostic)];
  if (list.length > shown.length)
    lines.push(
      `[… ${list.length - shown.length} more new diagnostics not shown; call lsp diagnostics on the file for all.]`
    );
  if (note) lines.push(`(${note})`);
  const display: LspDisplay = {
    kind: 'lsp',
    action: 'new-diagnostics',
    locations: shown.map((d) => ({
      path: d.at.path,
      line: d.at.line,
      text: d.at.text,
      note: d.message.split('\n')[0]!,
      severity: d.severity,
      ...(d.at.cell ? { cell: d.at.cell } : {})
    })),
    ...(list.length > shown.length ? { total: list.length } : {})
  };
  return { text: lines.join('\n'), display };
}
