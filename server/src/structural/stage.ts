/**
 * Staging a structural rewrite (SPEC EDIT-1): every op's matches (one search per op, the
 * file texts read once and kept as the staging snapshot), replacements planned per
 * document with overlaps reported (`replacements.ts`), new texts (a notebook's: new cell
 * sources; `resolve` splices them in through `server/src/edits/`) and the diff a person
 * reviews. Writes nothing.
 */
import { astGrep } from './ast-languages.js';
import { unifiedDiff } from '../edits/unified-diff.js';
import type { DiffFileChange } from '@cellmate/protocol';
import { ToolInputError } from '../base/tool-errors.js';
import { placeLabel, type SourceDocument } from './documents.js';
import { firstProblem } from './ladder.js';
import { napiLanguage, type StructuralLanguage } from './languages.js';
import { neutraliseMagics, touchesMagic } from '../notebooks/magics.js';
import {
  applyReplacements,
  checkTemplate,
  planReplacements,
  type Replacement,
  type RewriteSite
} from './replacements.js';
import { structuralSearch, type SearchResult } from './search.js';
import type { StagedFile } from './staged-edits.js';

/** One `{pattern, rewrite}`. */
export interface RewriteOp {
  pattern: string;
  rewrite: string;
}

/** Where and how to stage. */
export interface StageScope {
  workspace: string;
  path: string;
  language?: StructuralLanguage;
  signal: AbortSignal;
  allowed?(relative: string): boolean;
}

/** One replaced site, for the model's summary. */
export interface StagedSite {
  place: string;
  line: number;
  before: string;
  after: string;
}

/** What staging found. */
export interface StagePlan {
  files: StagedFile[];
  sites: StagedSite[];
  replacements: number;
  /** Matches not rewritten because they touch IPython magics. */
  skippedMagic: number;
  /** Sites whose rewritten document no longer parses (`place line N: complaint`). */
  brokenAfter: string[];
  searches: SearchResult[];
  diff: DiffFileChange[];
}

/** Matches one op may rewrite: an edit past it is refused, never staged in part. */
export const MAX_EDIT_SITES = 20_000;

/** Plans the ops; throws `OverlapError`, `UnparseablePatternError` or a `ToolInputError`. */
export async function planStructuralEdit(ops: readonly RewriteOp[], scope: StageScope): Promise<StagePlan> {
  ops.forEach((op, i) => checkTemplate(op.rewrite, op.pattern, i));
  const texts = new Map<string, string>();
  const byDoc = new Map<string, { doc: SourceDocument; sites: RewriteSite[] }>();
  const searches: SearchResult[] = [];
  let skippedMagic = 0;
  for (const [i, op] of ops.entries()) {
    const result = await structuralSearch(op.pattern, { ...scope, keepTexts: true, maxMatches: MAX_EDIT_SITES });
    if (result.truncated) {
      throw new ToolInputError(
        `${ops.length > 1 ? `Op ${i + 1}'s pattern` : 'The pattern'} matches more than ${MAX_EDIT_SITES.toLocaleString('en-US')} sites, the most one edit stages: nothing was staged. Narrow \`path\` or the pattern (ast_grep shows where it matches).`
      );
    }
    searches.push(result);
    for (const [file, text] of result.texts) {
      const seen = texts.get(file);
      if (seen !== undefined && seen !== text)
        throw new ToolInputError(`${file} changed while the edit was being staged; run ast_edit again.`);
      texts.set(file, text);
    }
    for (const match of result.matches) {
      if (match.doc.magic && touchesMagic(match.doc.magic, match.start, match.end)) {
        skippedMagic++;
        continue;
      }
      const key = `${match.doc.file}\u0000${match.doc.cell?.index ?? -1}`;
      let entry = byDoc.get(key);
      if (!entry) byDoc.set(key, (entry = { doc: match.doc, sites: [] }));
      entry.sites.push({ op: i, match, template: op.rewrite });
    }
  }
  const perFile = new Map<string, Array<{ doc: SourceDocument; replacements: Replacement[]; after: string }>>();
  for (const { doc, sites } of byDoc.values()) {
    const replacements = planReplacements(sites).filter((r) => r.after !== r.before);
    if (replacements.length === 0) continue;
    const list = perFile.get(doc.file) ?? [];
    list.push({ doc, replacements, after: applyReplacements(doc.source, replacements) });
    perFile.set(doc.file, list);
  }
  const files: StagedFile[] = [];
  const sites: StagedSite[] = [];
  const brokenAfter: string[] = [];
  const diff: DiffFileChange[] = [];
  let replacements = 0;
  for (const file of [...perFile.keys()].sort()) {
    const docs = perFile.get(file)!.sort((a, b) => (a.doc.cell?.index ?? -1) - (b.doc.cell?.index ?? -1));
    const expected = texts.get(file)!;
    for (const d of docs) {
      replacements += d.replacements.length;
      for (const r of d.replacements)
        sites.push({ place: placeLabel(d.doc), line: r.line, before: r.before, after: r.after });
      const parsed = d.doc.magic ? neutraliseMagics(d.after).code : d.after;
      const problem = firstProblem(astGrep().parse(napiLanguage(d.doc.language), parsed).root());
      if (problem) brokenAfter.push(`${placeLabel(d.doc)}: ${problem}`);
    }
    if (docs[0]!.doc.cell) {
      const cells = docs.map((d) => ({ ...d.doc.cell!, before: d.doc.source, after: d.after }));
      files.push({ path: file, expected, cells });
      diff.push({
        path: file,
        cells: cells.map((c) => ({
          index: c.index,
          ...(c.id ? { id: c.id } : {}),
          diff: unifiedDiff(c.before, c.after)
        }))
      });
    } else {
      files.push({ path: file, expected, next: docs[0]!.after });
      diff.push({ path: file, diff: unifiedDiff(expected, docs[0]!.after) });
    }
  }
  return { files, sites, replacements, skippedMagic, brokenAfter, searches, diff };
}

export { unifiedDiff };
