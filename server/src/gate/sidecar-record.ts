/**
 * The record the Auto reviewer judges a call from (SIDE-1): fields the gate derives itself —
 * the tool, its tier, who calls, the canonical subjects, the parsed danger analysis, the
 * size and kind of the change, the mode, why it asks and the person's standing rules for it.
 * Never the conversation, a tool's description, or any file's or output's contents: text a
 * repository, a server or a model wrote can then only reach the reviewer as a subject the
 * policy judges anyway, so it cannot argue for itself in prose. Pure.
 */
import path from 'node:path';
import type { ApprovalPreview, ToolActor } from '@cellmate/protocol';
import type { SidecarRecord } from '../ports/gate-ports.js';
import type { PolicyRule } from '../policy/policy.js';
import { analyzeShell } from '../policy/shell-analysis.js';
import type { Judgement } from './call-subjects.js';

/** A record's lists are bounded: a call with thousands of subjects is judged on a sample and says so. */
const MAX_LIST = 40;
/** A subject longer than this is cut (`…`): the reviewer judges words, not pasted text. */
const MAX_SUBJECT_CHARS = 300;
/** How many standing rules go in (the ones for the judged tools come first). */
const MAX_RULES = 30;

/** What the gate knows about a call when it would ask. */
export interface SidecarRecordInput {
  /** The tool called (`eval`). */
  tool: string;
  /** Every judgement of the call: the tool's own, then what it also acts as (a cell's `os.system` as `shell`). */
  judgements: readonly Judgement[];
  /** The judgement that made the call ask. */
  chosen: Judgement;
  args: unknown;
  actor: ToolActor;
  mode: string;
  workspace: string;
  preview?: ApprovalPreview;
  rules: readonly PolicyRule[];
  /** Why the policy asks, in words. */
  asks: string;
}

/** Builds the record. Pure. */
export function buildSidecarRecord(input: SidecarRecordInput): SidecarRecord {
  const paths = new Set<string>();
  const commands = new Set<string>();
  const other = new Set<string>();
  for (const j of input.judgements) {
    for (const subject of j.subjects) {
      if (j.kind === 'path') paths.add(subject);
      else if (j.tool === 'shell') commands.add(subject);
      else other.add(subject);
    }
  }
  const parsed = [...commands].map((c) => analyzeShell(c));
  const hosts = new Set<string>([...commands, ...other].flatMap(hostsIn));
  for (const leaf of stringLeaves(input.args)) {
    const host = urlHost(leaf.trim());
    if (host) hosts.add(host);
  }
  const tools = new Set(input.judgements.map((j) => j.tool));
  return {
    tool: input.chosen.tool,
    ...(input.chosen.tool !== input.tool ? { calledAs: input.tool } : {}),
    tier: input.chosen.tier,
    actor: input.actor,
    mode: input.mode,
    subjects: { paths: bounded(paths), commands: bounded(commands), hosts: bounded(hosts), other: bounded(other) },
    outsideWorkspace: bounded(new Set(wordsOutside(parsed, input.workspace))),
    danger: {
      commands: parsed
        .flatMap((a) => a.commands)
        .slice(0, MAX_LIST)
        .map((c) => ({
          name: c.dynamicName ? '(computed at run time)' : c.name,
          args: c.args.slice(0, MAX_LIST).map((w) => cut(w.literal ? w.value : w.source)),
          ...(c.via.length > 0 ? { via: c.via } : {})
        })),
      unparsed: parsed.some((a) => a.unparsed),
      processCalls: input.judgements
        .filter((j) => j.tool !== input.tool)
        .map((j) => ({ tool: j.tool, subjects: bounded(new Set(j.subjects)) }))
    },
    change: input.preview ? changeOf(input.preview) : null,
    asks: cut(input.asks),
    rules: standingRules(input.rules, tools)
  };
}

/**
 * The literal command words of a call's shell judgements that name places outside the
 * workspace (`/etc`, `~/x`, `../..`): the record's `outsideWorkspace`, and what keeps an
 * untrusted workspace's call from the Auto reviewer.
 */
export function outsideWorkspaceWords(judgements: readonly Judgement[], workspace: string): string[] {
  const commands = new Set(
    judgements.filter((j) => j.kind !== 'path' && j.tool === 'shell').flatMap((j) => j.subjects)
  );
  return [
    ...new Set(
      wordsOutside(
        [...commands].map((c) => analyzeShell(c)),
        workspace
      )
    )
  ];
}

function wordsOutside(parsed: ReadonlyArray<ReturnType<typeof analyzeShell>>, workspace: string): string[] {
  const words = parsed.flatMap((a) => a.commands.flatMap((c) => [...c.args, ...c.redirects.map((r) => r.target)]));
  return words
    .filter((w) => w.literal)
    .map((w) => w.value)
    .filter((w) => isOutside(workspace, w));
}

/** The size and kind of a previewed change: files, lines and cells — counted, never quoted. */
function changeOf(preview: ApprovalPreview): NonNullable<SidecarRecord['change']> {
  const change = {
    files: [] as string[],
    linesAdded: 0,
    linesRemoved: 0,
    cellsAdded: 0,
    cellsRemoved: 0,
    cellsChanged: 0
  };
  const count = (diff: string | undefined): void => {
    for (const line of (diff ?? '').split('\n')) {
      if (line.startsWith('+') && !line.startsWith('+++')) change.linesAdded += 1;
      else if (line.startsWith('-') && !line.startsWith('---')) change.linesRemoved += 1;
    }
  };
  for (const file of preview.files) {
    if (change.files.length < MAX_LIST) change.files.push(cut(file.path));
    count(file.diff);
    for (const cell of file.cells ?? []) {
      count(cell.diff);
      if (/inserted|added/.test(cell.note ?? '')) change.cellsAdded += 1;
      else if (/deleted|removed/.test(cell.note ?? '')) change.cellsRemoved += 1;
      else change.cellsChanged += 1;
    }
  }
  return change;
}

/** The person's rules, in words, those for the judged tools (and `*`) first, the last-matching order kept. */
function standingRules(rules: readonly PolicyRule[], tools: ReadonlySet<string>): string[] {
  const words = (r: PolicyRule): string => `${r.action} ${r.tool} ${cut(r.pattern)}`;
  const relevant = rules.filter((r) => tools.has(r.tool) || r.tool === '*');
  return [...new Set(relevant.map(words))].slice(0, MAX_RULES);
}

/** Whether a literal command word names a place outside the workspace (`/etc`, `~/x`, `../..`). */
function isOutside(workspace: string, word: string): boolean {
  if (word.startsWith('~')) return true;
  if (!word.startsWith('/') && !word.split('/').includes('..')) return false;
  const resolved = path.resolve(workspace, word);
  const relative = path.relative(workspace, resolved);
  return relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative);
}

function hostsIn(text: string): string[] {
  return [...text.matchAll(/\b[a-z][a-z0-9+.-]*:\/\/[^\s'"`<>]+/gi)]
    .map((m) => urlHost(m[0]))
    .filter((h): h is string => h !== undefined);
}

function urlHost(text: string): string | undefined {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text) || /\s/.test(text)) return undefined;
  try {
    const host = new URL(text).hostname;
    return host || undefined;
  } catch {
    return undefined;
  }
}

/** String values anywhere in the arguments (bounded), for whole-URL arguments. */
function stringLeaves(value: unknown, out: string[] = [], depth = 0): string[] {
  if (out.length >= MAX_LIST || depth > 4) return out;
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringLeaves(v, out, depth + 1);
  else if (typeof value === 'object' && value !== null)
    for (const v of Object.values(value)) stringLeaves(v, out, depth + 1);
  return out;
}

function bounded(values: ReadonlySet<string>): string[] {
  return [...values].slice(0, MAX_LIST).map(cut);
}

function cut(text: string): string {
  return text.length > MAX_SUBJECT_CHARS ? `${text.slice(0, MAX_SUBJECT_CHARS)}…` : text;
}
