import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { CHAT_PREFIX_SEPARATOR, noteSavedOutput } from '../housekeeping/saved-outputs.js';
import path from 'node:path';
import { splitLines } from '../base/lines.js';
import { ToolInputError } from '../base/tool-errors.js';

/**
 * Output shaping: the one place a tool result is made shorter (SPEC HARN-2/3/4). Every
 * cut says what it cut and how to get the rest; nothing is dropped silently. Three forms:
 *
 * - {@link page}: a window of numbered entries (lines, matches, paths, cells) with a last
 *   line saying which ones are shown and which call continues — for every tool that takes
 *   `offset`/`limit` (`read`, `grep`, `glob`, `notebook_read`). They declare
 *   `outputShaping: 'paged'`, and the registry leaves their result alone: a page is never
 *   shaped a second time. Offsets count from 1 everywhere.
 * - {@link cut}: one piece of text (a long line, a notebook output, a mention's file head)
 *   kept to a character budget, ending in a marker naming the call that shows the rest.
 * - {@link shapeOutput}: any other result longer than {@link OUTPUT_LIMITS} (200 lines or
 *   10,000 characters) reaches the model as its first 50 and last 50 lines with one
 *   omission line between them; the full text is saved under `<workspace>/.cellmate/outputs/`
 *   and the omission line names that file and how to read the omitted part with `read`.
 *   The registry wrapper applies it to every result of a tool that does not page.
 */
export const OUTPUT_LIMITS = {
  /** Above this many lines the output is shaped. */
  maxLines: 200,
  /** Above this many characters the output is shaped. */
  maxChars: 10_000,
  headLines: 50,
  tailLines: 50,
  /**
   * Character budget for each of head and tail: 50 lines of a minified file could still
   * be megabytes, so head/tail lines are also cut at this many characters (explicitly).
   */
  sectionChars: 4_000
} as const;

/** Folder (workspace-relative) where full outputs are saved. */
export const OUTPUTS_DIR = '.cellmate/outputs';

export interface ShapeLimits {
  maxLines: number;
  maxChars: number;
  headLines: number;
  tailLines: number;
  sectionChars: number;
}

/** The pure part of shaping: what to keep, before anything is written. */
export interface ShapePlan {
  /** False when the text is within limits and goes to the model unchanged. */
  truncated: boolean;
  head: string[];
  tail: string[];
  totalLines: number;
  totalChars: number;
  /** 1-based line numbers of the first and last omitted line (when truncated). */
  omittedFrom: number;
  omittedTo: number;
  /** True when a head/tail line was itself cut by the section character budget. */
  linesCut: boolean;
}

/** The result of {@link shapeOutput}. */
export interface ShapedOutput {
  /** What the model receives. */
  output: string;
  truncated: boolean;
  totalLines: number;
  totalChars: number;
  /** Workspace-relative path of the saved full output (when truncated). */
  savedPath?: string;
}

export interface ShapeOptions {
  /** Absolute workspace root; the full output is saved under its `.cellmate/outputs/`. */
  workspace: string;
  /** Tool name, used in the saved file's name (e.g. `shell-20261129T203001-ab12cd.txt`). */
  toolName: string;
  /** The chat the call belongs to: the saved file is named after it and removed with it. */
  chatId?: string;
  limits?: Partial<ShapeLimits>;
}

/** Decides what to keep (pure; no I/O). */
export function planShape(text: string, limits: Partial<ShapeLimits> = {}): ShapePlan {
  const l = { ...OUTPUT_LIMITS, ...limits };
  // A lone `\r` stays inside its line: a progress bar redrawn in place is one line of output.
  const lines = splitLines(text, { loneCR: 'in-line' });
  const base = { totalLines: lines.length, totalChars: text.length, omittedFrom: 0, omittedTo: 0, linesCut: false };
  if (lines.length <= l.maxLines && text.length <= l.maxChars) {
    return { truncated: false, head: lines, tail: [], ...base };
  }
  let headCount = Math.min(l.headLines, lines.length);
  let tailCount = Math.min(l.tailLines, lines.length - headCount);
  // Few but very long lines (over maxChars, under maxLines): keep fewer whole lines so
  // there is always something omitted in the middle to point the model at.
  if (headCount + tailCount >= lines.length) {
    headCount = Math.max(1, Math.ceil(lines.length / 2) - (lines.length > 2 ? 1 : 0));
    tailCount = Math.max(0, lines.length - headCount - 1);
    if (lines.length <= 2) tailCount = lines.length - headCount;
  }
  let linesCut = false;
  const fit = (section: string[]): string[] => {
    let budget = l.sectionChars;
    return section.map((line) => {
      if (budget <= 0) {
        linesCut = true;
        return `[line cut: ${line.length} characters]`;
      }
      if (line.length > budget) {
        linesCut = true;
        const kept = line.slice(0, budget);
        budget = 0;
        return `${kept}… [line cut: ${line.length} characters]`;
      }
      budget -= line.length + 1;
      return line;
    });
  };
  const head = fit(lines.slice(0, headCount));
  const tail = fit(lines.slice(lines.length - tailCount));
  return {
    ...base,
    truncated: true,
    head,
    tail,
    omittedFrom: headCount + 1,
    omittedTo: lines.length - tailCount,
    linesCut
  };
}

/** The omission line between head and tail (exported for tests and the eval cards). */
export function omissionLine(plan: ShapePlan, savedPath: string | undefined): string {
  const omitted = plan.omittedTo - plan.omittedFrom + 1;
  const what =
    omitted > 0
      ? `${omitted} lines omitted (lines ${plan.omittedFrom}–${plan.omittedTo} of ${plan.totalLines}, ${plan.totalChars} characters in all)`
      : `output cut (${plan.totalLines} lines, ${plan.totalChars} characters in all)`;
  const cut = plan.linesCut ? '; some long lines shown here were cut' : '';
  if (!savedPath) return `… [${what}${cut}; the full output could not be saved] …`;
  const offset = omitted > 0 ? plan.omittedFrom : 1;
  return `… [${what}${cut}. Full output saved to ${savedPath} — call read with {"path": "${savedPath}", "offset": ${offset}} to see the omitted part] …`;
}

/**
 * Shapes one tool output for the model; when it is too long, saves the full text under
 * `<workspace>/.cellmate/outputs/` first. Never throws for a save failure (the omission
 * line says the file could not be saved).
 */
export async function shapeOutput(text: string, options: ShapeOptions): Promise<ShapedOutput> {
  const plan = planShape(text, options.limits);
  if (!plan.truncated) {
    return { output: text, truncated: false, totalLines: plan.totalLines, totalChars: plan.totalChars };
  }
  let savedPath: string | undefined;
  try {
    savedPath = await saveFullOutput(options.workspace, options.toolName, text, options.chatId);
  } catch {
    savedPath = undefined;
  }
  const output = [...plan.head, omissionLine(plan, savedPath), ...plan.tail].join('\n');
  return {
    output,
    truncated: true,
    totalLines: plan.totalLines,
    totalChars: plan.totalChars,
    ...(savedPath ? { savedPath } : {})
  };
}

/**
 * Writes the full output to a fresh file (`<chatId>--<tool>-<time>-<random>.txt`), keeps
 * the folder under its size cap (`housekeeping/saved-outputs.ts`); returns its
 * workspace-relative path.
 */
export async function saveFullOutput(
  workspace: string,
  toolName: string,
  text: string,
  chatId?: string
): Promise<string> {
  const dir = path.join(workspace, OUTPUTS_DIR);
  await mkdir(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  const safeName = toolName.replace(/[^a-z0-9_]/gi, '_').slice(0, 40) || 'tool';
  const chatPrefix = chatId && /^[A-Za-z0-9_-]{1,64}$/.test(chatId) ? `${chatId}${CHAT_PREFIX_SEPARATOR}` : '';
  const name = `${chatPrefix}${safeName}-${stamp}-${randomBytes(3).toString('hex')}.txt`;
  await writeFile(path.join(dir, name), text, { encoding: 'utf8', flag: 'wx' });
  await noteSavedOutput(dir, Buffer.byteLength(text));
  return `${OUTPUTS_DIR}/${name}`;
}

/**
 * Keeps `text` to `maxChars` characters (never splitting a surrogate pair); a longer text
 * ends in `… [cut: N of M characters not shown; <rest>]`. `rest` says how to get the rest,
 * e.g. `call read with {"path": "data.csv", "offset": 3}` (HARN-2: a cut is always explicit).
 */
export function cut(text: string, maxChars: number, rest: string): string {
  if (text.length <= maxChars) return text;
  let end = Math.max(0, maxChars);
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1; // a high surrogate: keep the pair whole
  return `${text.slice(0, end)}… [cut: ${text.length - end} of ${text.length} characters not shown; ${rest}]`;
}

/** What {@link page} shows: a window of entries, numbered from 1. */
export interface PageInput {
  /** The rendered entries from `offset` on (entries past `limit` are ignored). */
  entries: readonly string[];
  /** 1-based number of `entries[0]`. */
  offset: number;
  limit: number;
  /** How many entries there are in all. */
  total: number;
  /** Character budget for the shown entries (at least one entry is always shown). */
  maxChars: number;
  /** The entries' noun, e.g. `{ one: 'line', many: 'lines' }`. */
  noun: { one: string; many: string };
  /** The tool that continues, for the note: `call <tool> with offset=N to continue`. */
  tool: string;
  /** Extra words for the note's count, e.g. `in 3 files`. */
  scope?: string;
  /** Whether a page holding every entry still ends with a count line (grep, glob). Default false. */
  countWhenWhole?: boolean;
}

/** A page: the text to return and where it stopped. */
export interface Page {
  text: string;
  /** 1-based numbers of the first and last entry shown. */
  first: number;
  last: number;
  /** True when the character budget stopped the page before `limit`. */
  capped: boolean;
  /** The note line, when there is one. */
  note?: string;
}

/**
 * The one paging helper (HARN-3): shows entries `offset`… up to `limit` and the character
 * budget, and ends with an explicit note — `(lines 1–200 of 5000; call read with offset=201
 * to continue)` — whenever the page is not everything. Pure.
 * @throws ToolInputError when `offset` is past the last entry
 */
export function page(input: PageInput): Page {
  const { entries, offset, limit, total, maxChars, noun, tool } = input;
  if (total > 0 && offset > total) {
    throw new ToolInputError(
      `offset ${offset} is past the end (${total} ${total === 1 ? noun.one : noun.many}). Call ${tool} with an offset between 1 and ${total}.`
    );
  }
  const shown: string[] = [];
  let used = 0;
  let capped = false;
  for (const entry of entries.slice(0, limit)) {
    if (shown.length > 0 && used + entry.length + 1 > maxChars) {
      capped = true;
      break;
    }
    shown.push(entry);
    used += entry.length + 1;
  }
  const first = offset;
  const last = offset + shown.length - 1;
  const whole = first === 1 && last >= total;
  const scope = input.scope ? ` ${input.scope}` : '';
  let note: string | undefined;
  if (!whole) {
    const cap = capped ? `; output capped at ${maxChars.toLocaleString('en-US')} characters` : '';
    const next = last < total ? `; call ${tool} with offset=${last + 1} to continue` : '';
    note = `(${noun.many} ${first}–${last} of ${total}${scope}${cap}${next})`;
  } else if (input.countWhenWhole) {
    note = `(${total} ${total === 1 ? noun.one : noun.many}${scope})`;
  }
  return {
    text: note ? [...shown, note].join('\n') : shown.join('\n'),
    first,
    last,
    capped,
    ...(note ? { note } : {})
  };
}
