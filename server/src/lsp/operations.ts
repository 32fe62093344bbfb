/**
 * The `lsp` tool's actions (LSP-3/4) over synced documents: navigation by line + symbol,
 * hover, symbols, code actions, diagnostics, with the result caps and an explicit
 * truncation line past them. Returns text for the model plus the locations for the card.
 */
import type {
  CodeAction,
  Command,
  Diagnostic,
  DocumentSymbol,
  Hover,
  Location,
  LocationLink,
  MarkedString,
  MarkupContent,
  SymbolInformation,
  WorkspaceSymbol
} from 'vscode-languageserver-protocol';
import { ToolInputError } from '../base/tool-errors.js';
import {
  currentDiagnostics,
  describeDiagnostics,
  formatDiagnostic,
  serverUris,
  waitForDocument,
  waitForPublish
} from './diagnostics.js';
import type { DescribedLocation, DocumentSync, SyncedDocument } from './documents.js';
import { locateSymbol, parseSymbol } from './positions.js';
import { withheldLine, type LocationGate } from './location-gate.js';

const parseSymbolText = (symbol: string): string => parseSymbol(symbol).text;

/** Result caps (LSP-4). */
export const LSP_CAPS = {
  references: 50,
  workspaceSymbols: 100,
  documentSymbols: 200,
  diagnostics: 200,
  locations: 50,
  codeActions: 50
} as const;

/** A location shown on the card (clickable). */
export interface CardLocation {
  path: string;
  line: number;
  cell?: { index: number; id: string };
  text: string;
  /** What it is (`definition`, a symbol's name and kind, a diagnostic's severity). */
  note?: string;
}

/** What an action returns. */
export interface ActionResult {
  title: string;
  output: string;
  locations: CardLocation[];
}

/** Where a navigation call points. */
export interface PositionArgs {
  line: number;
  symbol: string;
  /** Notebooks: the cell (id, or `#N` counting from 1). */
  cell?: string;
}

/** The server position of line + symbol (+ cell) in a synced document. */
export function serverPosition(
  doc: SyncedDocument,
  args: PositionArgs
): { uri: string; position: { line: number; character: number } } {
  if (doc.kind === 'text') {
    const p = locateSymbol(doc.text.split('\n'), args.line, args.symbol, doc.relative);
    return { uri: doc.uri, position: { line: p.line - 1, character: p.character } };
  }
  if (!args.cell)
    throw new ToolInputError(
      `${doc.relative} is a notebook: give "cell" (a cell id from notebook_read, or "#N" for the N-th cell) with line and symbol.`
    );
  const index = cellIndex(doc, args.cell);
  const cell = doc.view.source[index]!;
  if (cell.cellType !== 'code')
    throw new ToolInputError(
      `cell ${args.cell} of ${doc.relative} is a ${cell.cellType} cell; language servers only see code cells.`
    );
  const p = locateSymbol(
    cell.source.split('\n'),
    args.line,
    args.symbol,
    `${doc.relative} cell ${index + 1} (id ${cell.id})`
  );
  const s = doc.view.toServer(index, p.line, p.character);
  return { uri: s.uri, position: { line: s.line, character: s.character } };
}

function cellIndex(doc: Extract<SyncedDocument, { kind: 'notebook' }>, ref: string): number {
  const byId = doc.view.source.findIndex((c) => c.id === ref);
  if (byId >= 0) return byId;
  const m = /^#?(\d+)$/.exec(ref);
  if (m && Number(m[1]) >= 1 && Number(m[1]) <= doc.view.source.length) return Number(m[1]) - 1;
  throw new ToolInputError(
    `No cell "${ref}" in ${doc.relative} (${doc.view.source.length} cells); use an id from notebook_read or "#N".`
  );
}

type NavKind = 'definition' | 'type_definition' | 'implementation' | 'references';
const NAV_METHOD: Record<NavKind, string> = {
  definition: 'textDocument/definition',
  type_definition: 'textDocument/typeDefinition',
  implementation: 'textDocument/implementation',
  references: 'textDocument/references'
};

/** definition / type_definition / implementation / references. */
export async function navigate(
  docs: DocumentSync,
  doc: SyncedDocument,
  kind: NavKind,
  args: PositionArgs,
  gate: LocationGate,
  signal: AbortSignal
): Promise<ActionResult> {
  const { points } = await locate(doc, NAV_METHOD[kind], args, signal);
  const cap = kind === 'references' ? LSP_CAPS.references : LSP_CAPS.locations;
  const { shown: visible, withheld } = await gated(docs, points, gate);
  const described = await Promise.all(visible.map((p) => docs.describe(p.uri, p.line, p.character)));
  const unique = dedupe(described);
  const noun = kind === 'references' ? 'reference' : kind.replace('_', ' ');
  const head = `${unique.length} ${noun}${unique.length === 1 ? '' : 's'} of "${args.symbol}" (${doc.relative}${args.cell ? ` cell ${args.cell}` : ''} line ${args.line})`;
  if (unique.length === 0)
    return {
      title: `lsp ${kind}: none`,
      output: [
        `No ${noun} found for "${args.symbol}" at ${doc.relative} line ${args.line}.`,
        ...withheldLine(withheld)
      ].join('\n'),
      locations: []
    };
  const shown = unique.slice(0, cap);
  return {
    title: `lsp ${kind}: ${unique.length} for ${args.symbol}`,
    output: [
      head + ':',
      ...shown.map(lineOf),
      ...truncation(unique.length, cap, kind === 'references' ? 'references' : 'locations'),
      ...withheldLine(withheld)
    ].join('\n'),
    locations: shown.map(toCard)
  };
}

/** A server location, before it is described. */
interface Point {
  uri: string;
  line: number;
  character: number;
}

/** Asks a location request (definition, references…) at line + symbol; the answer as points. */
async function locate(
  doc: SyncedDocument,
  method: string,
  args: PositionArgs,
  signal: AbortSignal
): Promise<{ points: Point[] }> {
  const at = serverPosition(doc, args);
  const params = {
    textDocument: { uri: at.uri },
    position: at.position,
    ...(method === 'textDocument/references' ? { context: { includeDeclaration: true } } : {})
  };
  const raw = await doc.served.client.request<Location | Location[] | LocationLink[] | null>(method, params, signal);
  const list = raw === null ? [] : Array.isArray(raw) ? raw : [raw];
  return {
    points: list.map((l) => {
      const start = 'targetUri' in l ? (l.targetSelectionRange ?? l.targetRange).start : l.range.start;
      return { uri: 'targetUri' in l ? l.targetUri : l.uri, line: start.line, character: start.character };
    })
  };
}

/** Splits points into those the gate shows and a count of those it withholds (judged per file, before any is read). */
async function gated<T extends { uri: string }>(
  docs: DocumentSync,
  points: readonly T[],
  gate: LocationGate
): Promise<{ shown: T[]; withheld: number }> {
  const verdicts = new Map<string, boolean>();
  const shown: T[] = [];
  let withheld = 0;
  for (const p of points) {
    const file = docs.fileOf(p.uri);
    let ok = file === undefined ? false : verdicts.get(file);
    if (ok === undefined) {
      ok = (await gate(file!)) === 'show';
      verdicts.set(file!, ok);
    }
    if (ok) shown.push(p);
    else withheld++;
  }
  return { shown, withheld };
}

/** hover: the signature and doc comment. */
export async function hover(
  docs: DocumentSync,
  doc: SyncedDocument,
  args: PositionArgs,
  gate: LocationGate,
  signal: AbortSignal
): Promise<ActionResult> {
  const at = serverPosition(doc, args);
  const h = await doc.served.client.request<Hover | null>(
    'textDocument/hover',
    { textDocument: { uri: at.uri }, position: at.position },
    signal
  );
  const text = h ? hoverText(h.contents).trim() : '';
  // Hover text quotes where the symbol is defined (its value's type, its docstring): it is
  // shown only when every definition it could come from may be shown (or is a library's).
  if (text) {
    const sources: Point[] = [];
    for (const method of ['textDocument/definition', 'textDocument/typeDefinition']) {
      sources.push(...(await locate(doc, method, args, signal).catch(() => ({ points: [] as Point[] }))).points);
    }
    for (const p of sources) {
      const file = docs.fileOf(p.uri);
      if (file === undefined || (await gate(file)) === 'withhold') {
        return {
          title: `lsp hover: ${args.symbol} (withheld)`,
          output: `Hover for "${args.symbol}" withheld: it is defined in a file outside the workspace or not allowed to this tool by the policy.`,
          locations: []
        };
      }
    }
  }
  return {
    title: `lsp hover: ${args.symbol}`,
    output: text || `No hover information for "${args.symbol}" at ${doc.relative} line ${args.line}.`,
    locations: []
  };
}

function hoverText(c: Hover['contents']): string {
  const one = (m: MarkedString | MarkupContent): string =>
    typeof m === 'string' ? m : 'kind' in m ? m.value : '```' + m.language + '\n' + m.value + '\n```';
  return Array.isArray(c) ? c.map(one).join('\n\n') : one(c);
}

const SYMBOL_KINDS = [
  '',
  'file',
  'module',
  'namespace',
  'package',
  'class',
  'method',
  'property',
  'field',
  'constructor',
  'enum',
  'interface',
  'function',
  'variable',
  'constant',
  'string',
  'number',
  'boolean',
  'array',
  'object',
  'key',
  'null',
  'enum member',
  'struct',
  'event',
  'operator',
  'type parameter'
];

/** symbols: document symbols of `doc` (≤ 200), or workspace symbols matching `query` (≤ 100). */
export async function symbols(
  docs: DocumentSync,
  doc: SyncedDocument,
  query: string | undefined,
  gate: LocationGate,
  signal: AbortSignal
): Promise<ActionResult> {
  const client = doc.served.client;
  if (query !== undefined) {
    const all =
      (await client.request<Array<SymbolInformation | WorkspaceSymbol> | null>(
        'workspace/symbol',
        { query },
        signal
      )) ?? [];
    const { shown: raw, withheld } = await gated(
      docs,
      all.map((s) => ({ ...s, uri: s.location.uri })),
      gate
    );
    const found: CardLocation[] = [];
    for (const s of raw) {
      if (!('range' in s.location)) continue;
      const at = await docs.describe(s.location.uri, s.location.range.start.line, s.location.range.start.character);
      found.push({
        ...toCard(at),
        note: `${SYMBOL_KINDS[s.kind] ?? 'symbol'} ${s.containerName ? `${s.containerName}.` : ''}${s.name}`
      });
    }
    const shown = found.slice(0, LSP_CAPS.workspaceSymbols);
    return {
      title: `lsp symbols: ${found.length} for "${query}"`,
      output: [
        ...(found.length
          ? [
              `${found.length} workspace symbol${found.length === 1 ? '' : 's'} matching "${query}":`,
              ...shown.map((l) => `${l.note} — ${labelOf(l)}  ${l.text}`),
              ...truncation(found.length, LSP_CAPS.workspaceSymbols, 'symbols')
            ]
          : [`No workspace symbol matches "${query}".`]),
        ...withheldLine(withheld, 'symbol')
      ].join('\n'),
      locations: shown
    };
  }
  const uris = serverUris(doc);
  const found: CardLocation[] = [];
  let withheld = 0;
  for (const uri of uris) {
    const raw =
      (await client.request<Array<DocumentSymbol | SymbolInformation> | null>(
        'textDocument/documentSymbol',
        { textDocument: { uri } },
        signal
      )) ?? [];
    const walk = async (s: DocumentSymbol | SymbolInformation, depth: number, container: string): Promise<void> => {
      const start = 'selectionRange' in s ? s.selectionRange.start : s.location.range.start;
      const where = 'location' in s ? s.location.uri : uri;
      if (where !== uri && (await gated(docs, [{ uri: where }], gate)).withheld) {
        withheld++;
        return;
      }
      const at = await docs.describe(where, start.line, start.character);
      found.push({
        ...toCard(at),
        note: `${'  '.repeat(depth)}${SYMBOL_KINDS[s.kind] ?? 'symbol'} ${container}${s.name}`
      });
      if ('children' in s && s.children) for (const c of s.children) await walk(c, depth + 1, '');
    };
    for (const s of raw) await walk(s, 0, '');
  }
  const shown = found.slice(0, LSP_CAPS.documentSymbols);
  return {
    title: `lsp symbols: ${doc.relative} (${found.length})`,
    output: [
      ...(found.length
        ? [
            `${found.length} symbol${found.length === 1 ? '' : 's'} in ${doc.relative}:`,
            ...shown.map((l) => `${l.note} — ${labelOf(l)}`),
            ...truncation(found.length, LSP_CAPS.documentSymbols, 'symbols')
          ]
        : [`No symbols in ${doc.relative}.`]),
      ...withheldLine(withheld, 'symbol')
    ].join('\n'),
    locations: shown
  };
}

/** What a server offers at a position, with the line's diagnostics the request carried. */
export interface OfferedActions {
  actions: Array<CodeAction | Command>;
  lineDiagnostics: Diagnostic[];
}

/** Asks the server for its code actions at `line` (+ `symbol`, `cell`): quick fixes for its diagnostics first. */
export async function requestCodeActions(
  doc: SyncedDocument,
  args: { line: number; cell?: string; symbol?: string },
  signal: AbortSignal
): Promise<OfferedActions> {
  if (doc.changed) await waitForDocument(doc, signal);
  const at = serverPosition(doc, {
    line: args.line,
    symbol: args.symbol ?? firstWord(doc, args),
    ...(args.cell ? { cell: args.cell } : {})
  });
  const lineDiagnostics: Diagnostic[] = (doc.served.client.diagnosticsOf(at.uri)?.diagnostics ?? []).filter(
    (d) => d.range.start.line <= at.position.line && d.range.end.line >= at.position.line
  );
  // The symbol's own range: servers find the node to fix at the range's start (basedpyright's auto-import does).
  const width = args.symbol ? parseSymbolText(args.symbol).length : 0;
  const range = args.symbol
    ? { start: at.position, end: { line: at.position.line, character: at.position.character + width } }
    : { start: { line: at.position.line, character: 0 }, end: { line: at.position.line + 1, character: 0 } };
  const actions =
    (await doc.served.client.request<Array<CodeAction | Command> | null>(
      'textDocument/codeAction',
      { textDocument: { uri: at.uri }, range, context: { diagnostics: lineDiagnostics, triggerKind: 1 } },
      signal
    )) ?? [];
  return { actions, lineDiagnostics };
}

/** One listed action: `N. title [kind] (preferred)`, N from 1 (what `lsp_code_action` takes). */
export function describeCodeAction(a: CodeAction | Command, i: number): string {
  return `${i + 1}. ${a.title}${'kind' in a && a.kind ? ` [${a.kind}]` : ''}${'isPreferred' in a && a.isPreferred ? ' (preferred)' : ''}`;
}

/** code_actions: what the server offers on a line (quick fixes for its diagnostics first). */
export async function codeActions(
  doc: SyncedDocument,
  args: { line: number; cell?: string; symbol?: string },
  signal: AbortSignal
): Promise<ActionResult> {
  const { actions: raw, lineDiagnostics } = await requestCodeActions(doc, args, signal);
  const lines = raw.slice(0, LSP_CAPS.codeActions).map(describeCodeAction);
  return {
    title: `lsp code_actions: ${raw.length}`,
    output: raw.length
      ? [
          `${raw.length} code action${raw.length === 1 ? '' : 's'} at ${doc.relative} line ${args.line}${lineDiagnostics.length ? ` (for: ${lineDiagnostics.map((d) => d.message.split('\n')[0]).join('; ')})` : ''}:`,
          ...lines,
          ...truncation(raw.length, LSP_CAPS.codeActions, 'actions'),
          'Apply one with lsp_code_action (same file/line/symbol, choice = its number).'
        ].join('\n')
      : `No code actions at ${doc.relative} line ${args.line}.`,
    locations: []
  };
}

function firstWord(doc: SyncedDocument, args: { line: number; cell?: string }): string {
  const lines =
    doc.kind === 'text'
      ? doc.text.split('\n')
      : (doc.view.source[args.cell ? cellIndex(doc, args.cell) : 0]?.source.split('\n') ?? []);
  return (
    /[\p{L}_$][\p{L}\p{N}_$]*/u.exec(lines[args.line - 1] ?? '')?.[0] ?? (lines[args.line - 1]?.trim().charAt(0) || ' ')
  );
}

/** diagnostics of one synced file (waits briefly for the server). */
export async function fileDiagnostics(
  docs: DocumentSync,
  doc: SyncedDocument,
  since: number,
  signal: AbortSignal
): Promise<{ shown: string[]; locations: CardLocation[]; total: number; complete: boolean }> {
  const wait =
    doc.changed || !serverUris(doc).some((u) => doc.served.client.diagnosticsOf(u))
      ? await waitForPublish(doc.served.client, serverUris(doc), since, signal, doc.waitMs, undefined, doc.version)
      : { complete: true };
  const all = await describeDiagnostics(docs, currentDiagnostics(doc));
  return {
    shown: all.map(formatDiagnostic),
    locations: all.map((d) => ({ ...toCard(d.at), note: d.severity })),
    total: all.length,
    complete: wait.complete
  };
}

/** Drops exact duplicates (same place, same character); two uses on one line both stay. */
function dedupe(list: DescribedLocation[]): DescribedLocation[] {
  const seen = new Set<string>();
  return list.filter((l) => {
    const key = `${l.label}\u0000${l.character}`;
    return seen.has(key) ? false : (seen.add(key), true);
  });
}

function lineOf(l: DescribedLocation): string {
  return `${l.label}${l.text ? `  ${l.text}` : ''}`;
}

function labelOf(l: CardLocation): string {
  return l.cell ? `${l.path} cell ${l.cell.index + 1} (id ${l.cell.id}) line ${l.line}` : `${l.path}:${l.line}`;
}

function toCard(l: DescribedLocation): CardLocation {
  return { path: l.path, line: l.line, text: l.text, ...(l.cell ? { cell: l.cell } : {}) };
}

/** The explicit truncation line past a cap (empty when under it). */
export function truncation(total: number, cap: number, noun: string): string[] {
  return total > cap
    ? [`[… ${total - cap} more ${noun} not shown: ${total} in all, the first ${cap} are listed. Narrow the request.]`]
    : [];
}
