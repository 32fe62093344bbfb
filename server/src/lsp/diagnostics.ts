/**
 * Diagnostics of synced documents: after a sync, asking a server that offers pull
 * diagnostics (LSP 3.17) for them, or else waiting for its publish (briefly, then a short
 * quiet period for servers that publish in several passes); and the one text shape every
 * diagnostic is shown in (`path:line [error] message (code)` plus the line).
 */
import type { Diagnostic } from 'vscode-languageserver-protocol';
import type { DescribedLocation, DocumentSync, SyncedDocument } from './documents.js';
import { normalizeUri, type LspClient, type PublishedDiagnostics } from './lsp-client.js';
import { DIAGNOSTICS_WAIT_MS } from './lsp-service.js';

export { DIAGNOSTICS_WAIT_MS };

/** After a publish, further publishes for the same documents within this are waited for too (push servers only). */
export const DIAGNOSTICS_QUIET_MS = 200;

/** The server documents of a synced file (one per code cell for native notebooks). */
export function serverUris(doc: SyncedDocument): string[] {
  return doc.kind === 'text' ? [doc.uri] : doc.view.cells.map((c) => c.uri);
}

/**
 * Resolves once every uri has current diagnostics, or when `waitMs` passes (then
 * `complete: false`). Text documents of a server with pull diagnostics are asked for: the
 * answer is for the text synced before, complete as it stands; a pull still running at the deadline
 * records its answer when it comes (the late-publish watch sees it). Otherwise each uri
 * needs a publish with a sequence above `since` (and, when the server says which version it
 * checked, a version of at least `minVersion` — a publish for the text before the change
 * does not count), then no further publish for `quietMs`.
 */
export function waitForPublish(
  client: LspClient,
  uris: readonly string[],
  since: number,
  signal?: AbortSignal,
  waitMs = DIAGNOSTICS_WAIT_MS,
  quietMs = DIAGNOSTICS_QUIET_MS,
  minVersion = 0
): Promise<{ complete: boolean }> {
  if (uris.length > 0 && uris.every((u) => client.pullsFor(u))) return waitForPull(client, uris, signal, waitMs);
  const wanted = new Set(uris.map(normalizeUri));
  const seen = new Set<string>();
  const counts = (p: PublishedDiagnostics | undefined): boolean =>
    !!p && p.sequence > since && (p.version === undefined || p.version >= minVersion);
  for (const u of wanted) if (counts(client.diagnosticsOf(u))) seen.add(u);
  return new Promise((resolve) => {
    let quiet: NodeJS.Timeout | undefined;
    const finish = (complete: boolean): void => {
      clearTimeout(quiet);
      clearTimeout(deadline);
      sub.dispose();
      signal?.removeEventListener('abort', onAbort);
      resolve({ complete });
    };
    const armQuiet = (): void => {
      clearTimeout(quiet);
      quiet = setTimeout(() => finish(true), quietMs);
    };
    const sub = client.onDiagnostics((p) => {
      const u = normalizeUri(p.uri);
      if (!wanted.has(u) || !counts(p)) return;
      seen.add(u);
      // Native notebooks: the server may publish only for the cells that have something.
      if (seen.size === wanted.size || wanted.size > 1) armQuiet();
    });
    const onAbort = (): void => finish(false);
    signal?.addEventListener('abort', onAbort, { once: true });
    const deadline = setTimeout(() => finish(seen.size === wanted.size), waitMs);
    if (seen.size === wanted.size && wanted.size > 0) armQuiet();
  });
}

function waitForPull(
  client: LspClient,
  uris: readonly string[],
  signal: AbortSignal | undefined,
  waitMs: number
): Promise<{ complete: boolean }> {
  return new Promise((resolve) => {
    const finish = (complete: boolean): void => {
      clearTimeout(deadline);
      signal?.removeEventListener('abort', onAbort);
      resolve({ complete });
    };
    const onAbort = (): void => finish(false);
    signal?.addEventListener('abort', onAbort, { once: true });
    const deadline = setTimeout(() => finish(false), waitMs);
    // Not cancelled by the deadline: a late answer still lands in the client's record.
    void Promise.all(uris.map((u) => client.pull(u))).then(
      () => finish(true),
      () => finish(false)
    );
  });
}

/** {@link waitForPublish} for a document just synced: publishes after its sync, for its version. */
export function waitForDocument(
  doc: SyncedDocument,
  signal?: AbortSignal,
  waitMs = doc.waitMs,
  quietMs = DIAGNOSTICS_QUIET_MS
): Promise<{ complete: boolean }> {
  return waitForPublish(doc.served.client, serverUris(doc), doc.sequenceBefore, signal, waitMs, quietMs, doc.version);
}

/** The diagnostics a file has now, as the server last published them. */
export function currentDiagnostics(doc: SyncedDocument): Array<{ uri: string; diagnostic: Diagnostic }> {
  return serverUris(doc).flatMap((uri) =>
    (doc.served.client.diagnosticsOf(uri)?.diagnostics ?? []).map((diagnostic) => ({ uri, diagnostic }))
  );
}

const SEVERITY = ['', 'error', 'warning', 'info', 'hint'] as const;

/** `error`, `warning`, `info` or `hint` (unset counts as error, as LSP says clients may assume). */
export function severityName(d: Pick<Diagnostic, 'severity'>): 'error' | 'warning' | 'info' | 'hint' {
  return (SEVERITY[d.severity ?? 1] || 'error') as 'error' | 'warning' | 'info' | 'hint';
}

/** The journal key of a diagnostic (WDIAG-2): severity, code, message — never position. */
export function diagnosticKey(d: Pick<Diagnostic, 'severity' | 'code' | 'message'>): string {
  return `${severityName(d)}\u0000${d.code ?? ''}\u0000${d.message}`;
}

/** A diagnostic located for the agent. */
export interface ShownDiagnostic {
  severity: 'error' | 'warning' | 'info' | 'hint';
  code?: string;
  message: string;
  at: DescribedLocation;
  key: string;
}

/** Turns server diagnostics into {@link ShownDiagnostic}s (locations mapped back to cells). */
export async function describeDiagnostics(
  docs: DocumentSync,
  items: ReadonlyArray<{ uri: string; diagnostic: Diagnostic }>
): Promise<ShownDiagnostic[]> {
  const out: ShownDiagnostic[] = [];
  for (const { uri, diagnostic: d } of items) {
    const at = await docs.describe(uri, d.range.start.line, d.range.start.character);
    out.push({
      severity: severityName(d),
      ...(d.code !== undefined ? { code: String(d.code) } : {}),
      message: d.message,
      at,
      key: diagnosticKey(d)
    });
  }
  return out.sort(
    (a, b) =>
      a.at.path.localeCompare(b.at.path) || (a.at.cell?.index ?? 0) - (b.at.cell?.index ?? 0) || a.at.line - b.at.line
  );
}

/** One diagnostic as a line (plus its source line). */
export function formatDiagnostic(d: ShownDiagnostic): string {
  const first = d.message.split('\n')[0];
  return `${d.at.label} [${d.severity}] ${first}${d.code ? ` (${d.code})` : ''}${d.at.text ? `\n    ${d.at.text}` : ''}`;
}
